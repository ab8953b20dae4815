import t, { type Test } from 'tap'
import pg from 'pg'
import { Redis } from 'ioredis'
import { CHANGE_FEED_CHANNEL, localChangeFeed, type ChangeFeed } from '../../src/change-feed/change-feed-core.js'
import { redisChangeFeed } from '../../src/change-feed/redis-change-feed.js'
import { postgresChangeFeed } from '../../src/change-feed/postgres-change-feed.js'
import type { ItemStatus } from '../../src/schemas/item-status.js'
import type { PortfolioChange } from '../../src/change-feed/change-events.js'
import { DependencyHealth } from '../../src/observability/dependencies.js'
import { NEEDS_POSTGRES, POSTGRES_URL, testNeeding } from '../helper.js'
import { closedPort } from '../fixtures/fake-server.js'
import { capturedLog } from '../fixtures/captured-log.js'
import { NEEDS_REDIS, startRedis } from '../fixtures/redis.js'
import { until } from '../fixtures/until.js'

function watched (): ReturnType<typeof capturedLog> & { health: DependencyHealth } {
  const captured = capturedLog()
  return { ...captured, health: new DependencyHealth('change_feed', captured.log) }
}

const updatedAt = new Date().toISOString()
const status: ItemStatus = { itemId: 'item-1', status: 'UPDATED', event: 'item/updated', updatedAt }

/**
 * The portfolio changes a feed tells its listeners, as they come; `ours` leaves out those of other
 * test files, which publish on the same PostgreSQL database's channel while this one runs.
 */
function heard (
  feed: ChangeFeed, ours: (change: PortfolioChange) => boolean = () => true
): { changes: PortfolioChange[], until: (count: number) => Promise<void> } {
  const changes: PortfolioChange[] = []
  feed.onPortfolioChange(change => { if (ours(change)) changes.push(change) })
  return {
    changes,
    until: async count => { await until(`${count} changes heard`, () => changes.length >= count) }
  }
}

/** A stand-in for the store's pool: notifications sent as a write sends them. */
function notifier (
  t: Test, url = POSTGRES_URL
): { pool: pg.Pool, notify: (channel: string, payload: string) => Promise<void> } {
  const pool = new pg.Pool({ connectionString: url, connectionTimeoutMillis: 2000 })
  pool.on('error', () => {})
  t.teardown(async () => { await pool.end() })
  const notify = async (channel: string, payload: string): Promise<void> => {
    await pool.query('select pg_notify($1, $2)', [channel, payload])
  }
  return { pool, notify }
}

t.test('in-process: messages reach this process\'s listeners; an unsubscribed listener hears nothing more', async t => {
  const feed = localChangeFeed(capturedLog().log)
  t.equal(feed.transport, 'local')
  t.equal(feed.proven(), true, 'nothing to be cut off from')
  t.equal(feed.announcement, undefined, 'nothing to announce to')
  const listener = heard(feed)
  const stop = feed.onPortfolioChange(() => { throw new Error('a failing listener') })
  await feed.publishPortfolioChange({ kind: 'portfolio', portfolioId: 'p1', deleted: false })
  stop()
  t.equal(feed.portfolioListeners(), 1)
  feed.deliverPortfolioChange({ kind: 'all' })
  t.same(listener.changes, [{ kind: 'portfolio', portfolioId: 'p1', deleted: false }, { kind: 'all' }],
    'a failing listener does not keep the others from hearing')
  const statuses = feed.itemStatuses('item-1')
  await feed.publishItemStatus(status)
  t.same((await statuses.next()).value, status)
  await statuses.return?.()
  t.equal(feed.itemSubscribers(), 0)
  await feed.close()
})

testNeeding(t, 'PostgreSQL: another instance hears statuses and the changes a transaction announces if and only if ' +
  'it commits; the LISTEN connection ended by the server is unproven at once, comes back, and its listeners are ' +
  'told to read everything again', [NEEDS_POSTGRES], async t => {
  const url = new URL(POSTGRES_URL ?? '')
  const name = `bff-feed-${process.pid}`
  url.searchParams.set('application_name', name)
  const { log, health, lines } = watched()
  const { pool, notify } = notifier(t)
  const listener = await postgresChangeFeed({ listen: { connectionString: url.href }, notify, hint: 'h', health }, log)
  const publisher = await postgresChangeFeed({ listen: { connectionString: POSTGRES_URL }, notify, hint: 'h' },
    capturedLog().log)
  t.teardown(async () => { await listener.close(); await publisher.close() })
  t.equal(listener.transport, 'postgres')
  t.equal(listener.proven(), true, 'proven once started: its first heartbeat came back')
  t.match(lines, [], 'nothing to say')
  // Other test files publish on this database's channel too: this test's ids are its own.
  const itemId = `item-${process.pid}-${Date.now()}`
  const portfolioId = `p-${process.pid}-${Date.now()}`
  const ours = (change: PortfolioChange): boolean => change.kind === 'all' || change.portfolioId === portfolioId
  const received = listener.itemStatuses(itemId)
  const there = heard(listener, ours)
  const here = heard(publisher, ours)
  await publisher.publishItemStatus({ ...status, itemId })
  t.match((await received.next()).value, { ...status, itemId })

  // A change announced by a transaction that rolls back is never heard; one that commits is.
  const change: PortfolioChange = { kind: 'portfolio', portfolioId, deleted: true }
  const announcement = publisher.announcement?.([change])
  if (announcement === undefined) throw new Error('PostgreSQL announces in transactions')
  const connection = await pool.connect()
  await connection.query('begin')
  await connection.query(announcement.sql, announcement.parameters)
  await connection.query('rollback')
  await connection.query('begin')
  await connection.query(announcement.sql, announcement.parameters)
  await connection.query('commit')
  connection.release()
  publisher.deliverPortfolioChange(change)
  t.same(here.changes, [change], 'told here once it committed, never echoed')
  await there.until(1)
  t.same(there.changes, [change], 'the committed change only')

  const admin = new pg.Client({ connectionString: POSTGRES_URL })
  await admin.connect()
  await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1', [name])
  await admin.end()
  // Made again at once: unproven only until its first heartbeat is back, which the log lines show.
  await until('the feed said it is back', () => lines.some(line => line.msg === 'dependency available again'))
  t.match(lines, [{ msg: 'dependency unavailable' }, { msg: 'dependency available again' }],
    'unproven as the connection is lost, proven again: one line each way')
  await there.until(2)
  t.same(there.changes[1], { kind: 'all' }, 'what was published meanwhile may be lost: read everything again')
  t.equal(listener.proven(), true, 'proven again')
  await publisher.publishItemStatus({ ...status, itemId, status: 'LOGIN_ERROR' })
  t.match((await received.next()).value, { status: 'LOGIN_ERROR' }, 'heard again')
  await received.return?.()
  t.same(here.changes.length, 1, 'the publisher never heard its own messages twice')
})

