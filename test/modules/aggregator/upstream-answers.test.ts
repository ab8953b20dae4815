import t from 'tap'
import type { ServerResponse } from 'node:http'
import { assertErrorBody, bearer, buildTestApp, clientToken, userToken } from '../../helper.js'
import { PLUGGY_CLIENT_SECRET, startFakePluggy } from '../../fixtures/fake-pluggy.js'
import { startFakeLaravel } from '../../fixtures/fake-laravel.js'
import { sendJson } from '../../fixtures/fake-server.js'
import { tooManyRequests } from '../../fixtures/pluggy-shapes.js'
import { captureLog, credentials } from './verification-helpers.js'

const connectors = { endpoint: '/connectors', method: 'GET' }
const relayAs = (headers: Record<string, string>) =>
  ({ method: 'POST' as const, url: '/aggregator', headers, payload: connectors })
const SANDBOX = "default-src 'none'; frame-ancestors 'none'; sandbox"

t.test('a 4xx that is not JSON is relayed as received: status, bytes, content type, Retry-After', async t => {
  const pluggy = await startFakePluggy(t)
  pluggy.on('/connectors', (_request, res) => { tooManyRequests('1')(res) })
  pluggy.on('/connect_token', (_request, res) => { tooManyRequests('3')(res) })
  pluggy.on('/categories', (_request, res) => {
    res.writeHead(404, { 'content-type': 'text/html' })
    res.end('<h1>Not Found</h1>')
  })
  pluggy.on('/items/broken', (_request, res) => {
    res.writeHead(400, { 'content-type': 'application/json' })
    res.end('{"code":400,')
  })
  pluggy.on('/loans', (_request, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' })
    res.end('fine')
  })
  const app = await buildTestApp(t, { AGGREGATOR_URL: pluggy.url, ...credentials })
  const user = bearer(userToken())
  const relay = async (endpoint: string) =>
    await app.inject({ method: 'POST', url: '/aggregator', headers: user, payload: { endpoint, method: 'GET' } })

  const limited = await relay('/connectors')
  t.equal(limited.statusCode, 429, 'Pluggy\'s plain-text 429 stays a 429')
  t.equal(limited.body, 'Rate limit exceeded')
  t.equal(limited.headers['content-type'], 'text/plain; charset=utf-8')
  t.equal(limited.headers['retry-after'], '1')
  t.equal(limited.headers['content-security-policy'], SANDBOX, 'bytes that are not JSON can run nothing')
  t.match(limited.headers['cache-control'], /no-store/)

  const token = await app.inject({ method: 'POST', url: '/aggregator/connect_token', headers: user, payload: {} })
  t.equal(token.statusCode, 429, 'a connect token too')
  t.equal(token.body, 'Rate limit exceeded')
  t.equal(token.headers['retry-after'], '3')

  const page = await relay('/categories')
  t.same([page.statusCode, page.body, page.headers['content-type']], [404, '<h1>Not Found</h1>', 'text/html'])
  const broken = await relay('/items/broken')
  t.same([broken.statusCode, broken.body], [400, '{"code":400,'], 'a refusal passes even with a broken body')
  const success = await relay('/loans')
  t.equal(success.statusCode, 502, 'a success that is not JSON is still unusable')
  assertErrorBody(t, success.json(), 502, '/aggregator')
  const json = await relay('/items/unknown')
  t.equal(json.headers['content-security-policy'], "frame-ancestors 'none'", 'a JSON answer has only the API\'s policy')
})

t.test('the backend relay follows the same rule for a 4xx that is not JSON', async t => {
  const laravel = await startFakeLaravel(t)
  laravel.on('/api/limited', (_request, res) => {
    res.writeHead(429, { 'content-type': 'text/plain', 'retry-after': '9' })
    res.end('Too Many Attempts.')
  })
  const app = await buildTestApp(t, { BACKEND_URL: laravel.url })
  const res = await app.inject({
    method: 'POST', url: '/backend-api/proxy/api/limited', headers: bearer(userToken()), payload: { method: 'GET' }
  })
  t.same([res.statusCode, res.body, res.headers['retry-after']], [429, 'Too Many Attempts.', '9'])
})

