import { randomUUID } from 'node:crypto'
import { EventEmitter, on } from 'node:events'
import type { FastifyBaseLogger } from 'fastify'
import { Type, type Static } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import type { ClientConfig as PostgresClientConfig } from 'pg'
import { ItemStatusSchema, type ItemStatus } from './item-status.js'
import { Listeners, PortfolioChangeSchema, type PortfolioChange, type Unsubscribe } from './changes.js'

/**
 * What instances tell each other, on one channel: an aggregator item's verified status, or a
 * portfolio's change. `origin` is the sending feed, which delivered it to its own listeners at
 * once and ignores its echo.
 */
const FeedMessageSchema = Type.Union([
  Type.Object({ origin: Type.String(), kind: Type.Literal('item'), status: ItemStatusSchema }),
  Type.Object({ origin: Type.String(), kind: Type.Literal('portfolio'), change: PortfolioChangeSchema })
])
type FeedMessage = Static<typeof FeedMessageSchema>
const isFeedMessage = TypeCompiler.Compile(FeedMessageSchema)

/**
 * Changes fanned out to every instance — aggregator item statuses and portfolio changes — through
 * Redis, else PostgreSQL `LISTEN/NOTIFY`, else in-process. A message is delivered to this
 * instance's listeners at once, then sent to the others; a link that was down and is back tells
 * portfolio listeners `{ kind: 'all' }`, as changes of other instances may have been missed meanwhile.
 */
export interface ChangeFeed {
  /** `local`, `redis` or `postgres`: how messages reach the other instances. */
  readonly transport: string
  /** Rejects when the other instances could not be told (this instance's subscribers were). */
  publishItemStatus: (status: ItemStatus) => Promise<void>
  /** The statuses of one item from now on; `return()` ends the subscription at once. */
  itemStatuses: (itemId: string) => AsyncIterableIterator<ItemStatus>
  /** Item subscriptions open at this instance. */
  itemSubscribers: () => number
  /** Rejects when the other instances could not be told (this instance's listeners were). */
  publishPortfolioChange: (change: PortfolioChange) => Promise<void>
  /** Every portfolio change of any instance (this one's as it commits) until the answer is called. */
  onPortfolioChange: (listener: (change: PortfolioChange) => void) => Unsubscribe
  /** Portfolio listeners at this instance. */
  portfolioListeners: () => number
  /** Whether other instances' messages are heard now (always, `local`): not while the link is down or coming back. */
  linked: () => boolean
  close: () => Promise<void>
}

/** The channel (Redis) or notification name (PostgreSQL) every instance listens on. */
export const CHANGE_FEED_CHANNEL = 'bff_changes'

/** The event of an item: never `error`, which an EventEmitter would throw, whatever an item id holds. */
function eventOf (itemId: string): string {
  return `item:${itemId}`
}

/**
 * Delivery inside one process, which every transport ends in. Each item subscription is an
 * iterator over one item's events: `events.on` rather than an async generator, because its
 * `return()` takes effect while a `next()` is still waiting, so a closed WebSocket frees its
 * listener at once rather than at the item's next event.
 */
class LocalDelivery {
  readonly origin = randomUUID()
  private readonly items = new EventEmitter()
  readonly portfolios: Listeners<PortfolioChange>

  constructor (private readonly log: FastifyBaseLogger) {
    // One listener per subscription: many subscribers are normal, not a leak.
    this.items.setMaxListeners(0)
    this.portfolios = new Listeners(error => { log.error({ err: error }, 'portfolio change listener failed') })
  }

  itemSubscribers (): number {
    // `events.on` also listens for 'error' on each subscription's behalf: items are the rest.
    const names = this.items.eventNames().filter(name => name !== 'error')
    return names.reduce((total: number, name) => total + this.items.listenerCount(name), 0)
  }

  /** Delivers here; answers the message, to send to the other instances. */
  deliver (message: FeedMessage): FeedMessage {
    if (message.kind === 'item') this.items.emit(eventOf(message.status.itemId), message.status)
    else this.portfolios.emit(message.change)
    return message
  }

