import t from 'tap'
import { Writable } from 'node:stream'
import { loggingOptions } from '../../src/observability/logging.js'
import type { AddressInfo } from 'node:net'
import type { Response as LightMyRequestResponse } from 'light-my-request'
import { buildApp, type App } from '../../src/app.js'
import { apiKey, assertErrorBody, bearer, buildTestApp, clientToken, testConfig, userToken } from '../helper.js'

t.test('the security headers of a JSON API on every answer, and none of an HTML page\'s', async t => {
  const app = await buildTestApp(t)
  const answers = [
    await app.inject({ method: 'GET', url: '/auth/health' }),
    await app.inject({ method: 'GET', url: '/portfolios/none', headers: apiKey() }),
    await app.inject({ method: 'GET', url: '/no-such-route' })
  ]
  for (const res of answers) {
    t.equal(res.headers['x-content-type-options'], 'nosniff')
    t.equal(res.headers['content-security-policy'], "frame-ancestors 'none'", 'no page may frame an answer')
    t.equal(res.headers['x-frame-options'], 'DENY', 'for browsers without CSP level 2')
    t.equal(res.headers['strict-transport-security'], 'max-age=31536000; includeSubDomains', 'HSTS on by default')
    for (const name of ['x-powered-by', 'referrer-policy', 'cross-origin-opener-policy', 'cross-origin-resource-policy',
      'origin-agent-cluster', 'x-dns-prefetch-control', 'x-download-options', 'x-permitted-cross-domain-policies',
      'x-xss-protection']) {
      t.equal(res.headers[name], undefined, `no ${name}: it governs HTML documents`)
    }
  }
})

t.test('HSTS_MAX_AGE sets HSTS\'s max-age; 0 sends none', async t => {
  const shorter = await buildTestApp(t, { HSTS_MAX_AGE: '86400' })
  const res = await shorter.inject({ method: 'GET', url: '/auth/health' })
  t.equal(res.headers['strict-transport-security'], 'max-age=86400; includeSubDomains')
  const none = await buildTestApp(t, { HSTS_MAX_AGE: '0' })
  const plain = await none.inject({ method: 'GET', url: '/auth/health' })
  t.equal(plain.headers['strict-transport-security'], undefined)
  t.equal(plain.headers['x-content-type-options'], 'nosniff', 'the other headers stay')
  t.throws(() => testConfig({ HSTS_MAX_AGE: '-1' }), /HSTS_MAX_AGE/)
})

t.test('Cache-Control: no-store on every answer no route marks otherwise, with the security headers', async t => {
  const app = await buildTestApp(t, { CORS_ORIGINS: 'https://app.example' })
  const origin = 'https://app.example'
  const answers = {
    liveness: await app.inject({ method: 'GET', url: '/auth/health' }),
    'a create': await app.inject({
      method: 'POST',
      url: '/portfolios',
      headers: apiKey(),
      payload: { name: 'Uncached', userId: 'u' }
    }),
    'a list': await app.inject({ method: 'GET', url: '/portfolios', headers: { ...apiKey(), origin } }),
    'a preflight': await app.inject({
      method: 'OPTIONS',
      url: '/portfolios',
      headers: { origin, 'access-control-request-method': 'GET' }
    }),
    'the OpenAPI document': await app.inject({ method: 'GET', url: '/docs/json' }),
    'a GraphQL answer': await app.inject({ method: 'POST', url: '/graphql', payload: { query: '{ __typename }' } })
  }
  for (const [what, answer] of Object.entries(answers)) {
    t.ok(answer.statusCode < 300, `${what}: ${answer.statusCode}`)
    t.equal(answer.headers['cache-control'], 'no-store', what)
  }
})

