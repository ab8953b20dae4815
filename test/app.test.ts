import t from 'tap'
import { assertErrorBody, buildTestApp } from './helper.js'

t.test('errors Fastify raises before routing get the standard body', async t => {
  const app = await buildTestApp(t)
  const badEscape = await app.inject({ method: 'GET', url: '/auth/%E0%A4%A' })
  t.equal(badEscape.statusCode, 400)
  assertErrorBody(t, badEscape.json(), 400, '/auth/%E0%A4%A')

  const badContentType = await app.inject({
    method: 'POST',
    url: '/auth/validate-token',
    payload: '{}',
    headers: { 'content-type': 'application/json garbage' }
  })
  t.equal(badContentType.statusCode, 415)
  assertErrorBody(t, badContentType.json(), 415, '/auth/validate-token')

  const leadingSpace = await app.inject({
    method: 'POST',
    url: '/auth/validate-token',
    payload: '{"token": 5}',
    headers: { 'content-type': ' application/json' }
  })
  t.equal(leadingSpace.statusCode, 400, 'a leading space in Content-Type never skips validation')
  t.match(leadingSpace.json(), { code: 'VALIDATION_FAILED', message: ['token must be a string'] })
})

t.test('unknown routes are 404 with the standard body', async t => {
  const app = await buildTestApp(t)
  const res = await app.inject({ method: 'GET', url: '/does/not/exist' })
  t.equal(res.statusCode, 404)
  assertErrorBody(t, res.json(), 404, '/does/not/exist')
})
