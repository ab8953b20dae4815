import { LRUCache } from 'lru-cache'
import type { Versioned } from '../http/entity-tag.js'
import type { Portfolio, PortfolioDetail } from '../schemas/portfolio.js'
import type { PortfolioChange, Unsubscribe } from '../change-feed/change-events.js'
import type { ChangeFeed } from '../change-feed/change-feed-core.js'
import type { PortfolioStore, PortfolioAndAssets } from './ports.js'

/**
 * The reads of a portfolio the cache answers: REST's detail, the portfolio alone (its value, with
 * the owner it is checked against) and the valuations' inputs.
 */
export type PortfolioReads = Pick<PortfolioStore, 'versionedDetail' | 'portfolioOnly' | 'portfolioAndAssets'>

interface Reads {
  versionedDetail: Versioned<PortfolioDetail>
  portfolioOnly: Portfolio
  portfolioAndAssets: PortfolioAndAssets
}
type Kind = keyof Reads
const KINDS: readonly Kind[] = ['versionedDetail', 'portfolioOnly', 'portfolioAndAssets']

/** Where a read of a portfolio is kept: each read its own entry, with its own age. */
function keyOf (kind: Kind, id: string): string {
  return `${kind} ${id}`
}

export interface ReadCacheOptions {
  /** Reads kept (up to three per portfolio), the least recently used dropped first; 0 turns the cache off. */
  maxEntries: number
  /**
   * What the reads kept weigh at most: one each, plus one per asset it holds (about 0.2 KiB each
   * measured, a read of a portfolio of five assets 1–2 KiB), so big portfolios cannot fill memory.
   */
  maxWeight: number
  /** How long a kept read may be answered at most, whatever the feed says (docs/api.md#caching); 0 turns it off. */
  ttlMs: number
}

export const READ_CACHE_DEFAULTS: ReadCacheOptions = { maxEntries: 10_000, maxWeight: 100_000, ttlMs: 5000 }

/** One, plus one per asset the read holds. */
function weightOf (read: Reads[Kind]): number {
  if ('assets' in read) return 1 + read.assets.length
  return 'version' in read ? 1 + read.value.assets.length : 1
}

/** A read on its way from the database: whether its portfolio changed since it started. */
interface Flight {
  changed: boolean
}

/**
 * Portfolio reads answered from memory (docs/api.md#caching), each kept until the change feed
 * says its portfolio changed — this instance's writes as they commit, other instances' as the
 * feed delivers them. Nothing is kept, and the database answers, while the feed is unproven (this
 * instance's heartbeats are not back within the bound: src/change-feed/feed-proof.ts); proven again, the
 * feed flushes everything (it tells `{ kind: 'all' }`). A read that
 * was on its way when its portfolio changed is answered but not kept: it may hold the state before
 * the change. A portfolio that does not exist is not kept either (its creation tells nothing).
 * Writes, If-Match and idempotency never read it. Answers are shared: callers must not change them.
 */
export class CachedPortfolioReads implements PortfolioReads {
  private readonly entries: LRUCache<string, Reads[Kind]>
  /** The reads on their way, by portfolio. */
  private readonly flights = new Map<string, Set<Flight>>()
  private readonly stopListening: Unsubscribe

  constructor (
    private readonly store: PortfolioReads,
    private readonly feed: Pick<ChangeFeed, 'onPortfolioChange' | 'proven'>,
    options: ReadCacheOptions = READ_CACHE_DEFAULTS
  ) {
    this.entries = new LRUCache({
      max: options.maxEntries, maxSize: options.maxWeight, sizeCalculation: weightOf, ttl: options.ttlMs
    })
    // Made before whatever reads through it (the live valuations), so it hears each change first.
    this.stopListening = feed.onPortfolioChange(change => { this.changed(change) })
  }

  async versionedDetail (id: string): Promise<Versioned<PortfolioDetail> | undefined> {
    return await this.read(id, 'versionedDetail', async id => await this.store.versionedDetail(id))
  }

  async portfolioOnly (id: string): Promise<Portfolio | undefined> {
    return await this.read(id, 'portfolioOnly', async id => await this.store.portfolioOnly(id))
  }

  async portfolioAndAssets (id: string): Promise<Reads['portfolioAndAssets'] | undefined> {
    return await this.read(id, 'portfolioAndAssets', async id => await this.store.portfolioAndAssets(id))
  }

  /** Reads kept now. */
  get size (): number {
    return this.entries.size
  }

  close (): void {
    this.stopListening()
    this.entries.clear()
  }

  private async read<K extends Kind> (
    id: string, kind: K, load: (id: string) => Promise<Reads[K] | undefined>
  ): Promise<Reads[K] | undefined> {
    if (!this.feed.proven()) {
      // Changes of other instances may not be heard: what is kept may be stale, so nothing is.
      this.entries.clear()
      return await load(id)
    }
    const key = keyOf(kind, id)
    const kept = this.entries.get(key) as Reads[K] | undefined
    if (kept !== undefined) return kept
    const flight: Flight = { changed: false }
    const flights = this.flights.get(id) ?? new Set()
    this.flights.set(id, flights.add(flight))
    try {
      const read = await load(id)
      if (read !== undefined && !flight.changed && this.feed.proven()) {
        this.entries.set(key, read)
      }
      return read
    } finally {
      flights.delete(flight)
      if (flights.size === 0 && this.flights.get(id) === flights) this.flights.delete(id)
    }
  }

  private changed (change: PortfolioChange): void {
    const ids = change.kind === 'all' ? [...this.flights.keys()] : [change.portfolioId]
    if (change.kind === 'all') this.entries.clear()
    else for (const kind of KINDS) this.entries.delete(keyOf(kind, change.portfolioId))
    for (const id of ids) {
      for (const flight of this.flights.get(id) ?? []) flight.changed = true
      this.flights.delete(id)
    }
  }
}
