import t from 'tap'
import { jsonBodyProblem } from '../../src/plugins/strict-inputs.js'
import { PLUGGY_CLIENT_ID, PLUGGY_CLIENT_SECRET, startFakePluggy } from '../fixtures/fake-pluggy.js'
import { apiKey, assertErrorBody, bearer, buildTestApp, userToken } from '../helper.js'

t.test('a query parameter the route does not define is 400 in class-validator wording', async t => {
  const app = await buildTestApp(t)
  const typo = await app.inject({ method: 'GET', url: '/portfolios?user=1', headers: apiKey() })
  t.equal(typo.statusCode, 400)
  t.match(typo.json(), { code: 'VALIDATION_FAILED', message: ['property user should not exist'] })
  const none = await app.inject({ method: 'GET', url: '/auth/health?debug=1' })
  t.equal(none.statusCode, 400, 'a route without parameters takes none')
  t.same(none.json().message, ['property debug should not exist'])
  t.equal((await app.inject({
    method: 'GET',
    url: '/portfolios?userId=1&limit=10&offset=0',
    headers: apiKey()
  })).statusCode, 200)
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
  const limit = doc.paths['/portfolios'].get.parameters.find(
    (parameter: { name: string }) => parameter.name === 'limit'
  )
  t.equal(limit.schema.type, 'integer', 'documented as an integer')
})

t.test('a DELETE or GET that declares JSON but sends no body is served as if it had none', async t => {
  const app = await buildTestApp(t)
  const created = (await app.inject({
    method: 'POST',
    url: '/portfolios',
    headers: apiKey(),
    payload: { name: 'P', userId: 'u' }
  })).json()
  const json = { ...apiKey(), 'content-type': 'application/json' }
  t.equal((await app.inject({ method: 'GET', url: `/portfolios/${created.id}`, headers: json })).statusCode, 200)
  const deleted = await app.inject({ method: 'DELETE', url: `/portfolios/${created.id}`, headers: json })
  t.equal(deleted.statusCode, 200)
  const emptyPost = await app.inject({ method: 'POST', url: '/portfolios', headers: json })
  t.equal(emptyPost.statusCode, 400, 'a POST without its body is still refused')
})

t.test('415 says what to send; JSON in another charset than UTF-8 is 415', async t => {
  const app = await buildTestApp(t)
  for (const headers of [
    { 'content-type': 'text/plain' },
    { 'content-type': 'application/xml' },
    { 'content-type': 'application/json; charset=latin1' },
    { 'content-type': 'application/json; charset="UTF-16"' }
  ]) {
    const res = await app.inject({
      method: 'POST',
      url: '/portfolios',
      headers: { ...apiKey(), ...headers },
      payload: '{"name":"P","userId":"u"}'
    })
    t.equal(res.statusCode, 415, headers['content-type'])
    t.match(res.json(), { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Content-Type must be application/json' })
  }
  const utf8 = await app.inject({
    method: 'POST',
    url: '/portfolios',
    headers: { ...apiKey(), 'content-type': 'application/json; charset=UTF-8' },
    payload: '{"name":"P","userId":"u"}'
  })
  t.equal(utf8.statusCode, 201)
})

t.test('a body nested deeper than 32 levels is 400 on every route, and nothing is stored or relayed', async t => {
  const pluggy = await startFakePluggy(t)
  const app = await buildTestApp(t, {
    AGGREGATOR_URL: pluggy.url,
    AGGREGATOR_CLIENT_ID: PLUGGY_CLIENT_ID,
    AGGREGATOR_CLIENT_SECRET: PLUGGY_CLIENT_SECRET,
    AGGREGATOR_WEBHOOK_SECRET: 'hook'
  })
  const nested = (depth: number): string => `${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`
  const deepArray = `[${'['.repeat(9999)}${']'.repeat(9999)}]`
  const webhook = (body: string): string => `{"event":"item/updated","itemId":"i","data":${body}}`
  const relay = (body: string): string => `{"endpoint":"/connectors","method":"GET","filter":${body}}`

  const cases: Array<[string, string, Record<string, string>, string]> = [
    ['/aggregator/webhook', webhook(deepArray), { 'x-webhook-secret': 'hook' }, 'a webhook 10 000 levels deep'],
    ['/aggregator', relay(nested(40)), bearer(userToken()), 'a relay call 40 levels deep'],
    ['/portfolios', `{"name":"x","userId":"u","description":${nested(33)}}`, apiKey(), 'a create 34 levels deep']
  ]
  for (const [url, payload, headers, name] of cases) {
    const res = await app.inject({
      method: 'POST',
      url,
      payload,
      headers: { ...headers, 'content-type': 'application/json' }
    })
    t.equal(res.statusCode, 400, name)
    assertErrorBody(t, res.json(), 400, url)
    t.equal(res.json().message, 'body must not be nested deeper than 32 levels', name)
  }
  t.same(pluggy.received.filter(r => r.path !== '/auth'), [], 'nothing reached the aggregator')
  t.equal(await app.store.aggregatorEvents.count(), 0, 'no event stored')

  // 32 levels are fine (the relay passes its fields on as the query of a GET).
  t.same(jsonBodyProblem(JSON.parse(nested(32))), undefined)
  t.match(jsonBodyProblem(JSON.parse(nested(33))), /deeper than 32/)
  const atLimit = await app.inject({
    method: 'POST',
    url: '/aggregator/webhook',
    headers: { 'x-webhook-secret': 'hook', 'content-type': 'application/json' },
    payload: webhook(nested(31))
  })
  t.equal(atLimit.statusCode, 200, 'a webhook 32 levels deep is stored')
})

t.test('an unpaired UTF-16 surrogate in a body is 400; a pair (an emoji) is a character', async t => {
  const app = await buildTestApp(t)
  for (const payload of [
    '{"name":"\\ud800","userId":"u"}',
    '{"name":"x\\udc00y","userId":"u"}',
    '{"name":"x","userId":"u","\\ud83d":1}'
  ]) {
    const res = await app.inject({
      method: 'POST',
      url: '/portfolios',
      headers: { ...apiKey(), 'content-type': 'application/json' },
      payload
    })
    t.equal(res.statusCode, 400, payload)
    t.equal(res.json().message, 'body must not contain unpaired UTF-16 surrogates')
    t.equal(res.json().code, 'BAD_REQUEST')
  }
  const emoji = await app.inject({
    method: 'POST',
    url: '/portfolios',
    headers: { ...apiKey(), 'content-type': 'application/json' },
    payload: '{"name":"\\ud83d\\udcb0 Reserva","userId":"u"}'
  })
  t.equal(emoji.statusCode, 201)
  t.equal(emoji.json().name, '💰 Reserva')
})
