import { Readable } from 'node:stream'
import t, { type Test } from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { buildApp, type App } from '../../src/app.js'
import { PLUGGY_CLIENT_ID, PLUGGY_CLIENT_SECRET, startFakePluggy } from '../fixtures/fake-pluggy.js'
import { sendJson } from '../fixtures/fake-server.js'
import { apiKey, bearer, buildTestApp, clientToken, testConfig } from '../helper.js'

type Headers = Record<string, string>
const IDEMPOTENT = { config: { idempotent: true } }

/** The app with extra routes of a host (the option works on any route), ready. */
async function appWith (t: Test, routes: (app: App) => void, overrides: Headers = {}): Promise<App> {
  const app = await buildApp(testConfig(overrides))
  t.teardown(() => app.close())
  routes(app)
  await app.ready()
  return app
}

const keyed = (key: string, headers: Headers = apiKey()): Headers => ({ ...headers, 'idempotency-key': key })

async function post (app: App, url: string, headers: Headers, payload: unknown = {}): Promise<LightMyRequestResponse> {
  return await app.inject({ method: 'POST', url, headers, payload: payload as Record<string, unknown> })
}

t.test('a route without a credential runs every request: a key needs an owner', async t => {
  let runs = 0
  const app = await appWith(t, app => { app.post('/open', IDEMPOTENT, async () => ({ runs: ++runs })) })
  const first = await post(app, '/open', { 'idempotency-key': 'k' })
  const second = await post(app, '/open', { 'idempotency-key': 'k' })
  t.same([first.json(), second.json()], [{ runs: 1 }, { runs: 2 }])
  t.equal(await app.store.idempotency.count(), 0)
})

t.test('the same body in another key order is the same request, arrays in order', async t => {
  let runs = 0
  const app = await appWith(t, app => { app.post('/nested', IDEMPOTENT, async () => ({ runs: ++runs })) })
  const first = await post(app, '/nested', keyed('nested'), { b: [1, { y: 1, x: 2 }], a: null })
  const reordered = await post(app, '/nested', keyed('nested'), { a: null, b: [1, { x: 2, y: 1 }] })
  t.equal(reordered.body, first.body)
  t.equal(reordered.headers['idempotent-replayed'], 'true')
  const otherArray = await post(app, '/nested', keyed('nested'), { a: null, b: [{ x: 2, y: 1 }, 1] })
  t.equal(otherArray.statusCode, 422, 'another order of an array is another body')
  t.equal(runs, 1)
})

t.test('an answer without a body is kept; a streamed one cannot be, and releases its key', async t => {
  let runs = 0
  const app = await appWith(t, app => {
    app.post('/empty', IDEMPOTENT, async (_request, reply) => {
      runs++
      return await reply.code(202).send()
    })
    app.post('/stream', IDEMPOTENT, async (_request, reply) => {
      runs++
      return await reply.header('content-type', 'application/json').send(Readable.from(['{"streamed":true}']))
    })
  })
  const empty = await post(app, '/empty', keyed('empty'))
  const emptyAgain = await post(app, '/empty', keyed('empty'))
  t.equal(emptyAgain.statusCode, 202)
  t.equal(emptyAgain.body, empty.body)
  t.equal(emptyAgain.headers['idempotent-replayed'], 'true')
  t.equal(runs, 1)
  t.same((await post(app, '/stream', keyed('stream'))).json(), { streamed: true })
  const streamedAgain = await post(app, '/stream', keyed('stream'))
  t.equal(streamedAgain.headers['idempotent-replayed'], undefined, 'run again')
  t.equal(runs, 3)
})

t.test('an answer that cannot be kept is still sent; its key stays in flight until the lease ends', async t => {
  const app = await buildTestApp(t)
  app.store.idempotency.complete = async () => { throw new Error('the store went away') }
  const payload = { name: 'P', userId: 'u' }
  t.equal((await post(app, '/portfolios', keyed('lost'), payload)).statusCode, 201)
  t.equal((await post(app, '/portfolios', keyed('lost'), payload)).json().code, 'IDEMPOTENCY_KEY_IN_FLIGHT')
})

t.test('a failed sweep is logged and the instance keeps serving; the next sweep runs', async t => {
  const lines: string[] = []
  const app = await buildApp(testConfig({ IDEMPOTENCY_TTL_SECONDS: '1' }))
  t.teardown(() => app.close())
  let sweeps = 0
  app.store.idempotency.sweep = async () => { sweeps++; throw new Error('the store went away') }
  app.log.warn = ((_object: unknown, message: string) => { lines.push(message) }) as typeof app.log.warn
  await app.ready()
  // eslint-disable-next-line no-unmodified-loop-condition -- the failing sweep counts, on the instance's timer
  while (sweeps < 2) await new Promise(resolve => setTimeout(resolve, 100))
  t.ok(lines.includes('expired idempotency keys not swept'))
  t.equal((await app.inject({ method: 'GET', url: '/portfolios', headers: apiKey() })).statusCode, 200)
})

t.test('an upstream\'s 4xx relayed as received is kept, byte for byte', async t => {
  const pluggy = await startFakePluggy(t)
  const app = await buildTestApp(t, {
    AGGREGATOR_URL: pluggy.url,
    AGGREGATOR_CLIENT_ID: PLUGGY_CLIENT_ID,
    AGGREGATOR_CLIENT_SECRET: PLUGGY_CLIENT_SECRET
  })
  pluggy.on('/connect_token', (_request, res) => {
    sendJson(res, 400, { code: 400, message: 'Invalid parameters', codeDescription: 'X' })
  })
  const headers = keyed('refused', bearer(clientToken({ sub: 'c-1' })))
  const first = await post(app, '/aggregator/connect_token', headers)
  t.equal(first.statusCode, 400)
  const again = await post(app, '/aggregator/connect_token', headers)
  t.equal(again.statusCode, 400)
  t.equal(again.body, first.body)
  t.equal(again.headers['content-type'], first.headers['content-type'])
  t.equal(again.headers['idempotent-replayed'], 'true')
  t.equal(pluggy.received.filter(request => request.path === '/connect_token').length, 1)
})
