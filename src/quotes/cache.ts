import { NO_TELEMETRY, type Telemetry } from '../telemetry.js'
import type { FastifyBaseLogger } from 'fastify'
import type { MonthKey, MonthlyClose, ProviderQuote, QuoteProvider } from './provider.js'

interface Entry<T> {
  value: Promise<T>
  expiresAt: number
}

/** Monthly closes change once a month; an hour keeps the current month's close fresh enough. */
export const HISTORY_TTL_MS = 60 * 60 * 1000
const MAX_ENTRIES = 5_000

/**
 * An in-process cache in front of a provider: quotes for `quoteTtlMs`, histories for an hour,
 * and one upstream call per key however many requests ask at once (single flight; the first
 * asker's logger carries the upstream's log lines). Each instance keeps its own cache, so N
 * instances make up to N calls per symbol and TTL.
 */
export class CachedQuotes implements QuoteProvider {
  private readonly quotes = new Map<string, Entry<ProviderQuote | undefined>>()
  private readonly histories = new Map<string, Entry<MonthlyClose[] | undefined>>()

  constructor (
    private readonly provider: QuoteProvider,
    private readonly quoteTtlMs: number,
    private readonly telemetry: Telemetry = NO_TELEMETRY,
    private readonly now: () => number = Date.now
  ) {}

  get source (): string {
    return this.provider.source
  }

  async quote (symbol: string, log: FastifyBaseLogger): Promise<ProviderQuote | undefined> {
    return await this.cached(this.quotes, symbol, this.quoteTtlMs, async () => await this.provider.quote(symbol, log))
  }

  async monthlyCloses (symbol: string, since: MonthKey, log: FastifyBaseLogger): Promise<MonthlyClose[] | undefined> {
    return await this.cached(this.histories, `${symbol} ${since}`, HISTORY_TTL_MS, async () => await this.provider.monthlyCloses(symbol, since, log))
  }

  private async cached<T> (map: Map<string, Entry<T>>, key: string, ttlMs: number, load: () => Promise<T>): Promise<T> {
    const hit = map.get(key)
    const fresh = hit !== undefined && hit.expiresAt > this.now()
    this.telemetry.cache('quotes', fresh)
    if (fresh) return await hit.value
    if (map.size >= MAX_ENTRIES) map.clear()
    const entry: Entry<T> = { value: load(), expiresAt: this.now() + ttlMs }
    map.set(key, entry)
    // A failure is shared by the requests waiting on it, never cached past them.
    entry.value.catch(() => { if (map.get(key) === entry) map.delete(key) })
    return await entry.value
  }
}
