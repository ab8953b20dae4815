import { NO_TELEMETRY, type Telemetry } from '../observability/telemetry.js'
import type { FastifyBaseLogger } from 'fastify'
import { quotesOf, type MonthKey, type MonthlyClose, type ProviderQuote, type QuoteProvider } from './provider.js'

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
  private readonly quoteEntries = new Map<string, Entry<ProviderQuote | undefined>>()
  private readonly historyEntries = new Map<string, Entry<MonthlyClose[] | undefined>>()

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
    return await this.cached(
      this.quoteEntries,
      symbol,
      this.quoteTtlMs,
      async () => await this.provider.quote(symbol, log)
    )
  }

  /**
   * Quotes of several symbols: what is cached or already being fetched is shared, the rest is
   * asked of the provider in one batch (as few upstream requests as it allows), and each symbol
   * of the batch then sits in the cache like a single quote, so REST and GraphQL share it.
   */
  async quoteMany (
    symbols: readonly string[], log: FastifyBaseLogger
  ): Promise<Map<string, ProviderQuote | undefined>> {
    const distinct = [...new Set(symbols)]
    const missing = distinct.filter(symbol => this.fresh(this.quoteEntries, symbol) === undefined)
    if (missing.length > 1 && this.provider.quoteMany !== undefined) {
      const batch = this.provider.quoteMany(missing, log)
      for (const symbol of missing) {
        this.remember(
          this.quoteEntries,
          symbol,
          this.quoteTtlMs,
          batch.then(answers => answers.get(symbol))
        )
      }
    }
    return new Map(await Promise.all(distinct.map(async symbol => [symbol, await this.quote(symbol, log)] as const)))
  }

  /**
   * The live valuations' refresh: every watched symbol asked again in one batch, fresh or not, and
   * each answer cached as a quote fetched now (a failure replaces nothing and is the caller's).
   */
  async refresh (symbols: readonly string[], log: FastifyBaseLogger): Promise<Map<string, ProviderQuote | undefined>> {
    const answers = await quotesOf(this.provider, [...new Set(symbols)], log)
    for (const [symbol, quote] of answers) {
      this.remember(this.quoteEntries, symbol, this.quoteTtlMs, Promise.resolve(quote))
    }
    return answers
  }

  async monthlyCloses (symbol: string, since: MonthKey, log: FastifyBaseLogger): Promise<MonthlyClose[] | undefined> {
    return await this.cached(
      this.historyEntries,
      `${symbol} ${since}`,
      HISTORY_TTL_MS,
      async () => await this.provider.monthlyCloses(symbol, since, log)
    )
  }

  private fresh<T> (map: Map<string, Entry<T>>, key: string): Entry<T> | undefined {
    const hit = map.get(key)
    return hit !== undefined && hit.expiresAt > this.now() ? hit : undefined
  }

  private remember<T> (map: Map<string, Entry<T>>, key: string, ttlMs: number, value: Promise<T>): Entry<T> {
    if (map.size >= MAX_ENTRIES) map.clear()
    const entry: Entry<T> = { value, expiresAt: this.now() + ttlMs }
    map.set(key, entry)
    // A failure is shared by the requests waiting on it, never cached past them.
    entry.value.catch(() => { if (map.get(key) === entry) map.delete(key) })
    return entry
  }

  private async cached<T> (map: Map<string, Entry<T>>, key: string, ttlMs: number, load: () => Promise<T>): Promise<T> {
    const hit = this.fresh(map, key)
    this.telemetry.cache('quotes', hit !== undefined)
    return await (hit ?? this.remember(map, key, ttlMs, load())).value
  }
}
