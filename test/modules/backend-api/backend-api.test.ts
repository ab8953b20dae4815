import t, { type Test } from 'tap'
import { request as httpRequest } from 'node:http'
import { Writable } from 'node:stream'
import { assertErrorBody, bearer, buildTestApp, userToken, clientToken, TEXTS } from '../../helper.js'
import { startFakeLaravel, LARAVEL_USER } from '../../fixtures/fake-laravel.js'
import { closedPort, sendJson, startFake } from '../../fixtures/fake-server.js'
import { loggingOptions } from '../../../src/observability/logging.js'

async function setup (t: Test, overrides: Record<string, string> = {}) {
  const laravel = await startFakeLaravel(t)
  const app = await buildTestApp(t, { BACKEND_URL: laravel.url, ...overrides })
  return { laravel, app }
}

t.test('GET /backend-api/user/profile forwards the verified token and passes the answer through', async t => {
  const { laravel, app } = await setup(t)
  const token = userToken()
  const res = await app.inject({
    method: 'GET',
    url: '/backend-api/user/profile',
    headers: { ...bearer(token), cookie: 'session=abc', 'x-forwarded-for': '1.2.3.4' }
  })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { ...LARAVEL_USER, phone: '+55 11 99999-0000' })
  t.equal(laravel.received.length, 1)
  const sent = laravel.received[0]
  t.equal(sent?.method, 'GET')
  t.equal(sent?.path, '/api/user/profile')
  t.equal(sent?.headers.authorization, `Bearer ${token}`)
  t.equal(sent?.headers.accept, 'application/json')
  t.equal(sent?.headers.cookie, undefined, 'caller cookies are not forwarded')
  t.equal(sent?.headers['x-forwarded-for'], undefined)

  laravel.revoked.add(token)
  const revoked = await app.inject({ method: 'GET', url: '/backend-api/user/profile', headers: bearer(token) })
  t.equal(revoked.statusCode, 401, 'an upstream 4xx passes through with its status')
  t.same(revoked.json(), { message: 'Unauthenticated.' })

  const anonymous = await app.inject({ method: 'GET', url: '/backend-api/user/profile' })
  t.equal(anonymous.statusCode, 401)
  t.equal(anonymous.json().message, TEXTS.tokenInvalid)
  t.equal(laravel.received.length, 2, 'an anonymous call reaches nothing')
})

t.test('the forwarded token is the verified one, whatever the header looked like', async t => {
  const { laravel, app } = await setup(t)
  const token = userToken()
  const res = await app.inject({
    method: 'GET',
    url: '/backend-api/user/profile',
    headers: { authorization: `bearer ${token}` }
  })
  t.equal(res.statusCode, 200)
  t.equal(laravel.received[0]?.headers.authorization, `Bearer ${token}`)
})

t.test('POST /backend-api/proxy/* forwards method, path, query, body and allowed headers', async t => {
  const { laravel, app } = await setup(t)
  const token = clientToken()
  const get = await app.inject({
    method: 'POST',
    url: '/backend-api/proxy/api/v1/orders/42',
    headers: bearer(token),
    payload: {
      method: 'GET',
      params: { page: 2, q: 'a b&c', active: true },
      headers: { 'Accept-Language': 'pt-BR', 'X-Request-Id': 'r-1' }
    }
  })
  t.equal(get.statusCode, 200)
  t.same(get.json(), {
    echo: {
      method: 'GET',
      path: '/api/v1/orders/42',
      query: { page: '2', q: 'a b&c', active: 'true' },
      body: null
    }
  })
  t.equal(laravel.received[0]?.headers['accept-language'], 'pt-BR')
  t.equal(laravel.received[0]?.headers['x-request-id'], 'r-1')
  t.equal(laravel.received[0]?.headers.authorization, `Bearer ${token}`)

  const post = await app.inject({
    method: 'POST',
    url: '/backend-api/proxy/api/orders',
    headers: bearer(token),
    payload: { method: 'POST', params: { item: 'x', qty: 3 } }
  })
  t.same(post.json(), { echo: { method: 'POST', path: '/api/orders', query: {}, body: { item: 'x', qty: 3 } } })
  t.equal(laravel.received[1]?.headers['content-type'], 'application/json')

  for (const method of ['PUT', 'PATCH', 'DELETE'] as const) {
    const res = await app.inject({
      method: 'POST',
      url: '/backend-api/proxy/api/orders/1',
      headers: bearer(token),
      payload: { method }
    })
    t.equal(res.json().echo.method, method)
  }
})

