import t, { type Test } from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import type { App } from '../../src/app.js'
import { PLUGGY_CLIENT_ID, PLUGGY_CLIENT_SECRET, startFakePluggy } from '../fixtures/fake-pluggy.js'
import { sendJson } from '../fixtures/fake-server.js'
import {
  apiKey, assertErrorBody, bearer, buildDataApp, buildTestApp, clientToken, forEachEngine, TEST_API_KEYS
} from '../helper.js'

type Headers = Record<string, string>
type Method = 'POST' | 'PATCH'
type Response = Promise<LightMyRequestResponse>

const withKey = (key: string, headers: Headers = apiKey()): Headers => ({ ...headers, 'idempotency-key': key })

/** A keyed request (by default with the API key). */
async function send (app: App, method: Method, url: string, key: string, payload: object, headers?: Headers): Response {
  return await app.inject({ method, url, headers: withKey(key, headers), payload: payload as Record<string, unknown> })
}

async function portfolioCount (app: App): Promise<number> {
  return (await app.inject({ method: 'GET', url: '/portfolios', headers: apiKey() })).json().length
}

const assetOf = (portfolioId: string): Record<string, unknown> =>
  ({ name: 'PETR4', symbol: 'PETR4', type: 'STOCK', quantity: 10, price: 30, portfolioId })

forEachEngine(t, 'a repeat with the key: the first answer byte for byte, marked replayed', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const first = await send(app, 'POST', '/portfolios', 'create-1', { name: 'Retried', userId: 'u1', description: 'x' })
  t.equal(first.statusCode, 201)
  t.equal(first.headers['idempotent-replayed'], undefined, 'the first answer is no replay')
  // The same body with its properties in another order is the same request.
  const repeat = await send(app, 'POST', '/portfolios', 'create-1', { description: 'x', userId: 'u1', name: 'Retried' })
  t.equal(repeat.statusCode, 201)
  t.equal(repeat.headers['idempotent-replayed'], 'true')
  t.equal(repeat.body, first.body, 'byte for byte')
  t.equal(repeat.headers['content-type'], first.headers['content-type'])
  t.equal(await portfolioCount(app), 1, 'one portfolio')

  const portfolioId = first.json().id as string
  const created = await send(app, 'POST', '/portfolio-assets', 'asset-1', assetOf(portfolioId))
  const again = await send(app, 'POST', '/portfolio-assets', 'asset-1', assetOf(portfolioId))
  t.equal(again.body, created.body)
  t.equal(again.headers['idempotent-replayed'], 'true')
  const detail = await app.inject({ method: 'GET', url: `/portfolios/${portfolioId}`, headers: apiKey() })
  t.equal(detail.json().assets.length, 1, 'one asset')

  // A PATCH keeps its ETag with its answer, and what caches may do with it (docs/api.md#caching).
  const assetUrl = `/portfolio-assets/${created.json().id as string}`
  const patched = await send(app, 'PATCH', assetUrl, 'patch-1', { quantity: 12 })
  const repatched = await send(app, 'PATCH', assetUrl, 'patch-1', { quantity: 12 })
  t.equal(patched.statusCode, 200)
  t.equal(repatched.body, patched.body)
  t.equal(repatched.headers.etag, patched.headers.etag)
  t.equal(repatched.headers['cache-control'], 'private, no-cache')
  t.equal(repatched.headers['idempotent-replayed'], 'true')
})

forEachEngine(t, 'the key with another request: 422 IDEMPOTENCY_KEY_REUSED, nothing changed', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  await send(app, 'POST', '/portfolios', 'shared', { name: 'First', userId: 'u1' })
  const otherBody = await send(app, 'POST', '/portfolios', 'shared', { name: 'Second', userId: 'u1' })
  t.equal(otherBody.statusCode, 422)
  assertErrorBody(t, otherBody.json(), 422, '/portfolios')
  t.equal(otherBody.json().code, 'IDEMPOTENCY_KEY_REUSED')
  const otherPath = await send(app, 'POST', '/portfolio-assets', 'shared', assetOf('x'))
  t.equal(otherPath.json().code, 'IDEMPOTENCY_KEY_REUSED', 'another route under the key')
  t.equal(await portfolioCount(app), 1)
})

