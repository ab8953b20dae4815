import t, { type Test } from 'tap'
import type { App } from '../../src/app.js'
import { buildTestApp, freshDatabase, NEEDS_POSTGRES, POSTGRES_URL, testNeeding } from '../helper.js'
import { call, jsonHeaders } from '../fixtures/instance-reads.js'
import { until } from '../fixtures/until.js'
import { capturedLog } from '../fixtures/captured-log.js'
import { openEventStream, type EventStream } from '../fixtures/event-stream.js'
import { NEEDS_PGBOUNCER, startPgBouncer } from '../fixtures/pgbouncer.js'
import { NEEDS_REDIS, startRedis } from '../fixtures/redis.js'

/*
 * The change feed where operators run it (docs/deploy.md#poolers): two instances on one PostgreSQL
 * behind PgBouncer in transaction mode. Without DATABASE_LISTEN_URL the LISTEN hears nothing: B says so
 * once, keeps nothing in memory (so it is never stale) and its live valuation still moves; with it,
 * B hears A's changes as directly. The feed's connection cut under load (its pooler killed, Redis
 * killed): unproven at once, the same fallback, and proven again by itself. Every wait is a poll.
 */

const needs = [NEEDS_POSTGRES, NEEDS_PGBOUNCER]

/** The instance's `bff_dependency_up{dependency="change_feed"}`, from its metrics listener. */
async function feedGauge (app: App): Promise<string | undefined> {
  const text = await (await fetch(`${app.metricsAddress() ?? ''}/metrics`)).text()
  return /^bff_dependency_up\{dependency="change_feed"\} (\d)$/m.exec(text)?.[1]
}

/** Instances A and B sharing `env`'s database (B's own variables in `bEnv`); B's log lines kept, B listening. */
async function instances (t: Test, env: Record<string, string>, bEnv: Record<string, string> = {}) {
  const shared = { METRICS_PORT: '0', VALUATION_MIN_INTERVAL_MS: '0', RATE_LIMIT_MAX: '1000000000', ...env }
  const a = await buildTestApp(t, shared)
  const bLog = capturedLog()
  const b = await buildTestApp(t, { ...shared, ...bEnv }, { logger: { level: 'info', stream: bLog.stream } })
  const bUrl = await b.listen({ port: 0, host: '127.0.0.1' })
  const feedLines = (): Array<Record<string, unknown>> => bLog.lines.filter(line => line.dependency === 'change_feed')
  return { a, b, bUrl, feedLines }
}

/** A portfolio made on A with one asset, and B's live valuation stream of it. */
async function watchedOnB (t: Test, a: App, bUrl: string): Promise<{ id: string, stream: EventStream }> {
  const { id } = await call(a, 'POST', '/portfolios', { name: 'n0', userId: 'pooler' })
  await call(a, 'POST', '/portfolio-assets',
    { name: 'X', symbol: 'X', type: 'STOCK', quantity: 1, price: 10, portfolioId: id })
  const stream = await openEventStream(t, `${bUrl}/portfolios/${String(id)}/valuation/stream`, jsonHeaders)
  await stream.next(1)
  return { id: String(id), stream }
}

const bookValue = (stream: EventStream): unknown => JSON.parse(stream.events.at(-1)?.data ?? 'null')?.bookValue

/** A's asset bought again (quantity `n`, price 10): B's stream moves to n × 10. */
async function streamMoves (a: App, stream: EventStream, id: string, quantity: number): Promise<void> {
  const { id: assetId } = await call(a, 'POST', '/portfolio-assets',
    { name: 'Y', symbol: 'Y', type: 'STOCK', quantity, price: 10, portfolioId: id })
  await until(`B's stream moves (${quantity})`, () => typeof bookValue(stream) === 'number' &&
    (bookValue(stream) as number) >= 10 + quantity * 10)
  await a.inject({ method: 'DELETE', url: `/portfolio-assets/${String(assetId)}`, headers: jsonHeaders })
}

testNeeding(t, 'PgBouncer in transaction mode, no DATABASE_LISTEN_URL: B says once that its feed is unproven and ' +
  'which variable fixes it, answers every write of A at once (nothing kept), and its stream still moves', needs,
async t => {
  const bouncer = await startPgBouncer(t, POSTGRES_URL ?? '', 'transaction')
  const { env } = await freshDatabase(t, 'postgres', bouncer.url)
  const { a, b, bUrl, feedLines } = await instances(t, env)
  t.equal(b.changeFeed.transport, 'postgres')
  t.equal(b.changeFeed.proven(), false, 'LISTEN through the pooler hears nothing: unproven')
  t.match(feedLines(), [{ msg: 'dependency unavailable', err: { message: /DATABASE_LISTEN_URL/ } }])
  t.equal(feedLines().length, 1, 'one line at start-up, why and what to do')
  t.equal(await feedGauge(b), '0', 'bff_dependency_up{dependency="change_feed"} 0')

  const { id, stream } = await watchedOnB(t, a, bUrl)
  const path = `/portfolios/${id}`
  for (let change = 1; change <= 5; change++) {
    const renamed = await call(a, 'PATCH', path, { name: `n${change}` })
    const onB = await call(b, 'GET', path)
    t.same([onB.name, onB.etag], [`n${change}`, renamed.etag], `B answers change ${change} at once: never stale`)
  }
  await streamMoves(a, stream, id, 3)
  t.equal(feedLines().length, 1, 'still that one line')
})