t.test('CORS only for CORS_ORIGINS', async t => {
  const closed = await buildTestApp(t)
  const none = await closed.inject({
    method: 'OPTIONS',
    url: '/auth/profile',
    headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' }
  })
  t.equal(none.headers['access-control-allow-origin'], undefined, 'no origin is allowed by default')
  t.equal(none.statusCode, 404, 'without CORS_ORIGINS a preflight is an unknown route')
  t.equal(none.json().code, 'NOT_FOUND')

  const open = await buildTestApp(t, { CORS_ORIGINS: 'https://app.example, https://admin.example' })
  const allowed = await open.inject({
    method: 'OPTIONS',
    url: '/auth/profile',
    headers: { origin: 'https://admin.example', 'access-control-request-method': 'GET' }
  })
  t.equal(allowed.statusCode, 204)
  t.equal(allowed.headers['access-control-allow-origin'], 'https://admin.example')
  const denied = await open.inject({ method: 'GET', url: '/auth/health', headers: { origin: 'https://evil.example' } })
  t.equal(denied.headers['access-control-allow-origin'], undefined)

  // A listed origin's request reads the headers it is granted; any other request gets no CORS
  // header at all (an exposure is a grant), but `Vary: Origin` for caches.
  const granted = await open.inject({ method: 'GET', url: '/auth/health', headers: { origin: 'https://app.example' } })
  t.equal(granted.headers['access-control-allow-origin'], 'https://app.example')
  t.match(granted.headers['access-control-expose-headers'], /x-request-id, Retry-After, ETag/)
  const noOrigin = await open.inject({ method: 'GET', url: '/auth/health' })
  for (const [what, answer] of [['another origin', denied], ['no Origin', noOrigin]] as const) {
    const cors = Object.keys(answer.headers).filter(name => name.startsWith('access-control-'))
    t.same(cors, [], `${what}: no CORS header`)
    t.equal(answer.headers.vary, 'Origin', `${what}: Vary: Origin`)
  }
})

t.test('rate limit: per principal, else per IP, 429 in the standard body', async t => {
  const app = await buildTestApp(t, { RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_MS: '60000' })
  const ana = bearer(userToken({ sub: 'ana' }))
  const codes = []
  for (let i = 0; i < 4; i++) {
    codes.push((await app.inject({ method: 'GET', url: '/auth/profile', headers: ana })).statusCode)
  }
  t.same(codes, [200, 200, 200, 429])
  const limited = await app.inject({ method: 'GET', url: '/auth/profile', headers: ana })
  t.equal(limited.statusCode, 429)
  assertErrorBody(t, limited.json(), 429, '/auth/profile')
  t.match(limited.json().message, /^Muitas requisições; tente novamente em /)
  t.ok(Number(limited.headers['retry-after']) > 0)

  t.equal((await app.inject({
    method: 'GET',
    url: '/auth/profile',
    headers: bearer(clientToken({ sub: 'ana' }))
  })).statusCode, 200, 'another principal has its own budget')
  const anonymous = []
  for (let i = 0; i < 4; i++) anonymous.push((await app.inject({ method: 'GET', url: '/provider-config' })).statusCode)
  t.same(anonymous, [200, 200, 200, 429], 'anonymous calls count per IP')
  t.equal((await app.inject({
    method: 'GET',
    url: '/provider-config',
    remoteAddress: '10.9.9.9'
  })).statusCode, 200, 'another IP has its own budget')
})

t.test('bodies over 1 MiB are 413', async t => {
  const app = await buildTestApp(t)
  const res = await app.inject({
    method: 'POST',
    url: '/portfolios',
    headers: { ...apiKey(), 'content-type': 'application/json' },
    payload: JSON.stringify({ name: 'x'.repeat(1024 * 1024), userId: 'u' })
  })
  t.equal(res.statusCode, 413)
  assertErrorBody(t, res.json(), 413, '/portfolios')
})

/** Synchronous work: the event loop is blocked for `ms`. */
function busy (ms: number): void {
  const until = Date.now() + ms
  while (Date.now() < until) { /* busy */ }
}

/**
 * Blocks the loop in 200 ms slices, letting it turn between them, until a request to `url` is
 * shed (at most 40 slices): an overload that lasts, whatever the machine's speed.
 */
async function overloadUntilShed (app: App, url: string): Promise<LightMyRequestResponse> {
  let res = await app.inject({ method: 'GET', url })
  for (let slice = 0; slice < 40 && res.statusCode !== 503; slice++) {
    busy(200)
    await new Promise(resolve => setImmediate(resolve))
    res = await app.inject({ method: 'GET', url })
  }
  return res
}

