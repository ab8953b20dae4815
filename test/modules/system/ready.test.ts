import { Agent, get } from 'node:http'
import t from 'tap'
import { assertErrorBody, buildTestApp, userToken } from '../../helper.js'
import { loggingOptions } from '../../../src/observability/logging.js'
import { startFakeLaravel } from '../../fixtures/fake-laravel.js'
import { closedPort } from '../../fixtures/fake-server.js'

t.test('GET /ready checks the store and reports the upstreams without failing on them', async t => {
  const laravel = await startFakeLaravel(t)
  const app = await buildTestApp(t, {
    BACKEND_URL: laravel.url,
    AGGREGATOR_URL: `http://127.0.0.1:${await closedPort(t)}`
  })
  const res = await app.inject({ method: 'GET', url: '/ready' })
  t.equal(res.statusCode, 200)
  t.match(res.json(), {
    status: 'ready',
    store: 'ok',
    upstreams: {
      backend: { reachable: true, responseTime: /^\d+ms$/ },
      aggregator: { reachable: false, responseTime: '0ms', configured: false }
    },
    timestamp: String
  })
  await app.inject({ method: 'GET', url: '/ready' })
  t.equal(
    laravel.received.filter(r => r.path === '/api/health').length,
    1,
    'upstream probes are cached between balancer checks'
  )
})

t.test('GET /ready is 503 while draining and without the store', async t => {
  const app = await buildTestApp(t)
  app.lifecycle.draining = true
  const draining = await app.inject({ method: 'GET', url: '/ready' })
  t.equal(draining.statusCode, 503)
  t.equal(draining.json().message, 'Instância em desligamento')
  assertErrorBody(t, draining.json(), 503, '/ready')
  t.equal(
    (await app.inject({ method: 'GET', url: '/auth/health' })).statusCode,
    200,
    'liveness stays up while draining'
  )

  const broken = await buildTestApp(t)
  await broken.store.close()
  const res = await broken.inject({ method: 'GET', url: '/ready' })
  t.equal(res.statusCode, 503)
  t.equal(res.json().message, 'Banco de dados indisponível')
})

t.test('an answer that ends after closing began carries Connection: close, ' +
  'so no keep-alive connection outlives the instance', async t => {
  const laravel = await startFakeLaravel(t)
  laravel.on('/api/user/profile', async (_req, res) => {
    await new Promise(resolve => setTimeout(resolve, 300))
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end('{"slow":true}')
  })
  const app = await buildTestApp(t, { BACKEND_URL: laravel.url })
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  const agent = new Agent({ keepAlive: true })
  t.teardown(() => agent.destroy())
  const before = await fetchWith(agent, `${address}/auth/health`)
  t.equal(before.headers.connection, 'keep-alive', 'keep-alive while serving')
  const slow = fetchWith(agent, `${address}/backend-api/user/profile`, { authorization: `Bearer ${userToken()}` })
  // Close once the request is in flight: the backend has it.
  while (!laravel.received.some(request => request.path === '/api/user/profile')) {
    await new Promise(resolve => setTimeout(resolve, 10))
  }
  const closed = app.close()
  const answer = await slow
  t.equal(answer.status, 200, 'the request in flight finished')
  t.equal(answer.headers.connection, 'close')
  await closed
})

async function fetchWith (
  agent: Agent, url: string, headers: Record<string, string> = {}
): Promise<{ status: number, headers: Record<string, string | string[] | undefined> }> {
  return await new Promise((resolve, reject) => {
    get(url, { agent, headers }, res => {
      res.resume()
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }))
    }).on('error', reject)
  })
}

t.test('probes log their access line at debug, and a drain\'s 503 at debug without a stack; other routes at info',
  async t => {
    const lines: Array<Record<string, unknown>> = []
    const app = await buildTestApp(t, {}, loggingOptions('debug', {
      write: line => { lines.push(JSON.parse(line) as Record<string, unknown>) }
    }))
    const accessLine = (url: string) => lines.find(line => line.msg === 'request completed' && line.url === url)
    await app.inject({ method: 'GET', url: '/ready' })
    await app.inject({ method: 'GET', url: '/auth/health' })
    await app.inject({ method: 'GET', url: '/provider-config' })
    t.match(accessLine('/ready'), { level: 20, statusCode: 200 }, 'readiness at debug')
    t.match(accessLine('/auth/health'), { level: 20, statusCode: 200 }, 'liveness at debug')
    t.match(accessLine('/provider-config'), { level: 30 }, 'any other route at info')

    lines.length = 0
    app.lifecycle.draining = true
    t.equal((await app.inject({ method: 'GET', url: '/ready' })).statusCode, 503)
    t.same(lines.filter(line => Number(line.level) > 20), [], 'nothing above debug while draining')
    const refusal = lines.find(line => line.msg === 'Instância em desligamento')
    t.match(refusal, { level: 20, code: 'BFF_DRAINING', statusCode: 503 }, 'the refusal, at debug')
    t.equal(refusal?.err, undefined, 'without the error and its stack')
    t.match(accessLine('/ready'), { level: 20, statusCode: 503 })
  })
