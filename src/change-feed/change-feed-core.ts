import { randomUUID } from 'node:crypto'
import { EventEmitter, on } from 'node:events'
import type { FastifyBaseLogger } from 'fastify'
import { Type, type Static } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { ItemStatusSchema, type ItemStatus } from '../schemas/item-status.js'
import {
  Listeners, PortfolioChangeSchema, type Announcer, type PortfolioChange, type Unsubscribe
} from './change-events.js'

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
 * Redis (redis-change-feed.ts), else PostgreSQL `LISTEN/NOTIFY` (postgres-change-feed.ts), else
 * in-process. A message is delivered to this instance's listeners at once, then sent to the others.
 * Each instance proves its link with heartbeats (feed-proof.ts); each time it is proven again it tells
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
  /**
   * Tells this instance's listeners, then the other instances: a change committed without an
   * {@link announcement}. Rejects when the others could not be told (this instance's listeners were).
   */
  publishPortfolioChange: (change: PortfolioChange) => Promise<void>
  /** Tells this instance's listeners only: a committed change its write announced to the others itself. */
  deliverPortfolioChange: (change: PortfolioChange) => void
  /**
   * PostgreSQL only: the statement that, run inside a write's transaction, tells the other instances
   * of its changes when (and only if) it commits (`pg_notify`).
   */
  announcement?: Announcer
  /** Every portfolio change of any instance (this one's as it commits) until the answer is called. */
  onPortfolioChange: (listener: (change: PortfolioChange) => void) => Unsubscribe
  /** Portfolio listeners at this instance. */
  portfolioListeners: () => number
  /**
   * Whether other instances' changes are heard now (always, `local`): this instance's own heartbeat
   * came back within the bound (src/change-feed/feed-proof.ts), so nothing committed before it was missed.
   */
  proven: () => boolean
  close: () => Promise<void>
}

/** The channel (Redis) or notification name (PostgreSQL) every instance listens on. */
export const CHANGE_FEED_CHANNEL = 'bff_changes'

/**
 * The channel of one instance's heartbeats (`origin` without its dashes: 46 characters, under
 * PostgreSQL's 63): its own, so that no other instance reads them (nor an older version, which would
 * take them for garbage), yet on the same connection as the changes, which delivers both in order.
 */
export function heartbeatChannel (origin: string): string {
  return `bff_heartbeat_${origin.replaceAll('-', '')}`
}

/** Where the feed's connections report: the app's `DependencyHealth` (logged once per change, `bff_dependency_up`). */
export interface FeedHealth {
  up: () => void
  down: (error: unknown) => void
}

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
export class LocalDelivery {
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

  /** Proven again: what other instances changed meanwhile may not have been heard. */
  resync (): void {
    this.portfolios.emit({ kind: 'all' })
  }

  /** The text of a portfolio change for the other instances. */
  portfolioMessage (change: PortfolioChange): string {
    return JSON.stringify({ origin: this.origin, kind: 'portfolio', change })
  }

  /** The feed's methods, over `send` (the message's text, to the other instances). */
  feed (
    transport: string, send: (text: string) => Promise<void>, close: () => Promise<void>, proven: () => boolean
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
      deliverPortfolioChange: change => { this.deliver({ origin, kind: 'portfolio', change }) },
      onPortfolioChange: listener => this.portfolios.add(listener),
      portfolioListeners: () => this.portfolios.size,
      proven,
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