t.test('a malformed key is 400 VALIDATION_FAILED and nothing runs', async t => {
  const app = await buildTestApp(t)
  const pattern = 'idempotency-key must match ^[A-Za-z0-9._:-]+$ regular expression'
  const cases: Array<[string, string[]]> = [
    ['', ['idempotency-key should not be empty', pattern]],
    ['two words', [pattern]],
    ['chave-é', [pattern]],
    ['k'.repeat(129), ['idempotency-key must be shorter than or equal to 128 characters']]
  ]
  for (const [key, messages] of cases) {
    const res = await send(app, 'POST', '/portfolios', key, { name: 'P', userId: 'u' })
    t.equal(res.statusCode, 400, JSON.stringify(key))
    assertErrorBody(t, res.json(), 400, '/portfolios')
    t.same(res.json(), { ...res.json(), code: 'VALIDATION_FAILED', message: messages })
  }
  const longest = await send(app, 'POST', '/portfolios', `Aa0._:-${'k'.repeat(121)}`, { name: 'P', userId: 'u' })
  t.equal(longest.statusCode, 201, '128 characters of the allowed set')
  t.equal(await portfolioCount(app), 1)
  t.equal(await app.store.idempotency.count(), 1, 'only the valid key was kept')
})

t.test('without a key nothing is kept and nothing more runs; a key costs two statements', async t => {
  const app = await buildTestApp(t, { METRICS_PORT: '0' })
  const statements = async (): Promise<number> => {
    const text = await (await fetch(`${app.metricsAddress() ?? ''}/metrics`)).text()
    const series = 'bff_store_query_duration_seconds_count{outcome="ok"} '
    const line = text.split('\n').find(entry => entry.startsWith(series))
    return Number(line?.split(' ').at(-1) ?? 0)
  }
  const before = await statements()
  for (let index = 0; index < 3; index++) {
    const payload = { name: 'P', userId: 'u' }
    t.equal((await app.inject({ method: 'POST', url: '/portfolios', headers: apiKey(), payload })).statusCode, 201)
  }
  // On SQLite a create alone is a group commit of one: begin, the insert, commit.
  const create = 3
  t.equal(await statements() - before, 3 * create, 'one insert per create, nothing else')
  t.equal(await app.store.idempotency.count(), 0)
  const keyed = await statements()
  await send(app, 'POST', '/portfolios', 'costed', { name: 'P', userId: 'u' })
  t.equal(await statements() - keyed, create + 2, 'the insert, the claim and the completion')
  const replayed = await statements()
  await send(app, 'POST', '/portfolios', 'costed', { name: 'P', userId: 'u' })
  t.equal(await statements() - replayed, 2, 'a replay: the claim that finds the key, and the read of its answer')
})

t.test('keys belong to the credential that sent them', async t => {
  const app = await buildTestApp(t)
  const [first, second] = TEST_API_KEYS as [string, string]
  const one = await send(app, 'POST', '/portfolios', 'mine', { name: 'P', userId: 'u' }, apiKey(first))
  const other = await send(app, 'POST', '/portfolios', 'mine', { name: 'P', userId: 'u' }, apiKey(second))
  t.equal(other.statusCode, 201)
  t.equal(other.headers['idempotent-replayed'], undefined, 'another API key runs its own request')
  t.not(other.json().id, one.json().id)

  const exclude = async (clientId: string): Response => {
    const payload = { client_id: clientId, transaction_id: 'tx-1', reason: 'Transferência' }
    const credential = bearer(clientToken({ sub: clientId }))
    return await send(app, 'POST', '/openfinance-excluded-transactions', 'ex-1', payload, credential)
  }
  const byClient = await exclude('c-1')
  t.equal(byClient.statusCode, 201)
  const repeat = await exclude('c-1')
  t.equal(repeat.statusCode, 201, 'the first answer, 201, not the 200 of an exclusion made again')
  t.equal(repeat.body, byClient.body)
  const anotherClient = await exclude('c-2')
  t.equal(anotherClient.statusCode, 201, 'another principal, the same key: its own request')
  t.equal(anotherClient.headers['idempotent-replayed'], undefined)
})

