import { EventEmitter, on } from 'node:events'
import type { FastifyBaseLogger } from 'fastify'
import { FormatRegistry, Type, type Static } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { TimestampOf } from '../schemas/common.js'
import type { ClientConfig as PostgresClientConfig } from 'pg'

/** The verified status of an aggregator item, pushed to subscribers each time a webhook about it arrives. */
export const ItemStatusSchema = Type.Object({
  itemId: Type.String({ description: 'The aggregator item' }),
  status: Type.Union([Type.String(), Type.Null()], {
    description: 'The status the aggregator itself reports for the item (never what a webhook claimed)'
  }),
  event: Type.String({ description: 'The webhook event that made the service ask' }),
  updatedAt: TimestampOf('When the service verified the status')
}, { title: 'AggregatorItemStatus' })
export type ItemStatus = Static<typeof ItemStatusSchema>

// TypeBox checks a format only once it is registered; the service's timestamps are ISO 8601.
if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', value => !Number.isNaN(Date.parse(value)))
const isItemStatus = TypeCompiler.Compile(ItemStatusSchema)

/** The events that delete an item: Pluggy's `item/deleted`, and the same in the dotted shape (`item.deleted`). */
const DELETION_EVENTS = new Set(['item/deleted', 'item.deleted'])

export function isDeletionEvent (event: string): boolean {
  return DELETION_EVENTS.has(event)
}

/** The last status of an item: its deletion, confirmed by the aggregator (`status: null`). */
function isFinalStatus (status: ItemStatus): boolean {
  return status.status === null && isDeletionEvent(status.event)
}

/**
 * A subscription that ends with the item: the final status is delivered, then the iterator is
 * done and its listener freed at once (a GraphQL subscription then completes).
 */
export function untilItemDeleted (statuses: AsyncIterableIterator<ItemStatus>): AsyncIterableIterator<ItemStatus> {
  let ended = false
  const end = async (): Promise<IteratorResult<ItemStatus>> => {
    ended = true
    await statuses.return?.()
    return { done: true, value: undefined }
  }
  const iterator: AsyncIterableIterator<ItemStatus> = {
    next: async () => {
      if (ended) return { done: true, value: undefined }
      const result = await statuses.next()
      if (result.done !== true && isFinalStatus(result.value)) await end()
      return result
    },
    return: end,
    [Symbol.asyncIterator]: () => iterator
  }
  return iterator
}

/**
 * Item statuses fanned out to every instance: `publish` on the instance that verified a webhook,
 * `subscribe` on whichever instance holds the subscriber's connection.
 */
export interface ItemStatusFeed {
  /** `local`, `redis` or `postgres`: how statuses reach the other instances. */
  readonly transport: string
  publish: (status: ItemStatus) => Promise<void>
  /** The statuses of one item from now on; `return()` ends the subscription at once. */
  subscribe: (itemId: string) => AsyncIterableIterator<ItemStatus>
  /** Subscriptions open at this instance. */
  subscribers: () => number
  close: () => Promise<void>
}

/** The channel (Redis) or notification name (PostgreSQL) every instance listens on. */
export const ITEM_STATUS_CHANNEL = 'bff_item_status'

/** The event of an item: never `error`, which an EventEmitter would throw, whatever an item id holds. */
function eventOf (itemId: string): string {
  return `item:${itemId}`
}

/**
 * Delivery inside one process, which every transport ends in: each subscription is an iterator
 * over one item's events. `events.on` is used rather than an async generator because its
 * `return()` takes effect while a `next()` is still waiting, so a closed WebSocket frees its
 * listener at once rather than at the item's next event.
 */
class LocalDelivery {
  private readonly emitter = new EventEmitter()

  constructor () {
    // One listener per subscription: many subscribers are normal, not a leak.
    this.emitter.setMaxListeners(0)
  }

  subscribers (): number {
    // `events.on` also listens for 'error' on each subscription's behalf: items are the rest.
    return this.emitter
      .eventNames()
      .reduce((total, name) => (name === 'error' ? total : total + this.emitter.listenerCount(name)), 0)
  }

  deliver (status: ItemStatus): void {
    this.emitter.emit(eventOf(status.itemId), status)
  }

  subscribe (itemId: string): AsyncIterableIterator<ItemStatus> {
    const source = on(this.emitter, eventOf(itemId))
    const iterator: AsyncIterableIterator<ItemStatus> = {
      next: async () => {
        const result = await source.next() as IteratorResult<[ItemStatus]>
        return result.done === true ? { done: true, value: undefined } : { done: false, value: result.value[0] }
      },
      return: async () => {
        await source.return?.()
        return { done: true, value: undefined }
      },
      [Symbol.asyncIterator]: () => iterator
    }
    return iterator
  }

  /** A status from another instance, checked: anyone who can publish on the channel could send garbage. */
  deliverMessage (message: string, log: FastifyBaseLogger): void {
    let status: unknown
    try {
      status = JSON.parse(message)
    } catch {
      status = undefined
    }
    if (isItemStatus.Check(status)) this.deliver(status)
    else log.warn({ channel: ITEM_STATUS_CHANNEL }, 'item status message that is not one: ignored')
  }
}

/** One instance: statuses go straight to this process's subscribers. */
export function localItemStatusFeed (): ItemStatusFeed {
  const local = new LocalDelivery()
  return {
    transport: 'local',
    publish: async status => { local.deliver(status) },
    subscribe: itemId => local.subscribe(itemId),
    subscribers: () => local.subscribers(),
    close: async () => {}
  }
}