for (const through of ['PgBouncer in transaction mode with DATABASE_LISTEN_URL direct', 'PostgreSQL direct'] as const) {
  testNeeding(t, `${through}: B is proven and hears A's changes through the feed, its stream moved by it`, needs,
    async t => {
      const pooled = through.startsWith('PgBouncer')
      const bouncer = pooled ? await startPgBouncer(t, POSTGRES_URL ?? '', 'transaction') : undefined
      const { env } = await freshDatabase(t, 'postgres', bouncer?.url)
      const listenUrl: Record<string, string> = pooled ? { DATABASE_LISTEN_URL: POSTGRES_URL ?? '' } : {}
      await heardThroughTheFeed(t, await instances(t, { ...env, ...listenUrl }))
    })
}

async function heardThroughTheFeed (
  t: Test, { a, b, bUrl, feedLines }: Awaited<ReturnType<typeof instances>>
): Promise<void> {
  t.equal(b.changeFeed.proven(), true, 'proven at start')
  t.same(feedLines(), [], 'nothing to say')
  t.equal(await feedGauge(b), '1')
  const { id, stream } = await watchedOnB(t, a, bUrl)
  const path = `/portfolios/${id}`
  const delays: number[] = []
  for (let change = 1; change <= 5; change++) {
    await call(b, 'GET', path)
    await call(a, 'PATCH', path, { name: `n${change}` })
    const answered = Date.now()
    await until(`B answers change ${change}`, async () => (await call(b, 'GET', path)).name === `n${change}`)
    delays.push(Date.now() - answered)
  }
  t.comment(`from A's answer to B's first read of the change: ${delays.join(', ')} ms`)
  await streamMoves(a, stream, id, 4)
}

/**
 * B's feed connection cut while A writes: unproven at once (B answers A's writes from the database,
 * its stream re-reads), then proven again by itself once `restore` has run.
 */
async function cutUnderLoad (
  t: Test, a: App, b: App, bUrl: string, cut: () => void, restore: () => Promise<void>
): Promise<void> {
  const { id, stream } = await watchedOnB(t, a, bUrl)
  const path = `/portfolios/${id}`
  const loading = { on: true }
  const load = (async () => {
    for (let step = 0; loading.on; step++) await call(a, 'POST', '/portfolios', { name: `l${step}`, userId: 'load' })
  })()
  t.teardown(() => { loading.on = false })
  await until('B proven', () => b.changeFeed.proven())
  await call(b, 'GET', path)
  cut()
  await until('B unproven', () => !b.changeFeed.proven())
  t.equal(await feedGauge(b), '0')
  for (let change = 1; change <= 3; change++) {
    await call(a, 'PATCH', path, { name: `cut-${change}` })
    t.equal((await call(b, 'GET', path)).name, `cut-${change}`, 'B answers from the database meanwhile')
  }
  await streamMoves(a, stream, id, 5)
  await restore()
  await until('B proven again by itself', () => b.changeFeed.proven())
  t.equal(await feedGauge(b), '1')
  await call(a, 'PATCH', path, { name: 'after' })
  await until('B hears through the feed again', async () => (await call(b, 'GET', path)).name === 'after')
  await streamMoves(a, stream, id, 6)
  loading.on = false
  await load
}

testNeeding(t, 'the LISTEN connection cut under load (its session pooler killed): unproven at once, the same ' +
  'fallback, proven again once it is back', needs, async t => {
  const writes = await startPgBouncer(t, POSTGRES_URL ?? '', 'transaction')
  // B listens through PgBouncer in session mode, where LISTEN works: killing it cuts B's feed alone.
  const listen = await startPgBouncer(t, POSTGRES_URL ?? '', 'session')
  const { env } = await freshDatabase(t, 'postgres', writes.url)
  const { a, b, bUrl, feedLines } = await instances(t, { ...env, DATABASE_LISTEN_URL: POSTGRES_URL ?? '' },
    { DATABASE_LISTEN_URL: listen.url })
  await cutUnderLoad(t, a, b, bUrl, () => { listen.kill() }, async () => { await listen.restart() })
  t.match(feedLines(), [{ msg: 'dependency unavailable' }, { msg: 'dependency available again' }])
})

testNeeding(t, 'the feed\'s Redis killed under load: unproven at once, the same fallback, proven again once it is back',
  [NEEDS_POSTGRES, NEEDS_REDIS], async t => {
    const redis = await startRedis(t)
    const { env } = await freshDatabase(t, 'postgres')
    const { a, b, bUrl, feedLines } = await instances(t, { ...env, REDIS_URL: redis.url })
    await cutUnderLoad(t, a, b, bUrl, () => { redis.kill() }, async () => { await redis.restart() })
    t.match(feedLines(), [{ msg: 'dependency unavailable' }, { msg: 'dependency available again' }])
  })