t.test('4xx answers are kept: the repeat is the same answer', async t => {
  const app = await buildTestApp(t)
  const first = await send(app, 'PATCH', '/portfolios/missing', 'patch-missing', { name: 'N' })
  t.equal(first.statusCode, 404)
  const repeat = await send(app, 'PATCH', '/portfolios/missing', 'patch-missing', { name: 'N' })
  t.equal(repeat.statusCode, 404)
  t.equal(repeat.headers['idempotent-replayed'], 'true')
  t.equal(repeat.body, first.body, 'the timestamp of the first answer too')
})

async function aggregatorApp (t: Test) {
  const pluggy = await startFakePluggy(t)
  const app = await buildTestApp(t, {
    AGGREGATOR_URL: pluggy.url,
    AGGREGATOR_TIMEOUT_MS: '5000',
    AGGREGATOR_CLIENT_ID: PLUGGY_CLIENT_ID,
    AGGREGATOR_CLIENT_SECRET: PLUGGY_CLIENT_SECRET
  })
  const tokenCalls = (): number => pluggy.received.filter(request => request.path === '/connect_token').length
  const connectToken = async (key: string): Response =>
    await send(app, 'POST', '/aggregator/connect_token', key, {}, bearer(clientToken({ sub: 'c-1' })))
  return { pluggy, app, tokenCalls, connectToken }
}

t.test('while the first request runs: 409 IDEMPOTENCY_KEY_IN_FLIGHT; then its answer is replayed', async t => {
  const { pluggy, tokenCalls, connectToken } = await aggregatorApp(t)
  let release = (): void => {}
  const held = new Promise<void>(resolve => { release = resolve })
  pluggy.on('/connect_token', async (_request, res) => {
    await held
    sendJson(res, 200, { accessToken: 'ct-only-one' })
  })
  const first = connectToken('connect-1')
  // The first request is with the aggregator: its key is in flight.
  while (tokenCalls() === 0) await new Promise(resolve => setTimeout(resolve, 10))
  const during = await connectToken('connect-1')
  t.equal(during.statusCode, 409)
  assertErrorBody(t, during.json(), 409, '/aggregator/connect_token')
  t.equal(during.json().code, 'IDEMPOTENCY_KEY_IN_FLIGHT')
  release()
  const answered = await first
  t.equal(answered.statusCode, 201)
  t.equal(answered.json().accessToken, 'ct-only-one')
  const after = await connectToken('connect-1')
  t.equal(after.body, answered.body, 'the same token')
  t.equal(after.headers['idempotent-replayed'], 'true')
  t.equal(tokenCalls(), 1, 'the aggregator was asked once')
})

t.test('a failed execution (5xx) releases its key: the retry runs', async t => {
  const { pluggy, app, tokenCalls, connectToken } = await aggregatorApp(t)
  let failing = true
  pluggy.on('/connect_token', (_request, res) => {
    if (failing) sendJson(res, 500, { message: 'down' })
    else sendJson(res, 200, { accessToken: 'ct-second-try' })
  })
  const failed = await connectToken('connect-2')
  t.equal(failed.statusCode, 502)
  t.equal(await app.store.idempotency.count(), 0, 'the key was released')
  failing = false
  const retried = await connectToken('connect-2')
  t.equal(retried.statusCode, 201)
  t.equal(retried.headers['idempotent-replayed'], undefined)
  t.equal(retried.json().accessToken, 'ct-second-try')
  t.equal(tokenCalls(), 2)
})