/**
 * Where the feed's connections report: the plugin gives the app's `DependencyHealth`
 * (observability), which logs each change once and sets `bff_dependency_up`.
 */
export interface FeedHealth {
  up: () => void
  down: (error: unknown) => void
}

/**
 * Reports one dependency made of several connections: up once every one of them is ready, down
 * as soon as one fails.
 */
function connectionsHealth (health: FeedHealth | undefined, count: number): {
  ready: (connection: object) => void
  failed: (connection: object, error: unknown) => void
} {
  const ready = new Set<object>()
  return {
    ready: connection => {
      ready.add(connection)
      if (ready.size === count) health?.up()
    },
    failed: (connection, error) => {
      ready.delete(connection)
      health?.down(error)
    }
  }
}

/**
 * Many instances through Redis pub/sub: every instance subscribes to one channel, and a status
 * published by any of them (itself included) reaches each instance's subscribers once. ioredis
 * reconnects by itself (50 ms more per attempt, up to 2 s) and subscribes again; while Redis is
 * away a publish fails at once (verifications go on; their statuses are not pushed).
 */
export async function redisItemStatusFeed (
  url: string, log: FastifyBaseLogger, health?: FeedHealth
): Promise<ItemStatusFeed> {
  const { Redis } = await import('ioredis')
  const local = new LocalDelivery()
  const publisher = new Redis(url, { connectTimeout: 2000, maxRetriesPerRequest: 1, enableOfflineQueue: false })
  // The subscription waits for Redis however long it takes: an instance starts without it.
  const subscriber = new Redis(url, { connectTimeout: 2000, maxRetriesPerRequest: null })
  const reports = connectionsHealth(health, 2)
  for (const connection of [publisher, subscriber]) {
    connection.on('error', (error: Error) => { reports.failed(connection, error) })
    connection.on('ready', () => { reports.ready(connection) })
  }
  subscriber.on('message', (_channel: string, message: string) => { local.deliverMessage(message, log) })
  /* c8 ignore next 3 -- it waits for a connection (no retry limit): it fails only if the feed closes first */
  subscriber.subscribe(ITEM_STATUS_CHANNEL).catch((error: unknown) => {
    log.warn({ err: error }, 'item status feed: not subscribed')
  })
  return {
    transport: 'redis',
    publish: async status => { await publisher.publish(ITEM_STATUS_CHANNEL, JSON.stringify(status)) },
    subscribe: itemId => local.subscribe(itemId),
    subscribers: () => local.subscribers(),
    // Not `quit`: with Redis away it would wait in the queue for a connection that may never come.
    close: async () => { publisher.disconnect(); subscriber.disconnect() }
  }
}

/** The LISTEN connection comes back after 500 ms, doubling (jittered) up to 5 s, for as long as it takes. */
const RECONNECT_BACKOFF = { initialDelay: 500, maxDelay: 5000 }

/**
 * Many instances through PostgreSQL `LISTEN/NOTIFY` on the service's own database (`connection`:
 * pg's settings, the store's timeouts): one connection per instance listens (and notifies), made
 * again with capped backoff whenever it is lost (or not there at start: an instance starts
 * without it). Statuses published while it is
 * down are not replayed: the next webhook brings the next one.
 */
export async function postgresItemStatusFeed (
  connection: PostgresClientConfig, log: FastifyBaseLogger, health?: FeedHealth
): Promise<ItemStatusFeed> {
  const [{ default: pg }, { ExponentialBackoff, handleAll, retry }] = await Promise.all([
    import('pg'), import('cockatiel')
  ])
  const local = new LocalDelivery()
  const closing = new AbortController()
  let client: InstanceType<typeof pg.Client> | undefined
  let connecting: InstanceType<typeof pg.Client> | undefined
  const reconnect = retry(handleAll, { backoff: new ExponentialBackoff(RECONNECT_BACKOFF) })
  reconnect.onRetry(event => { if ('error' in event) health?.down(event.error) })

  async function listen (): Promise<void> {
    const next = new pg.Client(connection)
    next.on('notification', message => {
      if (message.channel === ITEM_STATUS_CHANNEL) local.deliverMessage(message.payload ?? '', log)
    })
    next.on('error', (error: Error) => {
      health?.down(error)
      next.end().catch(() => {})
      if (client !== next) return
      client = undefined
      listenUntilDone()
    })
    connecting = next
    try {
      await next.connect()
      await next.query(`LISTEN ${ITEM_STATUS_CHANNEL}`)
    } catch (error) {
      await next.end().catch(() => {})
      throw error
    } finally {
      connecting = undefined
    }
    if (closing.signal.aborted) {
      await next.end().catch(() => {})
      return
    }
    client = next
    health?.up()
  }

  function listenUntilDone (): void {
    reconnect.execute(listen, closing.signal).catch(() => { /* closed while reconnecting */ })
  }

  // The first attempt is waited for, so a started instance hears what is published next; a
  // database that is not there yet is waited for in the background.
  await listen().catch((error: unknown) => {
    health?.down(error)
    listenUntilDone()
  })
  return {
    transport: 'postgres',
    publish: async status => {
      if (client === undefined) throw new Error('item status feed: PostgreSQL connection down')
      await client.query('select pg_notify($1, $2)', [ITEM_STATUS_CHANNEL, JSON.stringify(status)])
    },
    subscribe: itemId => local.subscribe(itemId),
    subscribers: () => local.subscribers(),
    close: async () => {
      closing.abort()
      await Promise.all([client, connecting].map(async open => { await open?.end().catch(() => {}) }))
    }
  }
}
