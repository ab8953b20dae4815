import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { localChangeFeed, type ChangeFeed } from '../change-feed/change-feed-core.js'
import { redisChangeFeed } from '../change-feed/redis-change-feed.js'
import { postgresChangeFeed } from '../change-feed/postgres-change-feed.js'
import type { ProofOptions } from '../change-feed/feed-proof.js'
import { dependencyHealth } from './metrics.js'
import { connectionSettings } from '../store/postgres-settings.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Aggregator item statuses and portfolio changes, fanned out to every instance. */
    changeFeed: ChangeFeed
  }
}

export interface ChangeFeedPluginOptions {
  /** `REDIS_URL`: fan-out through Redis, the first choice when several instances run. */
  redisUrl?: string
  /** `DATABASE_URL` when it is PostgreSQL: fan-out through `LISTEN/NOTIFY` without Redis. */
  postgresUrl?: string
  /** `DATABASE_LISTEN_URL`: the LISTEN connection's URL, direct to the database, when `postgresUrl` is a pooler's. */
  listenUrl?: string
  /** The heartbeats' interval and bound (feed-proof.ts); tests shorten them. */
  proof?: ProofOptions
}

/** What to check when LISTEN hears no heartbeat: the second half of the warning. */
function listenHint (listenUrl: string | undefined): string {
  return listenUrl === undefined
    ? 'LISTEN on DATABASE_URL hears nothing through a pooler in transaction mode (PgBouncer pool_mode=transaction): ' +
      'set DATABASE_LISTEN_URL to a direct connection to the same database (docs/deploy.md#poolers)'
    : 'DATABASE_LISTEN_URL must reach the same database as DATABASE_URL directly, not through a pooler in ' +
      'transaction mode (docs/deploy.md#poolers)'
}

async function changeFeed (app: FastifyInstance, options: ChangeFeedPluginOptions): Promise<void> {
  const health = dependencyHealth(app, 'change_feed')
  let feed: ChangeFeed
  if (options.redisUrl !== undefined) {
    feed = await redisChangeFeed(options.redisUrl, app.log, health, options.proof)
  } else if (options.postgresUrl !== undefined) {
    feed = await postgresChangeFeed({
      listen: connectionSettings(options.listenUrl ?? options.postgresUrl),
      notify: async (channel, payload) => { await app.store.notify(channel, payload) },
      hint: listenHint(options.listenUrl),
      health,
      ...options.proof === undefined ? {} : { proof: options.proof }
    }, app.log)
  } else {
    feed = localChangeFeed(app.log)
  }
  app.log.debug({ transport: feed.transport }, 'change feed ready')
  app.decorate('changeFeed', feed)
  // Whatever wrote it (REST, GraphQL, a host's own use of the store), a committed change of a
  // portfolio reaches this instance's listeners at once and the others through the feed: inside the
  // write's own transaction when the feed can (PostgreSQL), else published once it committed.
  const { announcement } = feed
  app.store.announceChangesWith(announcement)
  const stopTelling = app.store.onPortfolioChange(change => {
    if (announcement !== undefined) {
      feed.deliverPortfolioChange(change)
      return
    }
    feed.publishPortfolioChange(change).catch((error: unknown) => {
      app.log.warn({ err: error, change }, 'portfolio change not sent to the other instances')
    })
  })
  app.addHook('onClose', async () => {
    stopTelling()
    app.store.announceChangesWith(undefined)
    await feed.close()
  })
}

/**
 * The change feed (aggregator item statuses, portfolio changes): Redis when configured, else
 * PostgreSQL's LISTEN/NOTIFY, else in-process.
 */
export default fp(changeFeed, {
  name: 'bff-change-feed',
  fastify: '5.x',
  dependencies: ['bff-store'],
  decorators: { fastify: ['store'] }
})
