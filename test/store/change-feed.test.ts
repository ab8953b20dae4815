import t from 'tap'
import pg from 'pg'
import { Redis } from 'ioredis'
import {
  CHANGE_FEED_CHANNEL, localChangeFeed, postgresChangeFeed, redisChangeFeed, type ChangeFeed
} from '../../src/store/change-feed.js'
import type { ItemStatus } from '../../src/store/item-status.js'
import type { PortfolioChange } from '../../src/store/changes.js'
import { DependencyHealth } from '../../src/observability/dependencies.js'
import { NEEDS_POSTGRES, POSTGRES_URL, testNeeding } from '../helper.js'
import { closedPort } from '../fixtures/fake-server.js'
import { capturedLog } from '../fixtures/captured-log.js'
import { NEEDS_REDIS, startRedis } from '../fixtures/redis.js'

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
    until: async count => {
      for (let attempt = 0; attempt < 400 && changes.length < count; attempt++) {
        await new Promise(resolve => setTimeout(resolve, 25))
      }
    }
  }
}

async function until (condition: () => boolean): Promise<void> {
  for (let attempt = 0; attempt < 400 && !condition(); attempt++) await new Promise(resolve => setTimeout(resolve, 25))
}

t.test('in-process: messages reach this process\'s listeners; an unsubscribed listener hears nothing more', async t => {
  const feed = localChangeFeed(capturedLog().log)
  t.equal(feed.transport, 'local')
  t.equal(feed.linked(), true, 'nothing to be cut off from')
  const listener = heard(feed)
  const stop = feed.onPortfolioChange(() => { throw new Error('a failing listener') })
  await feed.publishPortfolioChange({ kind: 'portfolio', portfolioId: 'p1', deleted: false })
  stop()
  t.equal(feed.portfolioListeners(), 1)
  await feed.publishPortfolioChange({ kind: 'all' })
  t.same(listener.changes, [{ kind: 'portfolio', portfolioId: 'p1', deleted: false }, { kind: 'all' }],
    'a failing listener does not keep the others from hearing')
  const statuses = feed.itemStatuses('item-1')
  await feed.publishItemStatus(status)
  t.same((await statuses.next()).value, status)
  await statuses.return?.()
  t.equal(feed.itemSubscribers(), 0)
  await feed.close()
})

testNeeding(t, 'PostgreSQL: another instance hears statuses and portfolio changes once (its own at once, no echo); ' +
  'the LISTEN connection ended by the server comes back, and its listeners are told to read everything again',
[NEEDS_POSTGRES], async t => {
  const url = new URL(POSTGRES_URL ?? '')
  const name = `bff-feed-${process.pid}`
  url.searchParams.set('application_name', name)
  const { log, health, lines } = watched()
  const listener = await postgresChangeFeed({ connectionString: url.href }, log, health)
  const publisher = await postgresChangeFeed({ connectionString: POSTGRES_URL }, capturedLog().log)
  t.teardown(async () => { await listener.close(); await publisher.close() })
  t.equal(listener.transport, 'postgres')
  t.equal(listener.linked(), true, 'listening once started')
  // Other test files publish on this database's channel too: this test's ids are its own.
  const itemId = `item-${process.pid}-${Date.now()}`
  const portfolioId = `p-${process.pid}-${Date.now()}`
  const ours = (change: PortfolioChange): boolean => change.kind === 'all' || change.portfolioId === portfolioId
  const received = listener.itemStatuses(itemId)
  const there = heard(listener, ours)
  const here = heard(publisher, ours)
  await publisher.publishItemStatus({ ...status, itemId })
  t.match((await received.next()).value, { ...status, itemId })
  await publisher.publishPortfolioChange({ kind: 'portfolio', portfolioId, deleted: true })
  t.same(here.changes, [{ kind: 'portfolio', portfolioId, deleted: true }], 'told here at once')
  await there.until(1)
  t.same(there.changes, [{ kind: 'portfolio', portfolioId, deleted: true }])

  const admin = new pg.Client({ connectionString: POSTGRES_URL })
  await admin.connect()
  await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1', [name])
  await admin.end()
  for (let attempt = 0; attempt < 400 && !lines.some(line => line.msg === 'dependency available again'); attempt++) {
    await new Promise(resolve => setTimeout(resolve, 25))
  }
  t.match(lines, [{ msg: 'dependency unavailable' }, { msg: 'dependency available again' }], 'one line each way')
  await there.until(2)
  t.same(there.changes[1], { kind: 'all' }, 'what was published meanwhile may be lost: read everything again')
  t.equal(listener.linked(), true, 'linked again')
  await publisher.publishItemStatus({ ...status, itemId, status: 'LOGIN_ERROR' })
  t.match((await received.next()).value, { status: 'LOGIN_ERROR' }, 'heard again')
  await received.return?.()
  t.same(here.changes.length, 1, 'the publisher never heard its own messages twice')
})

t.test('a LISTEN connection not made at start does not stop the start; publish fails until it is', async t => {
  const { log, health, lines } = watched()
  const feed = await postgresChangeFeed({
    connectionString: `postgres://bff@127.0.0.1:${await closedPort(t)}/bff`
  }, log, health)
  await t.rejects(feed.publishItemStatus(status), /connection down/)
  t.equal(feed.linked(), false, 'not linked: other instances\' changes are not heard')
  t.match(lines, [{ msg: 'dependency unavailable', dependency: 'change_feed' }])
  await feed.close()
})

testNeeding(t, 'Redis: another instance hears portfolio changes; a message that is not one is ignored with a line; ' +
  'linked from the subscription to the connection\'s loss, then told to read everything again',
[NEEDS_REDIS], async t => {
  const redis = await startRedis(t)
  const { log, lines } = capturedLog()
  const listener = await redisChangeFeed(redis.url, log)
  const publisher = await redisChangeFeed(redis.url, capturedLog().log)
  t.teardown(async () => { await listener.close(); await publisher.close() })
  const there = heard(listener)
  const raw = new Redis(redis.url)
  t.teardown(() => { raw.disconnect() })
  // Both subscribed: a message sent now reaches them.
  for (let attempt = 0; attempt < 400 && (await raw.pubsub('NUMSUB', CHANGE_FEED_CHANNEL))[1] !== 2; attempt++) {
    await new Promise(resolve => setTimeout(resolve, 25))
  }
  await raw.publish(CHANGE_FEED_CHANNEL, '{"kind":"portfolio","change":{}}')
  await raw.publish(CHANGE_FEED_CHANNEL, 'not json')
  await publisher.publishPortfolioChange({ kind: 'portfolio', portfolioId: 'p2', deleted: false })
  await there.until(1)
  t.same(there.changes, [{ kind: 'portfolio', portfolioId: 'p2', deleted: false }])
  t.equal(lines.filter(line => line.msg === 'change feed message that is not one: ignored').length, 2)
  t.equal(listener.linked(), true)

  redis.kill()
  await until(() => !listener.linked())
  t.equal(listener.linked(), false, 'Redis gone: not linked')
  await redis.restart()
  await until(() => listener.linked())
  t.equal(listener.linked(), true, 'subscribed again')
  t.same(there.changes.at(-1), { kind: 'all' }, 'what was published meanwhile may be lost: read everything again')
})
