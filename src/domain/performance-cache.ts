import { MemoryCache, type FollowedFeed } from '../cache/memory-cache.js'
import { NO_TELEMETRY, type Telemetry } from '../observability/telemetry.js'
import { untilTheNextClose } from '../quotes/cache.js'
import { PERFORMANCE_RANGES, type PerformanceRange, type PortfolioPerformance } from '../schemas/performance.js'

export interface PerformanceCacheOptions {
  /** Answers kept (up to seven per portfolio, one per range), the least recently used dropped first; 0: none. */
  maxEntries: number
}

export const PERFORMANCE_CACHE_DEFAULTS: PerformanceCacheOptions = { maxEntries: 10_000 }

function keyOf (portfolioId: string, range: PerformanceRange): string {
  return `${portfolioId} ${range}`
}

/**
 * Portfolio performances answered from memory (docs/api.md#performance), a use of the one
 * mechanism (src/cache/memory-cache.ts): each kept per portfolio and range until the change feed
 * says the portfolio changed (an asset or a transaction of it, on any instance), the next market
 * close after its computation began, or an hour — whichever comes first, as the daily histories it
 * was made of (src/quotes/cache.ts). Concurrent requests for one portfolio and range share one
 * computation; one that was on its way when its portfolio changed is answered but not kept, and a
 * request after the change starts anew. While the feed is unproven nothing is kept or answered from
 * memory. Answers are shared: callers must not change them.
 */
export class PerformanceCache {
  private readonly answers: MemoryCache<PortfolioPerformance>

  constructor (
    feed: FollowedFeed,
    options: PerformanceCacheOptions = PERFORMANCE_CACHE_DEFAULTS,
    telemetry: Telemetry = NO_TELEMETRY,
    now: () => number = Date.now
  ) {
    this.answers = new MemoryCache<PortfolioPerformance>({
      name: 'performance',
      maxEntries: options.maxEntries,
      ttlMs: untilTheNextClose,
      follows: { feed, keysOf: portfolioId => PERFORMANCE_RANGES.map(range => keyOf(portfolioId, range)) },
      telemetry,
      now
    })
  }

  /** The kept answer for the portfolio and range, else `compute`'s (shared with concurrent askers), kept. */
  async get (
    portfolioId: string, range: PerformanceRange, compute: () => Promise<PortfolioPerformance>
  ): Promise<PortfolioPerformance> {
    return await this.answers.get(keyOf(portfolioId, range), compute)
  }

  /** Answers kept now. */
  get size (): number {
    return this.answers.size
  }

  close (): void {
    this.answers.close()
  }
}