  itemStatuses (itemId: string): AsyncIterableIterator<ItemStatus> {
    const source = on(this.items, eventOf(itemId))
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

  /** A message from another instance, checked: anyone who can publish on the channel could send garbage. */
  received (text: string): void {
    let message: unknown
    try {
      message = JSON.parse(text)
    } catch {
      message = undefined
    }
    if (!isFeedMessage.Check(message)) {
      this.log.warn({ channel: CHANGE_FEED_CHANNEL }, 'change feed message that is not one: ignored')
    } else if (message.origin !== this.origin) {
      this.deliver(message)
    }
  }

  /** The link to the other instances is back: what they changed meanwhile was not heard. */
  resync (): void {
    this.portfolios.emit({ kind: 'all' })
  }

  /** The feed's methods, over `send` (the message's text, to the other instances). */
  feed (
    transport: string, send: (text: string) => Promise<void>, close: () => Promise<void>, linked: () => boolean
  ): ChangeFeed {
    const { origin } = this
    return {
      transport,
      publishItemStatus: async status => {
        await send(JSON.stringify(this.deliver({ origin, kind: 'item', status })))
      },
      itemStatuses: itemId => this.itemStatuses(itemId),
      itemSubscribers: () => this.itemSubscribers(),
      publishPortfolioChange: async change => {
        await send(JSON.stringify(this.deliver({ origin, kind: 'portfolio', change })))
      },
      onPortfolioChange: listener => this.portfolios.add(listener),
      portfolioListeners: () => this.portfolios.size,
      linked,
      close
    }
  }
}

/** One instance: messages go straight to this process's listeners. */
export function localChangeFeed (log: FastifyBaseLogger): ChangeFeed {
  const local = new LocalDelivery(log)
  const { origin } = local
  // Nothing to send: no message is even written out.
  return {
    ...local.feed('local', async () => {}, async () => {}, () => true),
    publishItemStatus: async status => { local.deliver({ origin, kind: 'item', status }) },
    publishPortfolioChange: async change => { local.deliver({ origin, kind: 'portfolio', change }) }
  }
}

/** Where the feed's connections report: the app's `DependencyHealth` (logged once per change, `bff_dependency_up`). */
export interface FeedHealth {
  up: () => void
  down: (error: unknown) => void
}

/** Reports one dependency made of several connections: up once every one of them is ready, down as one fails. */
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
 * Many instances through Redis pub/sub: every instance subscribes to one channel. ioredis
 * reconnects by itself (50 ms more per attempt, up to 2 s) and subscribes again; while Redis is
 * away a publish fails at once (this instance's listeners were told; the others were not). The
 * feed is linked from Redis's confirmation of the subscription until the connection closes.
 */
export async function redisChangeFeed (url: string, log: FastifyBaseLogger, health?: FeedHealth): Promise<ChangeFeed> {
  const { Redis } = await import('ioredis')
  const local = new LocalDelivery(log)
  const publisher = new Redis(url, { connectTimeout: 2000, maxRetriesPerRequest: 1, enableOfflineQueue: false })
  // The subscription waits for Redis however long it takes: an instance starts without it.
  const subscriber = new Redis(url, { connectTimeout: 2000, maxRetriesPerRequest: null })
  const reports = connectionsHealth(health, 2)
  for (const connection of [publisher, subscriber]) {
    connection.on('error', (error: Error) => { reports.failed(connection, error) })
    connection.on('ready', () => { reports.ready(connection) })
  }
  let subscribedBefore = false
  let listening = false
  subscriber.on('close', () => { listening = false })
  // 'ready' comes before ioredis subscribes again: messages are heard once Redis answers this subscribe.
  subscriber.on('ready', () => {
    /* c8 ignore next -- called only when the connection drops between 'ready' and Redis's answer */
    const lost = (error: unknown): void => { log.debug({ err: error }, 'change feed: not subscribed (lost)') }
    subscriber.subscribe(CHANGE_FEED_CHANNEL).then(() => {
      listening = true
      if (subscribedBefore) local.resync()
      subscribedBefore = true
    }, lost)
  })
  subscriber.on('message', (_channel: string, message: string) => { local.received(message) })
  return local.feed(
    'redis',
    async text => { await publisher.publish(CHANGE_FEED_CHANNEL, text) },
    // Not `quit`: with Redis away it would wait in the queue for a connection that may never come.
    async () => { publisher.disconnect(); subscriber.disconnect() },
    () => listening
  )
}

/** The LISTEN connection comes back after 500 ms, doubling (jittered) up to 5 s, for as long as it takes. */
const RECONNECT_BACKOFF = { initialDelay: 500, maxDelay: 5000 }

/**
 * Many instances through PostgreSQL `LISTEN/NOTIFY` on the service's own database (`connection`:
 * pg's settings, the store's timeouts): one connection per instance listens (and notifies), made
 * again with capped backoff whenever it is lost (or not there at start: an instance starts
 * without it). Messages published while it is down are not replayed.
 */
export async function postgresChangeFeed (
  connection: PostgresClientConfig, log: FastifyBaseLogger, health?: FeedHealth
): Promise<ChangeFeed> {
  const [{ default: pg }, { ExponentialBackoff, handleAll, retry }] = await Promise.all([
    import('pg'), import('cockatiel')
  ])
  const local = new LocalDelivery(log)
  const closing = new AbortController()
  let client: InstanceType<typeof pg.Client> | undefined
  let connecting: InstanceType<typeof pg.Client> | undefined
  let listenedBefore = false
  const reconnect = retry(handleAll, { backoff: new ExponentialBackoff(RECONNECT_BACKOFF) })
  reconnect.onRetry(event => { if ('error' in event) health?.down(event.error) })

  async function listen (): Promise<void> {
    const next = new pg.Client(connection)
    next.on('notification', message => {
      if (message.channel === CHANGE_FEED_CHANNEL) local.received(message.payload ?? '')
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
      await next.query(`LISTEN ${CHANGE_FEED_CHANNEL}`)
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
    if (listenedBefore) local.resync()
    listenedBefore = true
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
  return local.feed(
    'postgres',
    async text => {
      if (client === undefined) throw new Error('change feed: PostgreSQL connection down')
      await client.query('select pg_notify($1, $2)', [CHANGE_FEED_CHANNEL, text])
    },
    async () => {
      closing.abort()
      await Promise.all([client, connecting].map(async open => { await open?.end().catch(() => {}) }))
    },
    () => client !== undefined
  )
}
