import t from 'tap'
import { apiKey, buildTestApp } from '../helper.js'

t.test('a query parameter the route does not define is 400 in class-validator wording', async t => {
  const app = await buildTestApp(t)
  const typo = await app.inject({ method: 'GET', url: '/portfolios?user=1', headers: apiKey() })
  t.equal(typo.statusCode, 400)
  t.match(typo.json(), { code: 'VALIDATION_FAILED', message: ['property user should not exist'] })
  const none = await app.inject({ method: 'GET', url: '/auth/health?debug=1' })
  t.equal(none.statusCode, 400, 'a route without parameters takes none')
  t.same(none.json().message, ['property debug should not exist'])
  t.equal((await app.inject({ method: 'GET', url: '/portfolios?userId=1&limit=10&offset=0', headers: apiKey() })).statusCode, 200)
})

t.test('limit and offset are integers with integer bounds', async t => {
  const app = await buildTestApp(t)
  const cases: Array<[string, string]> = [
    ['limit=0', 'limit must not be less than 1'],
    ['limit=1001', 'limit must not be greater than 1000'],
    ['limit=1.5', 'limit must be an integer number'],
    ['limit=ten', 'limit must be an integer number'],
    ['offset=-1', 'offset must not be less than 0']
  ]
  for (const [query, message] of cases) {
    const res = await app.inject({ method: 'GET', url: `/portfolios?${query}`, headers: apiKey() })
    t.equal(res.statusCode, 400, query)
    t.same(res.json().message, [message], query)
  }
  const doc = (await app.inject({ method: 'GET', url: '/docs/json' })).json()
  const limit = doc.paths['/portfolios'].get.parameters.find((parameter: { name: string }) => parameter.name === 'limit')
  t.equal(limit.schema.type, 'integer', 'documented as an integer')
})

t.test('a DELETE or GET that declares JSON but sends no body is served as if it had none', async t => {
  const app = await buildTestApp(t)
  const created = (await app.inject({ method: 'POST', url: '/portfolios', headers: apiKey(), payload: { name: 'P', userId: 'u' } })).json()
  const json = { ...apiKey(), 'content-type': 'application/json' }
  t.equal((await app.inject({ method: 'GET', url: `/portfolios/${created.id}`, headers: json })).statusCode, 200)
  const deleted = await app.inject({ method: 'DELETE', url: `/portfolios/${created.id}`, headers: json })
  t.equal(deleted.statusCode, 200)
  const emptyPost = await app.inject({ method: 'POST', url: '/portfolios', headers: json })
  t.equal(emptyPost.statusCode, 400, 'a POST without its body is still refused')
})

t.test('415 says what to send; JSON in another charset than UTF-8 is 415', async t => {
  const app = await buildTestApp(t)
  for (const headers of [{ 'content-type': 'text/plain' }, { 'content-type': 'application/xml' }, { 'content-type': 'application/json; charset=latin1' }, { 'content-type': 'application/json; charset="UTF-16"' }]) {
    const res = await app.inject({ method: 'POST', url: '/portfolios', headers: { ...apiKey(), ...headers }, payload: '{"name":"P","userId":"u"}' })
    t.equal(res.statusCode, 415, headers['content-type'])
    t.match(res.json(), { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Content-Type must be application/json' })
  }
  const utf8 = await app.inject({ method: 'POST', url: '/portfolios', headers: { ...apiKey(), 'content-type': 'application/json; charset=UTF-8' }, payload: '{"name":"P","userId":"u"}' })
  t.equal(utf8.statusCode, 201)
})
