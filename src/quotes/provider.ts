import type { FastifyBaseLogger } from 'fastify'
import {
  TICKER_PATTERN,
  type ExchangeRate,
  type HistoryQuery,
  type MonthKey,
  type PercentObservation,
  type PriceHistory,
  type ProviderQuote,
  type RateObservation
} from '../schemas/quote.js'
import type { EventsRead } from '../schemas/corporate-events.js'

export type {
  Close, ExchangeRate, HistoryQuery, MonthKey, PercentObservation, PriceHistory, ProviderQuote,
  RateObservation
} from '../schemas/quote.js'
export { REAIS } from '../schemas/quote.js'

/**
 * Where prices come from (`QUOTES_PROVIDER`). `undefined` answers mean "no such ticker". Prices
 * are in the currency the provider gives them in; converting them to reais is the domain's
 * (`src/domain/reais.ts`), with the rates a provider gives.
 */
export interface QuoteProvider {
  /** Named in every quote's `source`. */
  readonly source: string
  /** `log` is the asking request's logger, so upstream lines carry its request id. */
  quote: (symbol: string, log: FastifyBaseLogger) => Promise<ProviderQuote | undefined>
  /** Several quotes in as few upstream calls as the provider allows; without it, one call per symbol. */
  quoteMany?: (symbols: readonly string[], log: FastifyBaseLogger) => Promise<Map<string, ProviderQuote | undefined>>
  /**
   * Asks the provider again now for all of `symbols`, in as few requests as it allows, whatever a
   * cache holds, and keeps the answers for the next readers (a cache's; a provider without one
   * needs none: its `quoteMany` always asks).
   */
  refresh?: (symbols: readonly string[], log: FastifyBaseLogger) => Promise<Map<string, ProviderQuote | undefined>>
  /** The closes of `symbol` asked for by `query`, oldest first, in the currency it is quoted in. */
  history: (symbol: string, query: HistoryQuery, log: FastifyBaseLogger) => Promise<PriceHistory | undefined>
  /**
   * The reais one unit of each currency (`USD`) is worth now, in one request for all; a currency
   * the provider has no rate for is `undefined`. Without it, the provider prices in reais only.
   */
  rates?: (currencies: readonly string[], log: FastifyBaseLogger) => Promise<Map<string, ExchangeRate | undefined>>
  /** The daily rates of `currency` in reais since `query.since`, oldest first; `undefined` when it has none. */
  rateHistory?: (
    currency: string, query: HistoryQuery, log: FastifyBaseLogger
  ) => Promise<RateObservation[] | undefined>
  /**
   * The SELIC target (percent a year) in force on each day the provider gives from `since`
   * (`YYYY-MM-DD`) to today, oldest first; `undefined` when it gives none (a plan without it).
   */
  primeRate?: (since: string, log: FastifyBaseLogger) => Promise<PercentObservation[] | undefined>
  /**
   * The IPCA's variation (percent) of each month the provider gives from `since`'s month on, dated
   * the month's first day, oldest first; `undefined` when it gives none (a plan without it).
   */
  inflation?: (since: string, log: FastifyBaseLogger) => Promise<PercentObservation[] | undefined>
  /**
   * The corporate events of each of `symbols` (docs/api.md#corporate-events), in as few requests as the provider
   * allows: none for a symbol it has none of, or does not know, or that is a coin. `asOf` is when they were read of
   * the provider: behind a cache, they are asked at most once a day, and a failure answers those last known (older).
   * Without it, the provider gives no events.
   */
  events?: (symbols: readonly string[], log: FastifyBaseLogger) => Promise<Map<string, EventsRead>>
  /** The events of `symbol` last read, without asking: a cache's; `undefined` when it keeps none. */
  eventsKnown?: (symbol: string) => EventsRead | undefined
  /**
   * Tells the provider which symbols are coins (held by assets of type CRYPTO), so that it prices
   * them as such from now on; answers the ones it did not know were.
   */
  knowCoins?: (symbols: readonly string[]) => string[]
}

/**
 * B3 closes at 17:00 in Brasília (18:00 in the weeks its hours follow New York's summer time),
 * three hours behind UTC: at 21:00 UTC a day's closes are in.
 */
const MARKET_CLOSE_UTC_HOUR = 21

/** When the next close is in, after `now` (ms): 21:00 UTC today, else tomorrow. */
export function nextClose (now: number): number {
  const day = new Date(now)
  const today = Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate(), MARKET_CLOSE_UTC_HOUR)
  return today > now ? today : today + 24 * 60 * 60 * 1000
}

/** The benchmark index the dashboard compares with. */
export const IBOV_SYMBOL = '^BVSP'

const TICKER = new RegExp(TICKER_PATTERN)

export function isTicker (symbol: string): boolean {
  return TICKER.test(symbol)
}

export function monthKey (date: Date): MonthKey {
  return `${date.getUTCFullYear()}-${String(date.getUTCMonth() + 1).padStart(2, '0')}`
}

/** Every month from `first` to `last`, inclusive. */
export function monthsBetween (first: MonthKey, last: MonthKey): MonthKey[] {
  const months: MonthKey[] = []
  let [year, month] = first.split('-').map(Number) as [number, number]
  const [lastYear, lastMonth] = last.split('-').map(Number) as [number, number]
  while (year < lastYear || (year === lastYear && month <= lastMonth)) {
    months.push(`${year}-${String(month).padStart(2, '0')}`)
    month++
    if (month > 12) { month = 1; year++ }
  }
  return months
}

/** Quotes of several symbols through the provider's batch when it has one, else one call each. */
export async function quotesOf (
  provider: QuoteProvider,
  symbols: readonly string[],
  log: FastifyBaseLogger
): Promise<Map<string, ProviderQuote | undefined>> {
  if (provider.quoteMany !== undefined) return await provider.quoteMany(symbols, log)
  return new Map(
    await Promise.all([...new Set(symbols)].map(async symbol => [symbol, await provider.quote(symbol, log)] as const))
  )
}
