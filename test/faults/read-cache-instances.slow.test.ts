import t, { type Test } from 'tap'
import pg from 'pg'
import type { App } from '../../src/app.js'
import { buildTestApp, freshDatabase, NEEDS_POSTGRES, testNeeding } from '../helper.js'
import { call } from '../fixtures/instance-reads.js'
import { until } from '../fixtures/until.js'
import { capturedLog } from '../fixtures/captured-log.js'
import { NEEDS_REDIS, startRedis } from '../fixtures/redis.js'

/*
 * The read cache across two instances on one PostgreSQL (docs/api.md#caching): a write on A is
 * answered by B's reads once the change feed delivers it (Redis, or LISTEN/NOTIFY); while B's link
 * to the feed is down B answers from the database, so a write it was not told of is never hidden;
 * a write no feed tells at all (made in the database directly) is answered once the kept read is
 * older than the cache's time to live. Every wait is a poll: no delay is asserted.
 */

/** Two instances on one fresh database; B's log lines are kept. */
async function instances (t: Test, env: Record<string, string>) {
  const database = await freshDatabase(t, 'postgres')
  const shared = { ...database.env, ...env }
  const a = await buildTestApp(t, shared)
  const bLog = capturedLog()
  const b = await buildTestApp(t, shared, { logger: { level: 'info', stream: bLog.stream } })
  // The database's URL with the schema as its search_path, for the test's own statements.
  return { a, b, bLines: bLog.lines, databaseUrl: database.searchPathUrl }
}

/** A's writes (a rename, a new asset) answered by B's reads once the feed delivers them. */
async function writesSeenAcross (t: Test, a: App, b: App) {
  const { id } = await call(a, 'POST', '/portfolios', { name: 'n0', userId: 'cache' })
  const path = `/portfolios/${String(id)}`
  t.equal((await call(b, 'GET', path)).name, 'n0')
  t.equal((await call(b, 'GET', `${path}/value`)).totalValue, 0)
  const renamed = await call(a, 'PATCH', path, { name: 'n1' })
  t.equal((await call(a, 'GET', path)).name, 'n1', 'A answers its own write at once')
  await until('B answers the rename', async () => (await call(b, 'GET', path)).name === 'n1')
  t.equal((await call(b, 'GET', path)).etag, renamed.etag, 'the same tag on both')
  const asset = { name: 'X', symbol: 'X', type: 'STOCK', quantity: 2, price: 5, portfolioId: id }
  await call(a, 'POST', '/portfolio-assets', asset)
  await until('B answers the new value', async () => (await call(b, 'GET', `${path}/value`)).totalValue === 10)
  await until('B answers the new asset', async () => (await call(b, 'GET', path)).assets.length === 1)
  return { id: String(id), path }
}

testNeeding(t, 'Redis: A\'s writes are answered by B once the feed delivers them; while B\'s link is down it reads ' +
  'the database, so a write it could not hear of is answered at once; linked again, it hears again',
[NEEDS_POSTGRES, NEEDS_REDIS], async t => {
  const redis = await startRedis(t)
  const { a, b, bLines } = await instances(t, { REDIS_URL: redis.url })
  await until('both subscribed', () => a.changeFeed.proven() && b.changeFeed.proven())
  const { path } = await writesSeenAcross(t, a, b)

  t.equal((await call(b, 'GET', path)).name, 'n1', 'kept on B')
  redis.kill()
  const feedLost = (): boolean =>
    bLines.some(line => line.msg === 'dependency unavailable' && line.dependency === 'change_feed')
  await until('B sees its link lost', feedLost)
  t.equal(b.changeFeed.proven(), false)
  await call(a, 'PATCH', path, { name: 'while-down' })
  t.equal((await call(b, 'GET', path)).name, 'while-down', 'B was not told, and answers it at once from the database')

  await redis.restart()
  await until('B linked again', () => b.changeFeed.proven() && a.changeFeed.proven())
  t.equal((await call(b, 'GET', path)).name, 'while-down')
  await call(a, 'PATCH', path, { name: 'after' })
  await until('B answers a write made once linked again', async () => (await call(b, 'GET', path)).name === 'after')
})

testNeeding(t, 'LISTEN/NOTIFY: A\'s writes are answered by B once the feed delivers them; a write no feed tells is ' +
  'answered once the kept read is older than the time to live', [NEEDS_POSTGRES], async t => {
  const { a, b, databaseUrl } = await instances(t, {})
  t.equal(b.changeFeed.transport, 'postgres')
  const { id, path } = await writesSeenAcross(t, a, b)

  t.equal((await call(b, 'GET', path)).name, 'n1', 'kept on B')
  const direct = new pg.Client({ connectionString: databaseUrl })
  await direct.connect()
  t.teardown(async () => { await direct.end() })
  await direct.query('update portfolios set name = $1, version = version + 1 where id = $2', ['untold', id])
  await until('B answers the untold write', async () => (await call(b, 'GET', path)).name === 'untold')
})
