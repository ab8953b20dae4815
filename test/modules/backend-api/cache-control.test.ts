import t, { type Test } from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { bearer, buildTestApp, userToken } from '../../helper.js'
import { LARAVEL_USER, startFakeLaravel } from '../../fixtures/fake-laravel.js'
import type { Handler } from '../../fixtures/fake-server.js'

/** An upstream answer that invites every cache, a shared one included, to keep it for an hour. */
function cacheableAnswer (status: number, body: unknown): Handler {
  return (_request, res) => {
    res.writeHead(status, {
      'content-type': 'application/json',
      'cache-control': 'public, max-age=3600',
      expires: new Date(Date.now() + 3_600_000).toUTCString(),
      etag: '"upstream-tag"'
    })
    res.end(JSON.stringify(body))
  }
}

function assertNeverKept (t: Test, res: LightMyRequestResponse, what: string): void {
  t.equal(res.headers['cache-control'], 'no-store, max-age=0, private', `${what}: Cache-Control`)
  t.equal(res.headers.pragma, 'no-cache', `${what}: Pragma`)
  t.equal(res.headers.expires, '0', `${what}: Expires`)
  t.equal(res.headers.etag, undefined, `${what}: no upstream ETag`)
}

t.test('no cache keeps a relayed answer, whatever the backend allowed, nor the token answers', async t => {
  const laravel = await startFakeLaravel(t)
  const profile = { ...LARAVEL_USER, phone: '+55 11 99999-0000' }
  laravel.on('/api/user/profile', cacheableAnswer(200, profile))
  laravel.on('/api/v1/orders', cacheableAnswer(200, { orders: [] }))
  laravel.on('/api/v1/forbidden', cacheableAnswer(403, { message: 'This action is unauthorized.' }))
  laravel.on('/api/me', cacheableAnswer(200, LARAVEL_USER))
  const app = await buildTestApp(t, { BACKEND_URL: laravel.url })
  const user = bearer(userToken())

  const relayed = await app.inject({ method: 'GET', url: '/backend-api/user/profile', headers: user })
  t.equal(relayed.statusCode, 200)
  t.same(relayed.json(), profile)
  assertNeverKept(t, relayed, 'the profile relay')
  const proxied = await app.inject({
    method: 'POST',
    url: '/backend-api/proxy/api/v1/orders',
    headers: user,
    payload: { method: 'GET' }
  })
  t.equal(proxied.statusCode, 200)
  assertNeverKept(t, proxied, 'the proxy')
  const refused = await app.inject({
    method: 'POST',
    url: '/backend-api/proxy/api/v1/forbidden',
    headers: user,
    payload: { method: 'GET' }
  })
  t.equal(refused.statusCode, 403, 'the upstream\'s 4xx, relayed')
  assertNeverKept(t, refused, 'a relayed 4xx')

  const validated = await app.inject({ method: 'POST', url: '/backend-api/validate-token', headers: user })
  t.equal(validated.statusCode, 200)
  t.equal(validated.json().valid, true)
  assertNeverKept(t, validated, 'the token validation')
  const health = await app.inject({ method: 'GET', url: '/backend-api/health', headers: user })
  t.equal(health.statusCode, 200)
  assertNeverKept(t, health, 'the health answer about the token')
})
