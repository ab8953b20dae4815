import { LRUCache } from 'lru-cache'
import { NO_TELEMETRY, type Telemetry } from '../observability/telemetry.js'
import type { FastifyBaseLogger } from 'fastify'
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

/** Answers by key, each with its own time to live; the promise itself while the provider is asked (single flight). */
type Entries<T> = LRUCache<string, Promise<T>>

/**
 * Monthly closes change once a month; an hour keeps the current month's close fresh enough. A daily
 * history is also asked again at the next close (21:00 UTC), when the day's close is in.
 */
export const HISTORY_TTL_MS = 60 * 60 * 1000
/** Keys kept of each kind (quotes, rates, histories…), the least recently used dropped first. */
export const MAX_ENTRIES = 5_000

const DAY_MS = 24 * 60 * 60 * 1000

/** From `now` (ms) to the next day's start (00:00 UTC): a symbol's corporate events are asked once a day. */
export function untilNextDay (now: number): number {
  return DAY_MS - (now % DAY_MS)
}

/** A symbol's events as a batch answered them: `fresh` when read of the provider now, else the last known. */
interface EventsAnswer {
  read: EventsRead
  fresh: boolean
}

/** An `lru-cache` of answers on `now`'s clock (milliseconds), read at each look-up. */
function entries<T> (now: () => number): Entries<T> {
  return new LRUCache<string, Promise<T>>({ max: MAX_ENTRIES, perf: { now }, ttlResolution: 0 })
}

/**
 * An in-process cache in front of a provider: quotes and exchange rates for `quoteTtlMs`, histories
 * (prices, rates, the SELIC and the IPCA) for an hour (daily prices not past the next close), corporate
 * events until the next day (00:00 UTC), and one upstream call per key however many requests ask at once
 * (single flight; the first asker's logger carries the upstream's log lines). Each instance keeps its own
 * cache, so N instances make up to N calls per symbol and TTL. The events last read of each symbol are
 * kept past their day: a provider that fails answers them (their `asOf` says when they were read).
 */
export class CachedQuotes implements QuoteProvider {
  private readonly quoteEntries: Entries<ProviderQuote | undefined>
  private readonly rateEntries: Entries<ExchangeRate | undefined>
  private readonly historyEntries: Entries<PriceHistory | undefined>
  private readonly rateHistoryEntries: Entries<RateObservation[] | undefined>
  /** The SELIC and IPCA series, by indicator and `since`. */
  private readonly indicatorEntries: Entries<PercentObservation[] | undefined>
  private readonly eventEntries: Entries<EventsRead>
  /** Each symbol's events last read of the provider, whatever their day. */
  private readonly lastEvents: LRUCache<string, EventsRead>

  constructor (
    private readonly provider: QuoteProvider,
    private readonly quoteTtlMs: number,
    private readonly telemetry: Telemetry = NO_TELEMETRY,
    private readonly now: () => number = Date.now
  ) {
    this.quoteEntries = entries(now)
    this.rateEntries = entries(now)
    this.historyEntries = entries(now)
    this.rateHistoryEntries = entries(now)
    this.indicatorEntries = entries(now)
    this.eventEntries = entries(now)
    this.lastEvents = new LRUCache({ max: MAX_ENTRIES })
  }

  get source (): string {
    return this.provider.source
  }

  async quote (symbol: string, log: FastifyBaseLogger): Promise<ProviderQuote | undefined> {
    return await this.cached(this.quoteEntries, symbol, this.quoteTtlMs,
      async () => await this.provider.quote(symbol, log))
  }

