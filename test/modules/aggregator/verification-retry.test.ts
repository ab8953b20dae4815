import t from 'tap'
import Fastify from 'fastify'
import { buildDataApp, buildTestApp, forEachEngine, freshDatabase } from '../../helper.js'
import { startFakePluggy } from '../../fixtures/fake-pluggy.js'
import { closedPort, sendJson } from '../../fixtures/fake-server.js'
import { backoffMs, JobRunner, MAX_RETRY_DELAY_MS } from '../../../src/domain/jobs.js'
import { ItemVerificationService, VERIFY_ITEM, type VerificationDeps } from '../../../src/domain/item-verifications.js'
import type { DataStore } from '../../../src/domain/ports.js'
import type { App } from '../../../src/app.js'
import {
  answersInTurn, captureLog, credentials, fails, item, lookups, quickRetries, waitFor, webhook
} from './verification-helpers.js'

const verifiedItem = async (app: App, itemId: string) => await app.store.aggregatorEvents.item(itemId)
const queueEmpty = async (app: App): Promise<boolean> => (await app.store.jobs.count(VERIFY_ITEM)) === 0
const entry = async (app: App, itemId: string) => await app.store.jobs.entry(VERIFY_ITEM, itemId)
const VERIFIED = 'webhook item verified'

forEachEngine(t, 'a failed verification is retried until the item is verified, without another webhook', async (
  t, engine
) => {
  const pluggy = await startFakePluggy(t)
  pluggy.on('/items/i1', answersInTurn(fails(500), fails(503), item('i1', 'LOGIN_ERROR', 'client-7')))
  const { lines, logger } = captureLog()
  const app = await buildDataApp(t, engine, { AGGREGATOR_URL: pluggy.url, ...credentials, ...quickRetries })
  const logged = await buildTestApp(t, { AGGREGATOR_URL: pluggy.url, ...credentials, ...quickRetries }, { logger })
  t.same(await webhook(app, 'i1', 'item/updated'), { received: true }, 'the sender hears back at once')
  await waitFor(t, 'the item verified', async () => (await verifiedItem(app, 'i1')) !== undefined)
  t.match(await verifiedItem(app, 'i1'), { status: 'LOGIN_ERROR', clientUserId: 'client-7', lastEvent: 'item/updated' })
  t.equal(lookups(pluggy, 'i1'), 3, 'two failures, then the answer')
  // Saved, then removed from the queue: the removal may come a moment after.
  await waitFor(t, 'a verified item leaves the queue', async () => await queueEmpty(app))

  // The same with a log to read: the failures and the retry say so.
  pluggy.on('/items/i2', answersInTurn(fails(500), fails(502), item('i2')))
  await webhook(logged, 'i2')
  const third = (line: Record<string, unknown>): boolean => line.msg === VERIFIED && line.verificationAttempt === 3
  await waitFor(t, 'i2 verified on its third attempt', () => lines.some(third))
  t.match(lines.find(line => line.msg === 'webhook item verification failed: retried later'), {
    itemId: 'i2', event: 'item/updated', reason: /BFF_UPSTREAM_UNAVAILABLE/, nextAttemptAt: String, expiresAt: String
  })
  t.match(lines.find(line => line.msg === 'webhook item verification failed again: retried later'), {
    itemId: 'i2', attempts: 2
  })
  t.match(lines.find(third), { itemId: 'i2' })
  t.match(await verifiedItem(logged, 'i2'), { status: 'UPDATED' })
})

forEachEngine(t, 'an item already queued keeps one entry and takes the newer event', async (t, engine) => {
  const pluggy = await startFakePluggy(t)
  let up = false
  pluggy.on('/items/i1', async (_req, res) => { up ? item('i1', 'UPDATED')(res) : fails(500)(res) })
  const app = await buildDataApp(t, engine, { AGGREGATOR_URL: pluggy.url, ...credentials, ...quickRetries })
  await webhook(app, 'i1', 'item/created')
  await waitFor(t, 'the first event queued', async () => (await entry(app, 'i1')) !== undefined)
  await webhook(app, 'i1', 'item/login_succeeded')
  const newer = async (): Promise<boolean> =>
    (await entry(app, 'i1'))?.payload.event === 'item/login_succeeded'
  await waitFor(t, 'the newer event queued', newer)
  t.equal(await app.store.jobs.count(VERIFY_ITEM), 1, 'one entry for the item')
  up = true
  // The entry goes once the item is verified for the newer event.
  await waitFor(t, 'the queue empty', async () => await queueEmpty(app))
  t.match(await verifiedItem(app, 'i1'), { status: 'UPDATED', lastEvent: 'item/login_succeeded' })
})

