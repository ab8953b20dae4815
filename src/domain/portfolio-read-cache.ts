import { MemoryCache, type FollowedFeed } from '../cache/memory-cache.js'
import type { Versioned } from '../http/entity-tag.js'
import type { Portfolio, PortfolioDetail } from '../schemas/portfolio.js'
import { NO_TELEMETRY, type Telemetry } from '../observability/telemetry.js'
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
function weightOf (read: Reads[Kind] | undefined): number {
  if (read === undefined) return 1
  if ('assets' in read) return 1 + read.assets.length
  return 'version' in read ? 1 + read.value.assets.length : 1
}

/**
 * Portfolio reads answered from memory (docs/api.md#caching), a use of the one mechanism
 * (src/cache/memory-cache.ts), each kept until the change feed says its portfolio changed — this
 * instance's writes as they commit, other instances' as the feed delivers them. Nothing is kept,
 * and the database answers, while the feed is unproven (this instance's heartbeats are not back
 * within the bound: src/change-feed/feed-proof.ts); proven again, the feed flushes everything (it
 * tells `{ kind: 'all' }`). Concurrent reads of a portfolio share one statement; a read that was on
 * its way when its portfolio changed is answered but not kept: it may hold the state before the
 * change. A portfolio that does not exist is not kept either (its creation tells nothing). Writes,
 * If-Match and idempotency never read it. Answers are shared: callers must not change them.
 */
export class CachedPortfolioReads implements PortfolioReads {
  private readonly reads: MemoryCache<Reads[Kind] | undefined>

  constructor (
    private readonly store: PortfolioReads,
    feed: FollowedFeed,
    options: ReadCacheOptions = READ_CACHE_DEFAULTS,
    telemetry: Telemetry = NO_TELEMETRY
  ) {
    // Made before whatever reads through it (the live valuations), so it hears each change first.
    this.reads = new MemoryCache({
      name: 'portfolio_reads',
      maxEntries: options.maxEntries,
      maxWeight: options.maxWeight,
      weigh: weightOf,
      ttlMs: options.ttlMs,
      keeps: read => read !== undefined,
      follows: { feed, keysOf: id => KINDS.map(kind => keyOf(kind, id)) },
      telemetry
    })
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
    return this.reads.size
  }

  close (): void {
    this.reads.close()
  }

  private async read<K extends Kind> (
    id: string, kind: K, load: (id: string) => Promise<Reads[K] | undefined>
  ): Promise<Reads[K] | undefined> {
    return await this.reads.get(keyOf(kind, id), async () => await load(id)) as Reads[K] | undefined
  }
}