t.test('a key exchange refused with 429 is the callers\' 429 with its Retry-After; ' +
  'concurrent calls share one attempt, and none is made before the wait is over', async t => {
  const pluggy = await startFakePluggy(t)
  const pending: ServerResponse[] = []
  let release: () => void = () => {}
  const allArrived = new Promise<void>(resolve => { release = resolve })
  pluggy.on('/auth', (_request, res) => {
    pending.push(res)
    release()
  })
  const app = await buildTestApp(t, { AGGREGATOR_URL: pluggy.url, ...credentials })
  const calls = Array.from({ length: 20 }, async (_, n) => await app.inject({
    method: 'POST', url: '/aggregator', headers: bearer(userToken({ sub: `u${n}` })), payload: connectors
  }))
  await allArrived
  for (const res of pending) tooManyRequests('30')(res)
  const answers = await Promise.all(calls)
  t.same(answers.map(r => r.statusCode), Array(20).fill(429))
  for (const res of answers) {
    const wait = Number(res.headers['retry-after'])
    t.ok(wait >= 1 && wait <= 30, `Retry-After ${wait}`)
    t.equal(res.json().code, 'RATE_LIMITED')
  }
  const later = await app.inject(relayAs(bearer(userToken())))
  t.equal(later.statusCode, 429, 'still waiting')
  t.equal(pluggy.received.filter(r => r.path === '/auth').length, 1, 'one exchange attempt for all of them')
  t.equal(pluggy.received.filter(r => r.path === '/connectors').length, 0)
})

t.test('a key exchange refused with 403 (an IP not allowed) is 503 with Retry-After; the log names why, ' +
  'never the secret', async t => {
  const pluggy = await startFakePluggy(t)
  pluggy.on('/auth', (_request, res) => {
    sendJson(res, 403, { code: 403, message: 'IP not allowed', codeDescription: 'CLIENT_IP_NOT_ALLOWED' })
  })
  const { lines, logger } = captureLog()
  const app = await buildTestApp(t, { AGGREGATOR_URL: pluggy.url, ...credentials }, { logger })
  const res = await app.inject(relayAs(bearer(userToken())))
  t.equal(res.statusCode, 503)
  assertErrorBody(t, res.json(), 503, '/aggregator')
  t.match(res.json(), { code: 'NOT_CONFIGURED', message: 'Agregador recusou as credenciais deste serviço' })
  t.equal(res.headers['retry-after'], '60')
  t.notMatch(res.body, /CLIENT_IP|IP not allowed/)
  t.match(lines.find(line => line.msg === 'aggregator refused the API key exchange'), {
    status: 403, codeDescription: 'CLIENT_IP_NOT_ALLOWED'
  })
  t.notMatch(JSON.stringify(lines), PLUGGY_CLIENT_SECRET)
  const again = await app.inject({
    method: 'POST', url: '/aggregator/connect_token', headers: bearer(clientToken()), payload: {}
  })
  t.equal(again.statusCode, 503)
  t.equal(pluggy.received.filter(r => r.path === '/auth').length, 1, 'not asked again before the wait is over')
})

t.test('a 403 about a resource is relayed without a new key; a 401 renews it', async t => {
  const pluggy = await startFakePluggy(t)
  const forbidden = '{"code":403,"message":"You don\'t have permissions on this item"}'
  pluggy.on('/items/foreign', (_request, res) => {
    res.writeHead(403, { 'content-type': 'application/json' })
    res.end(forbidden)
  })
  const app = await buildTestApp(t, { AGGREGATOR_URL: pluggy.url, ...credentials })
  const user = bearer(userToken())
  const res = await app.inject({
    method: 'POST', url: '/aggregator', headers: user, payload: { endpoint: '/items/foreign', method: 'GET' }
  })
  t.same([res.statusCode, res.body], [403, forbidden], 'Pluggy\'s 403, as received')
  t.equal(pluggy.authCalls(), 1, 'the key, still valid, was kept')
  t.equal(pluggy.received.filter(r => r.path === '/items/foreign').length, 1, 'sent once')

  pluggy.revokeKeys()
  t.equal((await app.inject(relayAs(user))).statusCode, 200)
  t.equal(pluggy.authCalls(), 2, 'a 401 says the key is wrong: renewed and sent again')
})