t.test('a definitive answer ends the retries: an unknown item, an unusable answer', async t => {
  const pluggy = await startFakePluggy(t)
  pluggy.on('/items/gone', answersInTurn(fails(500), fails(404)))
  pluggy.on('/items/odd', answersInTurn(fails(500), res => { sendJson(res, 200, { id: 'odd' }) }))
  pluggy.on('/items/refused', answersInTurn(fails(500), fails(400)))
  const app = await buildTestApp(t, { AGGREGATOR_URL: pluggy.url, ...credentials, ...quickRetries })
  const ids = ['gone', 'odd', 'refused']
  for (const id of ids) await webhook(app, id)
  await waitFor(t, 'every entry queued and then settled', () => ids.every(id => lookups(pluggy, id) >= 2))
  await waitFor(t, 'the queue empty', async () => await queueEmpty(app))
  for (const id of ['gone', 'odd', 'refused']) {
    t.equal(await app.store.aggregatorEvents.item(id), undefined, `${id}: no item changed`)
  }
  await app.close()
  t.same(['gone', 'odd', 'refused'].map(id => lookups(pluggy, id)), [2, 2, 2], 'asked no more after the answer')
})

t.test('the aggregator\'s 429 and Retry-After: retried no sooner than asked', async t => {
  const pluggy = await startFakePluggy(t)
  const busy = (seconds: string) => (res: import('node:http').ServerResponse) => {
    res.writeHead(429, { 'content-type': 'application/json', 'retry-after': seconds })
    res.end('{"message":"Too many requests","code":429}')
  }
  pluggy.on('/items/busy', answersInTurn(busy('0'), busy('0'), item('busy')))
  pluggy.on('/items/later', answersInTurn(busy('120')))
  const app = await buildTestApp(t, { AGGREGATOR_URL: pluggy.url, ...credentials, ...quickRetries })
  await webhook(app, 'busy')
  await waitFor(t, 'busy verified', async () => (await app.store.aggregatorEvents.item('busy')) !== undefined)
  t.equal(lookups(pluggy, 'busy'), 3)

  const before = Date.now()
  await webhook(app, 'later')
  await waitFor(t, 'later queued', async () => (await entry(app, 'later')) !== undefined)
  const queued = await entry(app, 'later')
  t.match(queued, { attempts: 1, lastError: 'aggregator answered 429' })
  t.ok(Date.parse(queued?.nextAttemptAt ?? '') >= before + 120_000, 'not before the aggregator\'s Retry-After')
})

t.test('a spent aggregator budget queues the verification until the budget is back', async t => {
  const pluggy = await startFakePluggy(t)
  pluggy.items.set('first', 'client-1')
  pluggy.items.set('second', 'client-1')
  // POST /auth and the first lookup spend the budget of 2.
  const app = await buildTestApp(t, { AGGREGATOR_URL: pluggy.url, ...credentials, AGGREGATOR_REQUESTS_PER_MINUTE: '2' })
  await webhook(app, 'first')
  await waitFor(t, 'first verified', async () => (await app.store.aggregatorEvents.item('first')) !== undefined)
  const before = Date.now()
  await webhook(app, 'second')
  await waitFor(t, 'second queued', async () => (await entry(app, 'second')) !== undefined)
  const queued = await entry(app, 'second')
  t.match(queued?.lastError, /BFF_RATE_LIMITED/)
  t.ok(Date.parse(queued?.nextAttemptAt ?? '') >= before + 1000, 'no sooner than the budget allows')
  t.equal(lookups(pluggy, 'second'), 0, 'nothing was sent past the budget')
})

