import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { localChangeFeed, postgresChangeFeed, redisChangeFeed, type ChangeFeed } from '../store/change-feed.js'
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
}

async function changeFeed (app: FastifyInstance, options: ChangeFeedPluginOptions): Promise<void> {
  const health = dependencyHealth(app, 'change_feed')
  const feed =
    options.redisUrl !== undefined
      ? await redisChangeFeed(options.redisUrl, app.log, health)
      : options.postgresUrl !== undefined
        ? await postgresChangeFeed(connectionSettings(options.postgresUrl), app.log, health)
        : localChangeFeed(app.log)
  app.log.debug({ transport: feed.transport }, 'change feed ready')
  app.decorate('changeFeed', feed)
  // Whatever wrote it (REST, GraphQL, a host's own use of the store), a committed change of a
  // portfolio reaches this instance's listeners at once and the others through the feed.
  const stopTelling = app.store.onPortfolioChange(change => {
    feed.publishPortfolioChange(change).catch((error: unknown) => {
      app.log.warn({ err: error, change }, 'portfolio change not sent to the other instances')
    })
  })
  app.addHook('onClose', async () => {
    stopTelling()
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
