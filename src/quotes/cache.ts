import { MemoryCache, type TimeToLive } from '../cache/memory-cache.js'
import { NO_TELEMETRY, type Telemetry } from '../observability/telemetry.js'
import type { FastifyBaseLogger } from 'fastify'
import { untilNextDay } from '../schemas/calendar.js'
import type { EventsRead } from '../schemas/corporate-events.js'
import {
  nextClose,
  quotesOf,
  type ExchangeRate,
  type HistoryQuery,
  type PercentObservation,
  type PriceHistory,
  type ProviderQuote,
  type QuoteProvider,
  type RateObservation
} from './provider.js'

/**
 * Monthly closes change once a month; an hour keeps the current month's close fresh enough. A daily
 * history is also asked again at the next close (21:00 UTC), when the day's close is in.
 * @internal Test seam: a test moves its clock past it.
 */
export const HISTORY_TTL_MS = 60 * 60 * 1000
/**
 * Keys kept of each kind (quotes, rates, histories…), the least recently used dropped first.
 * @internal Test seam: a test fills the cache to it.
 */
export const MAX_ENTRIES = 5_000

/**
 * The time to live of what daily closes make (a daily history, a performance): an hour, and not past
 * the next close after it was asked, when the day's close is in.
 */
export const untilTheNextClose = (_value: unknown, startedAt: number): number =>
  Math.min(HISTORY_TTL_MS, nextClose(startedAt) - startedAt)

/** A symbol's events as a batch answered them: `fresh` when read of the provider now, else the last known. */
interface EventsAnswer {
  read: EventsRead
  fresh: boolean
}

/**
 * An in-process cache in front of a provider: quotes and exchange rates for `quoteTtlMs`, histories
 * (prices, rates, the SELIC and the IPCA) for an hour (daily prices not past the next close), and
 * one upstream call per key however many requests ask at once (single flight; the first asker's
 * logger carries the upstream's log lines). Each kind is a use of the one mechanism
 * (src/cache/memory-cache.ts) under the cache name `quotes`: a kind more is one line of the
 * constructor, with its time to live, and a method that asks it like `rateHistory`. Corporate events
 * are kept until the next day (00:00 UTC); the events last read of each symbol are kept past their
 * day, and a provider that fails answers them (their `asOf` says when they were read), not kept as
 * today's. Each instance keeps its own cache, so N instances make up to N calls per symbol and TTL.
 */
export class CachedQuotes implements QuoteProvider {
  private readonly quoteEntries: MemoryCache<ProviderQuote | undefined>
  private readonly rateEntries: MemoryCache<ExchangeRate | undefined>
  /** Monthly price histories, by symbol, interval and `since`. */
  private readonly historyEntries: MemoryCache<PriceHistory | undefined>
  private readonly dailyHistoryEntries: MemoryCache<PriceHistory | undefined>
  private readonly rateHistoryEntries: MemoryCache<RateObservation[] | undefined>
  /** The SELIC and IPCA series, by indicator and `since`. */
  private readonly indicatorEntries: MemoryCache<PercentObservation[] | undefined>
  /** Events by symbol, today's only: an answer of the last known (the provider failing) is not kept. */
  private readonly eventEntries: MemoryCache<EventsAnswer | undefined>
  /** Each symbol's events last read of the provider, whatever their day (peeked, never loaded). */
  private readonly lastEvents: MemoryCache<EventsRead>

  constructor (
    private readonly provider: QuoteProvider,
    quoteTtlMs: number,
    telemetry: Telemetry = NO_TELEMETRY,
    now: () => number = Date.now
  ) {
    // QUOTES_TTL=0 keeps no quote nor rate: every request asks the provider.
    const kind = <T>(ttlMs: TimeToLive<T>): MemoryCache<T> =>
      new MemoryCache<T>({ name: 'quotes', maxEntries: MAX_ENTRIES, ttlMs, telemetry, now })
    this.quoteEntries = kind(quoteTtlMs)
    this.rateEntries = kind(quoteTtlMs)
    this.historyEntries = kind(HISTORY_TTL_MS)
    this.dailyHistoryEntries = kind<PriceHistory | undefined>(untilTheNextClose)
    this.rateHistoryEntries = kind(HISTORY_TTL_MS)
    this.indicatorEntries = kind(HISTORY_TTL_MS)
    this.eventEntries = new MemoryCache<EventsAnswer | undefined>({
      name: 'quotes',
      maxEntries: MAX_ENTRIES,
      // A symbol's corporate events are asked once a day.
      ttlMs: (_answer, startedAt) => untilNextDay(startedAt),
      keeps: answer => answer?.fresh === true,
      telemetry,
      now
    })
    // Kept however old, the least recently used dropped first: answered only when the provider fails.
    this.lastEvents = new MemoryCache<EventsRead>({
      name: 'quotes', maxEntries: MAX_ENTRIES, ttlMs: Number.MAX_SAFE_INTEGER, now
    })
  }

  get source (): string {
    return this.provider.source
  }

  async quote (symbol: string, log: FastifyBaseLogger): Promise<ProviderQuote | undefined> {
    return await this.quoteEntries.get(symbol, async () => await this.provider.quote(symbol, log))
  }

  /**
   * Quotes of several symbols: what is cached or already being fetched is shared, the rest is
   * asked of the provider in one batch (as few upstream requests as it allows), and each symbol
   * of the batch then sits in the cache like a single quote, so REST and GraphQL share it.
   */
  async quoteMany (
    symbols: readonly string[], log: FastifyBaseLogger
  ): Promise<Map<string, ProviderQuote | undefined>> {
    return await batched(this.quoteEntries, symbols, async missing => await quotesOf(this.provider, missing, log),
      async symbol => await this.provider.quote(symbol, log))
  }