t.test('proxy headers: only the allowlist, never Host, Authorization, Cookie, hop-by-hop or X-Forwarded-*', async t => {
  const { laravel, app } = await setup(t)
  for (const name of [
    'Host',
    'Authorization',
    'Content-Length',
    'Transfer-Encoding',
    'Cookie',
    'Connection',
    'Upgrade',
    'TE',
    'Proxy-Authorization',
    'X-Forwarded-For',
    'X-Forwarded-Host',
    'X-API-KEY',
    'x-custom'
  ]) {
    const res = await app.inject({
      method: 'POST',
      url: '/backend-api/proxy/api/x',
      headers: bearer(userToken()),
      payload: { method: 'GET', headers: { [name]: 'evil' } }
    })
    t.equal(res.statusCode, 400, `${name} is refused`)
    assertErrorBody(t, res.json(), 400, '/backend-api/proxy/api/x')
  }
  const injected = await app.inject({
    method: 'POST',
    url: '/backend-api/proxy/api/x',
    headers: bearer(userToken()),
    payload: { method: 'GET', headers: { 'x-request-id': 'a\r\nHost: evil' } }
  })
  t.equal(injected.statusCode, 400, 'CR/LF in a header value is refused')
  const token = await app.inject({
    method: 'POST',
    url: '/backend-api/proxy/api/x',
    headers: bearer(userToken()),
    payload: { method: 'GET', params: { token: 'other' } }
  })
  t.equal(token.statusCode, 400, 'a token parameter is refused')
  const method = await app.inject({
    method: 'POST',
    url: '/backend-api/proxy/api/x',
    headers: bearer(userToken()),
    payload: { method: 'TRACE' }
  })
  t.equal(method.statusCode, 400)
  t.equal(laravel.received.length, 0, 'nothing reached the upstream')
})

