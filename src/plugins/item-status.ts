import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import {
  localItemStatusFeed,
  postgresItemStatusFeed,
  redisItemStatusFeed,
  type ItemStatusFeed
} from '../store/item-status.js'
import { dependencyHealth } from './metrics.js'
import { connectionSettings } from '../store/postgres-settings.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Verified aggregator item statuses, fanned out to every instance. */
    itemStatus: ItemStatusFeed
  }
}

export interface ItemStatusPluginOptions {
  /** `REDIS_URL`: fan-out through Redis, the first choice when several instances run. */
  redisUrl?: string
  /** `DATABASE_URL` when it is PostgreSQL: fan-out through `LISTEN/NOTIFY` without Redis. */
  postgresUrl?: string
}

async function itemStatus (app: FastifyInstance, options: ItemStatusPluginOptions): Promise<void> {
  const health = dependencyHealth(app, 'item_status_feed')
  const feed =
    options.redisUrl !== undefined
      ? await redisItemStatusFeed(options.redisUrl, app.log, health)
      : options.postgresUrl !== undefined
        ? await postgresItemStatusFeed(connectionSettings(options.postgresUrl), app.log, health)
        : localItemStatusFeed()
  app.log.debug({ transport: feed.transport }, 'item status feed ready')
  app.decorate('itemStatus', feed)
  app.addHook('onClose', async () => { await feed.close() })
}

/** The item status feed: Redis when configured, else PostgreSQL's LISTEN/NOTIFY, else in-process. */
export default fp(itemStatus, { name: 'bff-item-status', fastify: '5.x' })
