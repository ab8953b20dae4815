import { LRUCache } from 'lru-cache'
import type { ChangeFeed } from '../change-feed/change-feed-core.js'
import type { PortfolioChange, Unsubscribe } from '../change-feed/change-events.js'
import { NO_TELEMETRY, type CacheName, type Telemetry } from '../observability/telemetry.js'

/** What a cache of portfolios' data follows of the change feed: whether it is proven, and the changes it tells. */
export type FollowedFeed = Pick<ChangeFeed, 'proven' | 'onPortfolioChange'>

/** How long a value may be answered, counted from when its load started: one time for all, or one per value. */
export type TimeToLive<V> = number | ((value: V, startedAt: number) => number)

export interface MemoryCacheOptions<V> {
  /** Its `cache` label in `bff_cache_requests_total` (docs/deploy.md#metrics): each lookup a hit or a miss. */
  name: CacheName
  /** Values kept at most, the least recently used dropped first; 0 keeps nothing (every lookup loads). */
  maxEntries: number
  /** What the values kept weigh at most, each `weigh(value)` (a positive integer); unbounded without it. */
  maxWeight?: number
  weigh?: (value: V) => number
  /** 0 (or less, for a value) keeps nothing. */
  ttlMs: TimeToLive<V>
  /** Whether a loaded value is kept (all are by default); one that is not is still answered to whoever asked. */
  keeps?: (value: V) => boolean
  /**
   * Data of portfolios: the feed's change of a portfolio drops the keys `keysOf` names (`all`, every
   * key), and while the feed is unproven nothing is kept nor answered from memory.
   */
  follows?: { feed: FollowedFeed, keysOf: (portfolioId: string) => Iterable<string> }
  telemetry?: Telemetry
  /** The clock of the times to live (milliseconds), read at each lookup. */
  now?: () => number
}

/** A value as lru-cache holds it: lru-cache keeps no `undefined`, which many loads answer (no such portfolio). */
interface Kept<V> {
  value: V
}

/** What a lookup loads on a miss: its own loader, which the lookups that join its load do not run. */
type Loader<V> = () => Promise<V>

/**
 * Data kept in memory, the one mechanism every cache of the service is a use of (docs/style.md,
 * "Data kept in memory"): lru-cache's entries, bounded by count and weight, each with its time to
 * live, and its `fetchMethod`, so that concurrent lookups of one key share one load (single
 * flight). A load that fails is the failure of every lookup that shared it, never kept. A key
 * forgotten while its load is on its way (`forget`, `forgetWhere`, or the feed's change of its
 * portfolio or of all) is answered to those lookups but not kept — lru-cache, told to ignore the
 * abort a delete signals, resolves the load and keeps nothing at a key that no longer holds it —
 * and a lookup after the change loads anew. A cache that `follows` the change feed keeps and answers
 * nothing from memory while the feed is unproven (this instance's heartbeats not back within the
 * bound: src/change-feed/feed-proof.ts), drops what it kept at the first such lookup, and keeps
 * nothing a load ends with while unproven; proven again, the feed tells `{ kind: 'all' }`.
 * Values are shared: callers must not change them.
 */
export class MemoryCache<V> {
  private readonly entries: LRUCache<string, Kept<V>, Loader<V>>
  /** Loads on their way, by key (a key forgotten and loaded again meanwhile counts each load). */
  private readonly loading = new Map<string, number>()
  private readonly name: CacheName
  private readonly telemetry: Telemetry
  private readonly now: () => number
  private readonly ttlMs: TimeToLive<V>
  private readonly keeps: (value: V) => boolean
  private readonly feed: FollowedFeed | undefined
  private readonly stopFollowing: Unsubscribe
  /** Whether anything is ever kept: not with no entries or no time to live. */
  private readonly on: boolean