testNeeding(t, 'PostgreSQL: a LISTEN that hears nothing (its heartbeats go elsewhere) is unproven with one warning ' +
  'saying why and what to do; once they come back it is proven and tells everything changed', [NEEDS_POSTGRES],
async t => {
  const { log, health, lines } = watched()
  const { notify } = notifier(t)
  let deaf = true
  const feed = await postgresChangeFeed({
    listen: { connectionString: POSTGRES_URL },
    // A pooler in transaction mode: the LISTEN's session never hears what is notified.
    notify: async (channel, payload) => { await notify(deaf ? 'bff_nowhere' : channel, payload) },
    hint: 'set DATABASE_LISTEN_URL',
    health
  }, log)
  t.teardown(async () => { await feed.close() })
  const there = heard(feed, change => change.kind === 'all')
  t.equal(feed.proven(), false, 'started unproven')
  const reason = /^change feed unproven: no heartbeat came back within 2000 ms; set DATABASE_LISTEN_URL$/
  t.match(lines, [{ msg: 'dependency unavailable', dependency: 'change_feed', err: { message: reason } }],
    'one line at start: why, and what to do')
  deaf = false
  await until('the feed proven', () => feed.proven())
  t.equal(feed.proven(), true, 'proven once heartbeats come back')
  t.match(lines, [{ msg: 'dependency unavailable' }, { msg: 'dependency available again' }])
  t.same(there.changes, [{ kind: 'all' }], 'whoever kept something reads it again')
})

t.test('a LISTEN connection not made at start does not stop the start; nothing is proven, sends fail', async t => {
  const { log, health, lines } = watched()
  const unreachable = `postgres://bff@127.0.0.1:${await closedPort(t)}/bff`
  const { notify } = notifier(t, unreachable)
  const feed = await postgresChangeFeed({ listen: { connectionString: unreachable }, notify, hint: 'h', health }, log)
  await t.rejects(feed.publishItemStatus(status), /ECONNREFUSED/)
  t.equal(feed.proven(), false, 'unproven: other instances\' changes are not heard')
  t.match(lines, [{ msg: 'dependency unavailable', dependency: 'change_feed' }])
  t.equal(lines.length, 1, 'one line')
  await feed.close()
})

testNeeding(t, 'Redis: another instance hears portfolio changes; a message that is not one is ignored with a line; ' +
  'unproven from the connection\'s loss until a heartbeat is back, then told to read everything again',
[NEEDS_REDIS], async t => {
  const redis = await startRedis(t)
  const { log, lines, health } = watched()
  const listener = await redisChangeFeed(redis.url, log, health)
  const publisher = await redisChangeFeed(redis.url, capturedLog().log)
  t.teardown(async () => { await listener.close(); await publisher.close() })
  t.equal(listener.proven(), true, 'proven once started')
  const there = heard(listener)
  const raw = new Redis(redis.url)
  t.teardown(() => { raw.disconnect() })
  t.equal((await raw.pubsub('NUMSUB', CHANGE_FEED_CHANNEL))[1], 2, 'both subscribed')
  await raw.publish(CHANGE_FEED_CHANNEL, '{"kind":"portfolio","change":{}}')
  await raw.publish(CHANGE_FEED_CHANNEL, 'not json')
  await publisher.publishPortfolioChange({ kind: 'portfolio', portfolioId: 'p2', deleted: false })
  await there.until(1)
  t.same(there.changes, [{ kind: 'portfolio', portfolioId: 'p2', deleted: false }])
  t.equal(lines.filter(line => line.msg === 'change feed message that is not one: ignored').length, 2)

  redis.kill()
  await until('the listener unproven', () => !listener.proven())
  t.equal(listener.proven(), false, 'Redis gone: unproven')
  await redis.restart()
  await until('the listener proven again', () => listener.proven())
  t.equal(listener.proven(), true, 'proven again')
  t.same(there.changes.at(-1), { kind: 'all' }, 'what was published meanwhile may be lost: read everything again')
  t.equal(lines.filter(line => line.msg === 'dependency unavailable').length, 1, 'one line each way')
  t.equal(lines.filter(line => line.msg === 'dependency available again').length, 1)
})
