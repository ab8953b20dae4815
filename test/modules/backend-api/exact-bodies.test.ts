import t from 'tap'
import type { ServerResponse } from 'node:http'
import { assertErrorBody, bearer, buildTestApp, userToken } from '../../helper.js'
import { startFakeLaravel } from '../../fixtures/fake-laravel.js'
import { answerWith, RELAYED_STATUSES, upstreamBody } from '../../fixtures/upstream-bodies.js'

const JSON_UTF8 = 'application/json; charset=utf-8'

t.test('backend relays: every 2xx–4xx body arrives byte for byte, with a JSON content type', async t => {
  const laravel = await startFakeLaravel(t)
  let status = 200
  const answer = (_request: unknown, res: ServerResponse): void => {
    answerWith(res, status, upstreamBody(status), JSON_UTF8)
  }
  laravel.on('/api/user/profile', answer)
  laravel.on('/api/orders', answer)
  const app = await buildTestApp(t, { BACKEND_URL: laravel.url })
  const proxy = async (payload: Record<string, unknown>) =>
    await app.inject({ method: 'POST', url: '/backend-api/proxy/api/orders', headers: bearer(userToken()), payload })
  for (status of RELAYED_STATUSES) {
    const profile = await app.inject({ method: 'GET', url: '/backend-api/user/profile', headers: bearer(userToken()) })
    t.equal(profile.statusCode, status, `profile ${status}`)
    t.equal(profile.body, upstreamBody(status), `profile ${status}: the upstream's bytes`)
    t.equal(profile.headers['content-type'], JSON_UTF8)
    for (const method of ['GET', 'POST']) {
      const proxied = await proxy({ method })
      t.equal(proxied.statusCode, status, `proxy ${method} ${status}`)
      t.equal(proxied.body, upstreamBody(status), `proxy ${method} ${status}: the upstream's bytes`)
    }
  }

  // The service's own errors on the same routes keep the ErrorBody.
  const own = await proxy({ method: 'GET', headers: { cookie: 'x' } })
  assertErrorBody(t, own.json(), 400, '/backend-api/proxy/api/orders')
  t.equal(own.json().code, 'BAD_REQUEST')
  const anonymous = await app.inject({ method: 'GET', url: '/backend-api/user/profile' })
  assertErrorBody(t, anonymous.json(), 401, '/backend-api/user/profile')
})

t.test('an upstream answer without a content type, or with another one, is still JSON to the caller', async t => {
  const laravel = await startFakeLaravel(t)
  laravel.on('/api/plain', (_request, res) => { answerWith(res, 422, upstreamBody(422)) })
  laravel.on('/api/problem', (_request, res) => { answerWith(res, 403, upstreamBody(403), 'application/problem+json') })
  const app = await buildTestApp(t, { BACKEND_URL: laravel.url })
  const user = bearer(userToken())
  const proxy = async (path: string) =>
    await app.inject({
      method: 'POST',
      url: `/backend-api/proxy/api/${path}`,
      headers: user,
      payload: { method: 'GET' }
    })
  const plain = await proxy('plain')
  t.equal(plain.body, upstreamBody(422))
  t.equal(plain.headers['content-type'], 'application/json')
  const problem = await proxy('problem')
  t.equal(problem.body, upstreamBody(403))
  t.equal(problem.headers['content-type'], 'application/problem+json')
})