  constructor (options: MemoryCacheOptions<V>) {
    this.name = options.name
    this.telemetry = options.telemetry ?? NO_TELEMETRY
    this.now = options.now ?? Date.now
    this.ttlMs = options.ttlMs
    this.keeps = options.keeps ?? (() => true)
    this.on = options.maxEntries > 0 && options.ttlMs !== 0
    const { weigh } = options
    this.entries = new LRUCache<string, Kept<V>, Loader<V>>({
      max: Math.max(1, options.maxEntries),
      ...options.maxWeight === undefined || weigh === undefined
        ? {}
        : { maxSize: options.maxWeight, sizeCalculation: kept => weigh(kept.value) },
      // The clock read at each lookup (one call), never a value kept for a millisecond.
      perf: { now: this.now },
      ttlResolution: 0,
      ignoreFetchAbort: true,
      fetchMethod: async (key, _stale, { signal, options: set, context: load }) => {
        const startedAt = this.now()
        this.loading.set(key, (this.loading.get(key) ?? 0) + 1)
        try {
          const value = await load()
          const ttl = startedAt + this.ttlOf(value, startedAt) - this.now()
          // Not aborted: the key still holds this load, which is then dropped rather than kept.
          if (!signal.aborted && !(ttl > 0 && this.keeps(value) && this.trusted())) this.entries.delete(key)
          set.ttl = ttl
          return { value }
        } finally {
          const count = this.loading.get(key) ?? 1
          if (count > 1) this.loading.set(key, count - 1)
          else this.loading.delete(key)
        }
      }
    })
    const follows = options.follows
    this.feed = follows?.feed
    this.stopFollowing = follows === undefined
      ? () => {}
      : follows.feed.onPortfolioChange(change => { this.changed(change, follows.keysOf) })
  }

  /** The value kept for `key`, else `load`'s, shared with the lookups of the key while it is on its way. */
  async get (key: string, load: Loader<V>): Promise<V> {
    if (!this.on || !this.trusted()) {
      this.telemetry.cache(this.name, false)
      if (this.entries.size > 0) this.entries.clear()
      return await load()
    }
    const kept = this.entries.get(key)
    this.telemetry.cache(this.name, kept !== undefined)
    if (kept !== undefined) return kept.value
    // Never undefined: every load answers a Kept, and a failed one throws.
    return (await this.entries.fetch(key, { context: load }) as Kept<V>).value
  }

  /** A lookup of a value the caller computes itself (nothing is loaded): the value kept, if any. */
  lookup (key: string): V | undefined {
    const kept = this.on && this.trusted() ? this.entries.get(key) : undefined
    this.telemetry.cache(this.name, kept !== undefined)
    return kept?.value
  }

  /** The value kept, if any, without counting a lookup: for a caller that decides whether to load again. */
  peek (key: string): V | undefined {
    return this.on && this.trusted() ? this.entries.peek(key)?.value : undefined
  }

  /** Whether `key` is kept or on its way: a lookup of it now would load nothing of its own. */
  has (key: string): boolean {
    return this.on && this.trusted() && (this.entries.has(key) || this.loading.has(key))
  }

  /** Keeps a value the caller computed or loaded itself, from now, in place of what was kept or on its way. */
  keep (key: string, value: V): void {
    if (!this.on || !this.trusted()) return
    const ttl = this.ttlOf(value, this.now())
    if (ttl > 0 && this.keeps(value)) this.entries.set(key, { value }, { ttl })
  }

  /** Drops the key's value, and a load of it on its way is not kept. */
  forget (key: string): void {
    this.entries.delete(key)
  }

  /** Drops every key `test` accepts, kept or on its way. */
  forgetWhere (test: (key: string) => boolean): void {
    for (const key of [...this.entries.keys(), ...this.loading.keys()]) {
      if (test(key)) this.entries.delete(key)
    }
  }

  /** Values kept now (loads on their way not counted). */
  get size (): number {
    return [...this.entries.keys()].length
  }

  /** Stops following the feed and drops everything. */
  close (): void {
    this.stopFollowing()
    this.entries.clear()
  }

  /** Whether what is kept may be answered: the feed, when followed, hears every instance's changes now. */
  private trusted (): boolean {
    return this.feed === undefined || this.feed.proven()
  }

  private ttlOf (value: V, startedAt: number): number {
    return typeof this.ttlMs === 'number' ? this.ttlMs : this.ttlMs(value, startedAt)
  }

  private changed (change: PortfolioChange, keysOf: (portfolioId: string) => Iterable<string>): void {
    if (change.kind === 'all') {
      this.entries.clear()
      return
    }
    for (const key of keysOf(change.portfolioId)) this.entries.delete(key)
  }
}