/** Sends a raw request over real HTTP: unlike inject, nothing normalises `%2e%2e` on the way. */
async function rawPost (
  base: string, path: string, headers: Record<string, string>, body: string
): Promise<{ status: number, json: { statusCode?: number, path?: string } }> {
  const url = new URL(base)
  return await new Promise((resolve, reject) => {
    const req = httpRequest({
      host: url.hostname,
      port: url.port,
      method: 'POST',
      path,
      headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }
    }, res => {
      let text = ''
      res.on('data', chunk => { text += String(chunk) })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

t.test('proxy endpoints that would leave the backend are refused before anything is sent', async t => {
  const { laravel, app } = await setup(t)
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  const attacks = [
    'http://evil.example/x', 'http:evil.example', 'HTTPS://evil.example', '//evil.example/x', 'api//x',
    '%2e%2e/admin', '%2E%2E/%2E%2E/admin', 'api/..%2Fadmin', 'api/%2e%2e/admin', '.%2e/admin', '%252e%252e/admin',
    'api%5cadmin', 'api/%0d%0aHost:%20evil', 'api/%00', 'api/%2F%2Fevil', 'api/%zz', 'api/%E0%A4%A',
    'api/../../admin', '../admin', 'api/./x', 'api\\admin'
  ]
  for (const endpoint of attacks) {
    const res = await rawPost(
      base,
      `/backend-api/proxy/${endpoint}`,
      bearer(userToken()),
      JSON.stringify({ method: 'GET' })
    )
    t.equal(res.status, 400, `${endpoint} → 400`)
    t.match(res.json, { statusCode: 400, path: String })
  }
  t.equal(laravel.received.length, 0, 'the fake received nothing')
})

t.test('an upstream redirect is passed back, never followed', async t => {
  const { laravel, app } = await setup(t)
  const elsewhere = await startFake(t, (_req, res) => sendJson(res, 200, { stolen: true }))
  laravel.on('/api/moved', (_req, res) => {
    res.writeHead(302, { location: `${elsewhere.url}/steal` })
    res.end()
  })
  const res = await app.inject({
    method: 'POST',
    url: '/backend-api/proxy/api/moved',
    headers: bearer(userToken()),
    payload: { method: 'GET' }
  })
  t.equal(res.statusCode, 302)
  t.equal(res.headers.location, undefined, 'the upstream Location is not handed on')
  t.equal(elsewhere.received.length, 0, 'the redirect target received nothing (no token leaked)')
})

t.test('an upstream 429 is relayed with its Retry-After and RateLimit headers, ' +
  'nothing else of its headers', async t => {
  const { laravel, app } = await setup(t)
  laravel.on('/api/busy', (_req, res) => {
    res.writeHead(429, {
      'content-type': 'application/json',
      'retry-after': '30',
      'ratelimit-limit': '60',
      'ratelimit-remaining': '0',
      'ratelimit-reset': '30',
      'x-ratelimit-limit': '60',
      'set-cookie': 'laravel_session=secret'
    })
    res.end(JSON.stringify({ message: 'Too Many Attempts.' }))
  })
  const res = await app.inject({
    method: 'POST',
    url: '/backend-api/proxy/api/busy',
    headers: bearer(userToken()),
    payload: { method: 'GET' }
  })
  t.equal(res.statusCode, 429)
  t.same(res.json(), { message: 'Too Many Attempts.' })
  t.equal(res.headers['retry-after'], '30')
  t.equal(res.headers['ratelimit-limit'], '60')
  t.equal(res.headers['ratelimit-remaining'], '0')
  t.equal(res.headers['ratelimit-reset'], '30')
  t.equal(res.headers['x-ratelimit-limit'], '600', 'x-ratelimit-* describe this service\'s own limit (RATE_LIMIT_MAX)')
  t.equal(res.headers['set-cookie'], undefined, 'other upstream headers stay behind')
})

t.test('upstream failures: 5xx → 502 without its body, timeout → 504 promptly, down → 502', async t => {
  // A minute for every answer but the slow one: the subjects are the status rules and the size
  // limit, and an 11 MiB body must not race a short timeout on a busy machine.
  const { laravel, app } = await setup(t, { BACKEND_TIMEOUT_MS: '60000' })
  laravel.on('/api/boom', (_req, res) => sendJson(res, 500, {
    message: 'Server Error',
    trace: ['/var/www/app/Http/Controller.php:12 SECRET_DB_PASSWORD']
  }))
  laravel.on('/api/slow', async (_req, res) => {
    await new Promise(resolve => setTimeout(resolve, 2000))
    sendJson(res, 200, {})
  })
  laravel.on('/api/html', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' })
    res.end('<html>oops</html>')
  })
  laravel.on('/api/huge', (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(`["${'x'.repeat(11 * 1024 * 1024)}"]`)
  })
  laravel.on('/api/cut', (req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': 1000 })
    res.write('{"partial":')
    setTimeout(() => res.destroy(), 20)
  })

  const boom = await app.inject({
    method: 'POST',
    url: '/backend-api/proxy/api/boom',
    headers: bearer(userToken()),
    payload: { method: 'GET' }
  })
  t.equal(boom.statusCode, 502)
  t.equal(boom.json().message, TEXTS.upstreamUnavailable)
  t.notMatch(boom.body, /trace|SECRET|Controller/)

  // The fake answers after 2 s: a 504 means the 300 ms timeout fired first.
  const hurried = await buildTestApp(t, { BACKEND_URL: laravel.url, BACKEND_TIMEOUT_MS: '300' })
  const slow = await hurried.inject({
    method: 'POST',
    url: '/backend-api/proxy/api/slow',
    headers: bearer(userToken()),
    payload: { method: 'POST' }
  })
  t.equal(slow.statusCode, 504)
  t.equal(slow.json().message, TEXTS.upstreamTimeout)

  for (const path of ['html', 'huge', 'cut']) {
    const res = await app.inject({
      method: 'POST',
      url: `/backend-api/proxy/api/${path}`,
      headers: bearer(userToken()),
      payload: { method: 'POST' }
    })
    t.equal(res.statusCode, 502, `${path} → 502`)
    assertErrorBody(t, res.json(), 502, `/backend-api/proxy/api/${path}`)
  }

  const down = await buildTestApp(t, { BACKEND_URL: `http://127.0.0.1:${await closedPort(t)}` })
  const refused = await down.inject({ method: 'GET', url: '/backend-api/user/profile', headers: bearer(userToken()) })
  t.equal(refused.statusCode, 502)
  t.equal(refused.json().message, TEXTS.upstreamUnavailable)
})

t.test('a GET is retried once after a connection reset; a POST never', async t => {
  const { laravel, app } = await setup(t)
  let resets = 0
  const flaky = (_req: unknown, res: import('node:http').ServerResponse) => {
    if (resets++ % 2 === 0) { res.socket?.destroy(); return }
    sendJson(res, 200, { ok: true })
  }
  laravel.on('/api/flaky', flaky)
  const get = await app.inject({
    method: 'POST',
    url: '/backend-api/proxy/api/flaky',
    headers: bearer(userToken()),
    payload: { method: 'GET' }
  })
  t.equal(get.statusCode, 200)
  t.equal(laravel.received.filter(r => r.path === '/api/flaky').length, 2)
  const post = await app.inject({
    method: 'POST',
    url: '/backend-api/proxy/api/flaky',
    headers: bearer(userToken()),
    payload: { method: 'POST' }
  })
  t.equal(post.statusCode, 502)
  t.equal(laravel.received.filter(r => r.path === '/api/flaky').length, 3, 'the POST was sent once')
})

t.test('GET /backend-api/health reports reachability, response time and the token', async t => {
  const { laravel, app } = await setup(t)
  const res = await app.inject({
    method: 'GET',
    url: '/backend-api/health',
    headers: bearer(userToken({ expOffset: 3600 }))
  })
  t.equal(res.statusCode, 200)
  t.match(res.json(), {
    status: 'OK',
    laravel: { connected: true, responseTime: /^\d+ms$/ },
    token: { valid: true, expiresIn: /^(59m \d+s|1h 0m 0s)$/ }
  })
  t.equal(laravel.received[0]?.path, '/api/health')
  t.equal(laravel.received[0]?.headers.authorization, undefined, 'the probe does not carry the token')

  laravel.on('/api/health', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' })
    res.end('<h1>up</h1>')
  })
  t.equal((await app.inject({
    method: 'GET',
    url: '/backend-api/health',
    headers: bearer(userToken())
  })).json().laravel.connected, true, 'any answer means reachable')

  const down = await buildTestApp(t, { BACKEND_URL: `http://127.0.0.1:${await closedPort(t)}` })
  const offline = await down.inject({ method: 'GET', url: '/backend-api/health', headers: bearer(userToken()) })
  t.equal(offline.statusCode, 200)
  t.match(offline.json(), { status: 'OK', laravel: { connected: false, responseTime: '0ms' }, token: { valid: true } })
})

t.test('POST /backend-api/validate-token asks the upstream', async t => {
  const { laravel, app } = await setup(t)
  const token = userToken()
  const valid = await app.inject({ method: 'POST', url: '/backend-api/validate-token', headers: bearer(token) })
  t.equal(valid.statusCode, 200)
  t.same(valid.json(), { valid: true, user: { id: '1', email: 'ana@example.com', name: 'Ana Souza' } })
  t.equal(laravel.received[0]?.path, '/api/me')

  laravel.revoked.add(token)
  const loggedOut = await app.inject({ method: 'POST', url: '/backend-api/validate-token', headers: bearer(token) })
  t.equal(loggedOut.statusCode, 200)
  t.same(loggedOut.json(), { valid: false, user: null })

  laravel.on('/api/me', (_req, res) => sendJson(res, 200, { data: { id: 'u-9', email: null } }))
  const wrapped = await app.inject({ method: 'POST', url: '/backend-api/validate-token', headers: bearer(userToken()) })
  t.same(wrapped.json(), { valid: true, user: { id: 'u-9', email: null, name: null } })
})

t.test('upstream paths are configurable under a base path', async t => {
  const laravel = await startFakeLaravel(t)
  laravel.on('/prefix/v2/profile', (_req, res) => sendJson(res, 200, { custom: true }))
  const app = await buildTestApp(t, { BACKEND_URL: `${laravel.url}/prefix`, BACKEND_PROFILE_PATH: 'v2/profile' })
  const res = await app.inject({ method: 'GET', url: '/backend-api/user/profile', headers: bearer(userToken()) })
  t.same(res.json(), { custom: true })
  const proxied = await app.inject({
    method: 'POST',
    url: '/backend-api/proxy/api/x',
    headers: bearer(userToken()),
    payload: { method: 'GET' }
  })
  t.equal(proxied.json().echo.path, '/prefix/api/x', 'proxy paths stay under the base path')
})

t.test('tokens never reach the logs', async t => {
  const laravel = await startFakeLaravel(t)
  laravel.on('/api/boom', (_req, res) => sendJson(res, 500, { message: 'x' }))
  let logged = ''
  const stream = new Writable({ write (chunk, _encoding, done) { logged += String(chunk); done() } })
  const app = await buildTestApp(t, { BACKEND_URL: laravel.url }, { logger: { level: 'trace', stream } })
  const token = userToken()
  await app.inject({ method: 'GET', url: '/backend-api/user/profile', headers: bearer(token) })
  await app.inject({
    method: 'POST',
    url: '/backend-api/proxy/api/boom',
    headers: bearer(token),
    payload: { method: 'GET' }
  })
  await app.inject({ method: 'GET', url: '/auth/profile', headers: { authorization: `Bearer ${token}x` } })
  t.ok(logged.length > 0, 'something was logged')
  t.notMatch(logged, token.split('.')[2] ?? 'never', 'the token signature is not in the logs')
})

t.test('upstream log lines carry the request id of the request that caused them', async t => {
  let logged = ''
  const laravel = await startFakeLaravel(t)
  laravel.on('/api/fails', (_req, res) => sendJson(res, 500, { message: 'boom' }))
  const app = await buildTestApp(
    t,
    { BACKEND_URL: laravel.url },
    loggingOptions('warn', {
      write: line => {
        logged += line
      }
    })
  )
  const res = await app.inject({
    method: 'POST',
    url: '/backend-api/proxy/api/fails',
    headers: { ...bearer(userToken()), 'x-request-id': 'trace-me-42' },
    payload: { method: 'GET' }
  })
  t.equal(res.statusCode, 502)
  const lines = logged.trim().split('\n').map(line => JSON.parse(line) as {
    msg: string
    reqId?: string
    upstream?: string
    status?: number
  })
  t.match(lines.find(line => line.msg === 'upstream failed'), {
    reqId: 'trace-me-42',
    upstream: 'backend',
    status: 500
  })
})

t.test('POST /backend-api/proxy/*: params of a GET are scalars (the query); ' +
  'of another method any object (the body)', async t => {
  const { laravel, app } = await setup(t)
  laravel.on('/api/orders', (_request, res) => sendJson(res, 201, { received: true }))
  const nested = { items: [{ sku: 'A1', quantity: 2 }], customer: { id: 7 } }
  const posted = await app.inject({
    method: 'POST',
    url: '/backend-api/proxy/api/orders',
    headers: bearer(userToken()),
    payload: { method: 'POST', params: nested }
  })
  t.equal(posted.statusCode, 201)
  t.same(
    JSON.parse(laravel.received.at(-1)?.body ?? 'null'),
    nested,
    'objects and arrays reach the backend as the JSON body'
  )
  const before = laravel.received.length
  const refused = await app.inject({
    method: 'POST',
    url: '/backend-api/proxy/api/orders',
    headers: bearer(userToken()),
    payload: { method: 'GET', params: nested }
  })
  t.equal(refused.statusCode, 400)
  t.match(refused.json(), { code: 'BAD_REQUEST', message: /params.items must be a string, number or boolean/ })
  t.equal(laravel.received.length, before, 'nothing sent')
})

t.test('a proxy path that starts with / or holds ; is 400 and reaches nothing', async t => {
  const { laravel, app } = await setup(t)
  for (const path of ['//evil.example/api/me', '/%2Fevil.example/api/me', 'api/me;jsessionid=1', 'api/me%3Bx']) {
    const res = await app.inject({
      method: 'POST',
      url: `/backend-api/proxy/${path}`,
      headers: bearer(userToken()),
      payload: { method: 'GET' }
    })
    t.equal(res.statusCode, 400, path)
    t.equal(res.json().code, 'BAD_REQUEST', path)
  }
  t.equal(laravel.received.length, 0)
})