  /**
   * The live valuations' refresh: every watched symbol asked again in one batch, fresh or not, and
   * each answer cached as a quote fetched now (a failure replaces nothing and is the caller's).
   */
  async refresh (symbols: readonly string[], log: FastifyBaseLogger): Promise<Map<string, ProviderQuote | undefined>> {
    const answers = await quotesOf(this.provider, [...new Set(symbols)], log)
    for (const [symbol, quote] of answers) this.quoteEntries.keep(symbol, quote)
    return answers
  }

  async history (symbol: string, query: HistoryQuery, log: FastifyBaseLogger): Promise<PriceHistory | undefined> {
    const entries = query.interval === '1d' ? this.dailyHistoryEntries : this.historyEntries
    return await entries.get(`${symbol} ${query.interval} ${query.since}`,
      async () => await this.provider.history(symbol, query, log))
  }

  /** Rates like quotes: cached for the quotes' TTL, the missing ones asked in one request. */
  async rates (currencies: readonly string[], log: FastifyBaseLogger): Promise<Map<string, ExchangeRate | undefined>> {
    const rates = this.provider.rates
    if (rates === undefined) return new Map(currencies.map(currency => [currency, undefined]))
    return await batched(this.rateEntries, currencies,
      async missing => await rates.call(this.provider, missing, log),
      async currency => (await rates.call(this.provider, [currency], log)).get(currency))
  }

  async rateHistory (
    currency: string, query: HistoryQuery, log: FastifyBaseLogger
  ): Promise<RateObservation[] | undefined> {
    const rateHistory = this.provider.rateHistory
    if (rateHistory === undefined) return undefined
    return await this.rateHistoryEntries.get(`${currency} ${query.interval} ${query.since}`,
      async () => await rateHistory.call(this.provider, currency, query, log))
  }

  async primeRate (since: string, log: FastifyBaseLogger): Promise<PercentObservation[] | undefined> {
    const primeRate = this.provider.primeRate
    if (primeRate === undefined) return undefined
    return await this.indicatorEntries.get(`selic ${since}`,
      async () => await primeRate.call(this.provider, since, log))
  }

  async inflation (since: string, log: FastifyBaseLogger): Promise<PercentObservation[] | undefined> {
    const inflation = this.provider.inflation
    if (inflation === undefined) return undefined
    return await this.indicatorEntries.get(`ipca ${since}`,
      async () => await inflation.call(this.provider, since, log))
  }

  /**
   * The events of `symbols` read today (the fresh ones, and those on their way, shared), the others asked of the
   * provider in one batch. When it fails, each symbol read before answers its last known events, not kept as
   * today's (asked again by the next reader); a symbol never read fails with the provider's error.
   */
  async events (symbols: readonly string[], log: FastifyBaseLogger): Promise<Map<string, EventsRead>> {
    const events = this.provider.events
    if (events === undefined) return new Map()
    const ask = async (missing: readonly string[]): Promise<Map<string, EventsAnswer>> =>
      await this.eventsOfProvider(missing, async () => await events.call(this.provider, missing, log))
    const answers = await batched(this.eventEntries, symbols, ask, async symbol => (await ask([symbol])).get(symbol))
    return new Map([...answers].map(([symbol, answer]) => [symbol, (answer as EventsAnswer).read]))
  }

  eventsKnown (symbol: string): EventsRead | undefined {
    return this.lastEvents.peek(symbol)
  }

  /** The provider's answer to a batch, each symbol's kept as its last known; on a failure, those last known. */
  private async eventsOfProvider (
    symbols: readonly string[], read: () => Promise<Map<string, EventsRead>>
  ): Promise<Map<string, EventsAnswer>> {
    try {
      const answers = await read()
      for (const [symbol, events] of answers) this.lastEvents.keep(symbol, events)
      return new Map(symbols.map(symbol => [symbol, { read: answers.get(symbol) as EventsRead, fresh: true }]))
    } catch (error) {
      const known = symbols.map(symbol => [symbol, this.lastEvents.peek(symbol)] as const)
      if (known.some(([, read]) => read === undefined)) throw error
      return new Map(known.map(([symbol, read]) => [symbol, { read: read as EventsRead, fresh: false }]))
    }
  }

  /** Symbols that become coins are asked again: what was cached for them was asked as something else. */
  knowCoins (symbols: readonly string[]): string[] {
    const fresh = this.provider.knowCoins?.(symbols) ?? []
    for (const symbol of fresh) {
      this.quoteEntries.forget(symbol)
      for (const histories of [this.historyEntries, this.dailyHistoryEntries]) {
        histories.forgetWhere(key => key.startsWith(`${symbol} `))
      }
    }
    return fresh
  }
}

/**
 * Values of several keys (quotes, rates, events): the fresh ones and those on their way are shared, the
 * missing ones asked in one `load` (when more than one, else by `one`), each then kept like a single value.
 */
async function batched<T> (
  entries: MemoryCache<T | undefined>,
  keys: readonly string[],
  load: (missing: readonly string[]) => Promise<Map<string, T | undefined>>,
  one: (key: string) => Promise<T | undefined>
): Promise<Map<string, T | undefined>> {
  const distinct = [...new Set(keys)]
  const missing = new Set(distinct.filter(key => !entries.has(key)))
  // Each missing key's lookup loads its share of the batch (its own load when the cache keeps nothing).
  const batch = missing.size > 1 ? load([...missing]) : undefined
  const loader = (key: string) => batch !== undefined && missing.has(key)
    ? async () => (await batch).get(key)
    : async () => await one(key)
  return new Map(await Promise.all(distinct.map(async key => [key, await entries.get(key, loader(key))] as const)))
}