t.test('an overloaded event loop is shed with 503 in the standard body; liveness never is', async t => {
  const app = await buildTestApp(t, { MAX_EVENT_LOOP_DELAY_MS: '50' })
  const res = await overloadUntilShed(app, '/provider-config')
  t.equal(res.statusCode, 503)
  assertErrorBody(t, res.json(), 503, '/provider-config')
  t.equal(res.json().message, 'Serviço sobrecarregado; tente novamente em instantes')
  t.equal(res.headers['retry-after'], '5')
  const ready = await app.inject({ method: 'GET', url: '/ready' })
  t.equal(ready.statusCode, 503, 'not ready while overloaded: the balancer sends elsewhere')
  t.equal(ready.json().code, 'OVERLOADED')
  busy(200)
  const health = await app.inject({ method: 'GET', url: '/auth/health' })
  t.equal(health.statusCode, 200, 'liveness answers: an orchestrator must not restart a busy instance')
})

t.test('start-up work is not overload: the first requests after listen are served; later overload is shed', async t => {
  const app = await buildApp(testConfig({ MAX_EVENT_LOOP_DELAY_MS: '50' }))
  t.teardown(() => app.close())
  // Start-up work of a host application: 2 s of synchronous work before the server listens.
  app.addHook('onReady', async () => { busy(2000) })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  const paths = ['/auth/health', '/ready', '/provider-config', '/portfolios']
  const first = await Promise.all(paths.map(async path => {
    return (await fetch(`${base}${path}`, { headers: apiKey() })).status
  }))
  t.same(first, [200, 200, 200, 200], 'the first requests are served, /ready says ready')

  const later = await overloadUntilShed(app, '/portfolios')
  t.equal(later.statusCode, 503, 'an overload after start-up is shed')
  t.equal(later.json().code, 'OVERLOADED')
})

t.test('request ids: taken from x-request-id when sane, else generated; echoed; in every log line', async t => {
  let logged = ''
  const stream = new Writable({ write (chunk, _encoding, done) { logged += String(chunk); done() } })
  const app = await buildTestApp(t, {}, loggingOptions('info', { write: line => { stream.write(line) } }))
  // Not a probe's route (/auth/health, /ready): those log at debug.
  const given = await app.inject({ method: 'GET', url: '/provider-config', headers: { 'x-request-id': 'trace-123' } })
  t.equal(given.headers['x-request-id'], 'trace-123')
  const odd = await app.inject({ method: 'GET', url: '/provider-config', headers: { 'x-request-id': 'a b <script>' } })
  t.match(odd.headers['x-request-id'], /^[0-9a-f-]{36}$/, 'an odd id is replaced by a UUID')
  const none = await app.inject({ method: 'GET', url: '/provider-config' })
  t.match(none.headers['x-request-id'], /^[0-9a-f-]{36}$/)
  t.match(logged, /"reqId":"trace-123"/)
})

t.test('no token, API key or secret reaches the log, even at trace level', async t => {
  let logged = ''
  const app = await buildTestApp(
    t,
    { AGGREGATOR_WEBHOOK_SECRET: 'hook-secret-value' },
    loggingOptions('trace', {
      write: line => {
        logged += line
      }
    })
  )
  const token = userToken()
  await app.inject({ method: 'GET', url: '/auth/profile', headers: bearer(token) })
  await app.inject({ method: 'GET', url: '/auth/profile', headers: bearer(`${token}tampered`) })
  await app.inject({ method: 'GET', url: '/portfolios', headers: apiKey() })
  await app.inject({ method: 'GET', url: '/portfolios', headers: { 'x-api-key': 'wrong-key-value' } })
  await app.inject({
    method: 'POST',
    url: '/aggregator/webhook',
    headers: { 'x-webhook-secret': 'hook-secret-value' },
    payload: { event: 'x', eventId: 'e' }
  })
  await app.inject({ method: 'POST', url: '/auth/validate-token', payload: { token } })
  // Credentials sent in the query string are refused, and must not be logged either.
  await app.inject({
    method: 'GET',
    url: `/auth/profile?token=${token}&api_key=query-key-value&x-webhook-secret=query-hook-value`
  })
  t.ok(logged.length > 0)
  t.match(logged, /token=\[redacted\]/, 'the URL is logged with the value masked')
  for (const secret of [
    token.split('.')[2] ?? 'never',
    apiKey()['x-api-key'] ?? 'never',
    'wrong-key-value',
    'hook-secret-value',
    'query-key-value',
    'query-hook-value'
  ]) {
    t.notMatch(logged, secret, 'a secret is not in the log')
  }
})