const EXPIRY = 'an entry past its expiry is dropped and logged; the expiry is AGGREGATOR_VERIFY_EXPIRY_SECONDS'
forEachEngine(t, EXPIRY, async (t, engine) => {
  const { lines, logger } = captureLog()
  const down = `http://127.0.0.1:${await closedPort(t)}`
  const config = { AGGREGATOR_URL: down, ...credentials, ...quickRetries, AGGREGATOR_VERIFY_EXPIRY_SECONDS: '3600' }
  const app = await buildTestApp(t, { ...config, ...(await freshDatabase(t, engine)).env }, { logger })
  await webhook(app, 'down')
  await waitFor(t, 'the entry queued', async () => (await entry(app, 'down')) !== undefined)
  const queued = await entry(app, 'down')
  t.equal(Date.parse(queued?.expiresAt ?? '') - Date.parse(queued?.requestedAt ?? ''), 3_600_000)

  const past = new Date(Date.now() - 1000).toISOString()
  await app.store.write(async work => await work.jobs.lockOrInsert({
    kind: VERIFY_ITEM,
    key: 'stale',
    payload: { event: 'item/updated' },
    attempts: 1,
    requestedAt: past,
    nextAttemptAt: past,
    expiresAt: past,
    lastError: 'BFF_UPSTREAM_UNAVAILABLE'
  }))
  const dropped = 'webhook item verification expired: dropped'
  await waitFor(t, 'the drop logged', () => lines.some(line => line.msg === dropped))
  t.match(lines.find(line => line.msg === dropped), {
    itemId: 'stale', event: 'item/updated', attempts: 1, lastError: 'BFF_UPSTREAM_UNAVAILABLE'
  })
  t.equal(await entry(app, 'stale'), undefined, 'the entry is gone')
  t.equal(await app.store.aggregatorEvents.item('stale'), undefined, 'no item changed')
  t.match(await entry(app, 'down'), { key: 'down' }, 'an entry not yet expired stays')
})

t.test('backoff: from the first delay, doubling, capped, jittered, never sooner than asked', async t => {
  const kind = { retryMs: 1000, run: async () => ({ result: 'done' as const }), failed: async () => {} }
  const at = (random: () => number, failures: number, retryAfterMs?: number, retryMs = 1000): number => {
    const jobs = new JobRunner({} as unknown as DataStore['jobs'], new Map(), Fastify().log, undefined, random)
    return Date.parse(jobs.nextAttemptAt({ ...kind, retryMs }, failures, retryAfterMs)) - Date.now()
  }
  const low = () => 0
  const high = () => 1
  const near = (value: number, expected: number, what: string) => {
    t.ok(Math.abs(value - expected) < 500, `${what}: ${value} ≈ ${expected}`)
  }
  near(at(low, 1), 500, 'first retry, least jitter')
  near(at(high, 1), 1000, 'first retry, most')
  near(at(high, 4), 8000, 'doubling')
  near(at(high, 40), MAX_RETRY_DELAY_MS, 'capped')
  near(at(high, 5000), MAX_RETRY_DELAY_MS, 'capped, however many failures')
  near(at(low, 1, 30_000), 30_000, 'never sooner than the aggregator asks')
  near(at(high, 3, undefined, 2 * MAX_RETRY_DELAY_MS), 2 * MAX_RETRY_DELAY_MS, 'a first delay above the cap is the cap')
  t.equal(backoffMs(1000, 1, low), 500, 'the wait itself: half the delay at least')
})

t.test('a store that fails is logged, never thrown: queueing after a failure, and a look at the queue', async t => {
  const { lines, logger } = captureLog()
  const log = Fastify({ logger }).log
  const broken = async (): Promise<never> => { throw new Error('store down') }
  const jobs = { dropExpired: broken } as unknown as DataStore['jobs']
  const store = { jobs, write: broken } as unknown as DataStore
  const deps: VerificationDeps = {
    aggregator: { configured: true, call: async () => { throw new Error('aggregator down') } },
    store,
    changeFeed: { publishItemStatus: async () => {} },
    runner: () => runner,
    afterUpdate: async () => {}
  }
  const verifications = new ItemVerificationService(deps)
  const runner = new JobRunner(jobs, new Map([
    [VERIFY_ITEM, verifications.kind]
  ]), log, { pollMs: 5, leaseMs: 1000 })
  verifications.afterWebhook('i1', 'item/updated', log)
  runner.start()
  const storeDown = (line: Record<string, unknown>): boolean => /store down/.test(JSON.stringify(line.err))
  await waitFor(t, 'both failures logged', () => lines.filter(storeDown).length >= 2)
  await runner.close()
  t.match(lines.find(line => line.msg === 'webhook item verification failed and could not be queued for a retry'), {
    itemId: 'i1', err: { message: 'store down' }
  })
  t.match(lines.find(line => line.msg === 'job queue: the store could not be read or written'), {
    err: { message: 'store down' }
  })
})
