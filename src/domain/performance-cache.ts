import { LRUCache } from 'lru-cache'
import { NO_TELEMETRY, type Telemetry } from '../observability/telemetry.js'
import { HISTORY_TTL_MS } from '../quotes/cache.js'
import { nextClose } from '../quotes/provider.js'
import { PERFORMANCE_RANGES, type PerformanceRange, type PortfolioPerformance } from '../schemas/performance.js'
import type { PortfolioChange, Unsubscribe } from '../change-feed/change-events.js'
import type { ChangeFeed } from '../change-feed/change-feed-core.js'

/** At most this long an answer is kept: the daily histories it was made of are kept as long (src/quotes/cache.ts). */
export const PERFORMANCE_TTL_MS = HISTORY_TTL_MS

export interface PerformanceCacheOptions {
  /** Answers kept (up to seven per portfolio, one per range), the least recently used dropped first; 0: none. */
  maxEntries: number
}

export const PERFORMANCE_CACHE_DEFAULTS: PerformanceCacheOptions = { maxEntries: 10_000 }

/** A computation on its way: its answer, and whether its portfolio changed since it started. */
interface Flight {
  answer: Promise<PortfolioPerformance>
  changed: boolean
}

function keyOf (portfolioId: string, range: PerformanceRange): string {
  return `${portfolioId} ${range}`
}

/**
 * Portfolio performances answered from memory (docs/api.md#performance): each kept per portfolio
 * and range until the change feed says the portfolio changed (an asset or a transaction of it, on
 * any instance), the next market close, or an hour — whichever comes first. Concurrent requests for
 * one portfolio and range share one computation; one that was on its way when its portfolio
 * changed is answered but not kept, and a request after the change starts anew. While the feed
 * is unproven (the read cache's rule, src/domain/portfolio-read-cache.ts),
 * nothing is kept or answered from memory. Answers are shared: callers must not change them.
 */
export class PerformanceCache {
  private readonly entries: LRUCache<string, PortfolioPerformance>
  private readonly flights = new Map<string, Flight>()
  private readonly stopListening: Unsubscribe

  constructor (
    private readonly feed: Pick<ChangeFeed, 'onPortfolioChange' | 'proven'>,
    options: PerformanceCacheOptions = PERFORMANCE_CACHE_DEFAULTS,
    private readonly telemetry: Telemetry = NO_TELEMETRY,
    private readonly now: () => number = Date.now
  ) {
    // ttlResolution 0: the clock is read at each lookup (one call), never a value kept for a millisecond.
    this.entries = new LRUCache({ max: Math.max(1, options.maxEntries), perf: { now }, ttlResolution: 0 })
    this.stopListening = feed.onPortfolioChange(change => { this.changed(change) })
  }

  /** The kept answer for the portfolio and range, else `compute`'s (shared with concurrent askers), kept. */
  async get (
    portfolioId: string, range: PerformanceRange, compute: () => Promise<PortfolioPerformance>
  ): Promise<PortfolioPerformance> {
    if (!this.trusted()) {
      this.entries.clear()
      return await compute()
    }
    const key = keyOf(portfolioId, range)
    const kept = this.entries.get(key)
    this.telemetry.cache('performance', kept !== undefined)
    if (kept !== undefined) return kept
    let flight = this.flights.get(key)
    if (flight === undefined) {
      const started: Flight = { answer: compute(), changed: false }
      this.flights.set(key, started)
      started.answer.then(answer => {
        if (started.changed || !this.trusted()) return
        const now = this.now()
        this.entries.set(key, answer, { ttl: Math.min(PERFORMANCE_TTL_MS, nextClose(now) - now) })
      }, () => {}).finally(() => {
        if (this.flights.get(key) === started) this.flights.delete(key)
      })
      flight = started
    }
    return await flight.answer
  }

  /** Answers kept now. */
  get size (): number {
    return this.entries.size
  }

  close (): void {
    this.stopListening()
    this.entries.clear()
  }

  /**
   * Whether what is kept may be answered: the feed hears every instance's changes now. The one
   * place this cache asks the feed, as the read cache does (src/domain/portfolio-read-cache.ts).
   */
  private trusted (): boolean {
    return this.feed.proven()
  }

  private changed (change: PortfolioChange): void {
    if (change.kind === 'all') {
      this.entries.clear()
      for (const flight of this.flights.values()) flight.changed = true
      this.flights.clear()
      return
    }
    for (const range of PERFORMANCE_RANGES) {
      const key = keyOf(change.portfolioId, range)
      this.entries.delete(key)
      const flight = this.flights.get(key)
      if (flight === undefined) continue
      flight.changed = true
      this.flights.delete(key)
    }
  }
}