  /**
   * Quotes of several symbols: what is cached or already being fetched is shared, the rest is
   * asked of the provider in one batch (as few upstream requests as it allows), and each symbol
   * of the batch then sits in the cache like a single quote, so REST and GraphQL share it.
   */
  async quoteMany (
    symbols: readonly string[], log: FastifyBaseLogger
  ): Promise<Map<string, ProviderQuote | undefined>> {
    return await this.batched(this.quoteEntries, symbols, async missing => await quotesOf(this.provider, missing, log),
      async symbol => await this.quote(symbol, log))
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

  async history (symbol: string, query: HistoryQuery, log: FastifyBaseLogger): Promise<PriceHistory | undefined> {
    return await this.cached(this.historyEntries, `${symbol} ${query.interval} ${query.since}`, this.historyTtl(query),
      async () => await this.provider.history(symbol, query, log))
  }

  /** An hour; a daily history (today's close among it) never past the next close, after which it is asked again. */
  private historyTtl (query: HistoryQuery): number {
    if (query.interval !== '1d') return HISTORY_TTL_MS
    const now = this.now()
    return Math.min(HISTORY_TTL_MS, nextClose(now) - now)
  }

  /** Rates like quotes: cached for the quotes' TTL, the missing ones asked in one request. */
  async rates (currencies: readonly string[], log: FastifyBaseLogger): Promise<Map<string, ExchangeRate | undefined>> {
    const rates = this.provider.rates
    if (rates === undefined) return new Map(currencies.map(currency => [currency, undefined]))
    return await this.batched(this.rateEntries, currencies,
      async missing => await rates.call(this.provider, missing, log),
      async currency => (await rates.call(this.provider, [currency], log)).get(currency))
  }

  async rateHistory (
    currency: string, query: HistoryQuery, log: FastifyBaseLogger
  ): Promise<RateObservation[] | undefined> {
    const rateHistory = this.provider.rateHistory
    if (rateHistory === undefined) return undefined
    return await this.cached(this.rateHistoryEntries, `${currency} ${query.interval} ${query.since}`, HISTORY_TTL_MS,
      async () => await rateHistory.call(this.provider, currency, query, log))
  }

  async primeRate (since: string, log: FastifyBaseLogger): Promise<PercentObservation[] | undefined> {
    const primeRate = this.provider.primeRate
    if (primeRate === undefined) return undefined
    return await this.cached(this.indicatorEntries, `selic ${since}`, HISTORY_TTL_MS,
      async () => await primeRate.call(this.provider, since, log))
  }

  async inflation (since: string, log: FastifyBaseLogger): Promise<PercentObservation[] | undefined> {
    const inflation = this.provider.inflation
    if (inflation === undefined) return undefined
    return await this.cached(this.indicatorEntries, `ipca ${since}`, HISTORY_TTL_MS,
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
    const asked = new Map<string, Promise<EventsRead>>()
    const missing: string[] = []
    for (const symbol of new Set(symbols)) {
      const hit = this.eventEntries.get(symbol)
      this.telemetry.cache('quotes', hit !== undefined)
      if (hit === undefined) missing.push(symbol)
      else asked.set(symbol, hit)
    }
    if (missing.length > 0) {
      const batch = this.eventsOfProvider(missing, async () => await events.call(this.provider, missing, log))
      for (const symbol of missing) {
        const answer = batch.then(answers => answers.get(symbol) as EventsAnswer)
        const read = answer.then(({ read }) => read)
        const entry = this.remember(this.eventEntries, symbol, untilNextDay(this.now()), read)
        asked.set(symbol, entry)
        answer.then(({ fresh }) => {
          if (!fresh && this.eventEntries.peek(symbol) === entry) this.eventEntries.delete(symbol)
        }, () => {})
      }
    }
    return new Map(await Promise.all([...asked].map(async ([symbol, read]) => [symbol, await read] as const)))
  }

  eventsKnown (symbol: string): EventsRead | undefined {
    return this.lastEvents.get(symbol)
  }

  /** The provider's answer to a batch, each symbol's kept as its last known; on a failure, those last known. */
  private async eventsOfProvider (
    symbols: readonly string[], read: () => Promise<Map<string, EventsRead>>
  ): Promise<Map<string, EventsAnswer>> {
    try {
      const answers = await read()
      for (const [symbol, events] of answers) this.lastEvents.set(symbol, events)
      return new Map(symbols.map(symbol => [symbol, { read: answers.get(symbol) as EventsRead, fresh: true }]))
    } catch (error) {
      const known = symbols.map(symbol => [symbol, this.lastEvents.get(symbol)] as const)
      if (known.some(([, read]) => read === undefined)) throw error
      return new Map(known.map(([symbol, read]) => [symbol, { read: read as EventsRead, fresh: false }]))
    }
  }

  /** Symbols that become coins are asked again: what was cached for them was asked as something else. */
  knowCoins (symbols: readonly string[]): string[] {
    const fresh = this.provider.knowCoins?.(symbols) ?? []
    for (const symbol of fresh) {
      this.quoteEntries.delete(symbol)
      for (const key of [...this.historyEntries.keys()]) {
        if (key.startsWith(`${symbol} `)) this.historyEntries.delete(key)
      }
    }
    return fresh
  }

  /**
   * Values of several keys (quotes, rates): the fresh ones and those on their way are shared, the
   * missing ones asked in one `load` (when more than one), each then cached like a single value
   * (`one`) for the quotes' TTL.
   */
  private async batched<T> (
    entries: Entries<T | undefined>,
    keys: readonly string[],
    load: (missing: readonly string[]) => Promise<Map<string, T | undefined>>,
    one: (key: string) => Promise<T | undefined>
  ): Promise<Map<string, T | undefined>> {
    const distinct = [...new Set(keys)]
    const missing = distinct.filter(key => entries.get(key) === undefined)
    // Each key's share of the batch; kept as the key's entry unless the cache is off.
    const shares = new Map<string, Promise<T | undefined>>()
    if (missing.length > 1) {
      const batch = load(missing)
      for (const key of missing) {
        shares.set(key, this.remember(entries, key, this.quoteTtlMs, batch.then(answers => answers.get(key))))
      }
    }
    const answer = async (key: string): Promise<T | undefined> => await (shares.get(key) ?? one(key))
    return new Map(await Promise.all(distinct.map(async key =>
      [key, await this.cached(entries, key, this.quoteTtlMs, async () => await answer(key))] as const)))
  }

  private remember<T> (map: Entries<T>, key: string, ttlMs: number, value: Promise<T>): Promise<T> {
    // QUOTES_TTL=0 turns the cache off (to lru-cache, a TTL of 0 would be none: kept for ever).
    if (ttlMs <= 0) return value
    map.set(key, value, { ttl: ttlMs })
    // A failure is shared by the requests waiting on it, never cached past them.
    value.catch(() => { if (map.peek(key) === value) map.delete(key) })
    return value
  }

  private async cached<T> (map: Entries<T>, key: string, ttlMs: number, load: () => Promise<T>): Promise<T> {
    const hit = map.get(key)
    this.telemetry.cache('quotes', hit !== undefined)
    return await (hit ?? this.remember(map, key, ttlMs, load()))
  }
}
