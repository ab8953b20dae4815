import { MemoryCache, type FollowedFeed } from '../cache/memory-cache.js'
import { NO_TELEMETRY, type Telemetry } from '../observability/telemetry.js'
import type { PortfolioStore, PortfolioAndAssets } from './ports.js'

/**
 * The read of a portfolio the cache answers: the portfolio, its whole assets and its version, of
 * which REST's detail, its value, GraphQL's portfolio and the valuations are all made.
 */
export type PortfolioReads = Pick<PortfolioStore, 'portfolioAndAssets'>

export interface ReadCacheOptions {
  /** Portfolios kept, the least recently used dropped first; 0 turns the cache off. */
  maxEntries: number
  /**
   * What the reads kept weigh at most: one each, plus one per asset it holds (about 0.3 KiB each
   * measured, a portfolio of five assets 1.9 KiB), so big portfolios cannot fill memory.
   */
  maxWeight: number
  /** How long a kept read may be answered at most, whatever the feed says (docs/api.md#caching); 0 turns it off. */
  ttlMs: number
}

export const READ_CACHE_DEFAULTS: ReadCacheOptions = { maxEntries: 10_000, maxWeight: 100_000, ttlMs: 5000 }

/**
 * Portfolio reads answered from memory (docs/api.md#caching), a use of the one mechanism
 * (src/cache/memory-cache.ts): one read per portfolio, kept until the change feed says it changed —
 * this instance's writes as they commit, other instances' as the feed delivers them. Nothing is
 * kept, and the database answers, while the feed is unproven (this instance's heartbeats are not
 * back within the bound: src/change-feed/feed-proof.ts); proven again, the feed flushes everything
 * (it tells `{ kind: 'all' }`). Concurrent reads of a portfolio share one statement; a read that was
 * on its way when its portfolio changed is answered but not kept: it may hold the state before the
 * change. A portfolio that does not exist is not kept either (its creation tells nothing). Writes,
 * If-Match and idempotency never read it. Answers are shared: callers must not change them.
 */
export class CachedPortfolioReads implements PortfolioReads {
  private readonly reads: MemoryCache<PortfolioAndAssets | undefined>

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
      weigh: read => 1 + (read?.assets.length ?? 0),
      ttlMs: options.ttlMs,
      keeps: read => read !== undefined,
      follows: { feed, keysOf: id => [id] },
      telemetry
    })
  }

  async portfolioAndAssets (id: string): Promise<PortfolioAndAssets | undefined> {
    return await this.reads.get(id, async () => await this.store.portfolioAndAssets(id))
  }

  /** Portfolios kept now. */
  get size (): number {
    return this.reads.size
  }

  close (): void {
    this.reads.close()
  }
}
