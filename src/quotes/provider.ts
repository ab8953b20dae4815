import type { FastifyBaseLogger } from 'fastify'
import { TICKER_PATTERN, type MonthKey, type MonthlyClose, type ProviderQuote } from '../schemas/quote.js'

export type { MonthKey, MonthlyClose, ProviderQuote } from '../schemas/quote.js'
export { TICKER_PATTERN } from '../schemas/quote.js'

/** Where prices come from (`QUOTES_PROVIDER`). `undefined` answers mean "no such ticker". */
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
  /** Closing prices of each month from `since` (inclusive) on, oldest first. */
  monthlyCloses: (symbol: string, since: MonthKey, log: FastifyBaseLogger) => Promise<MonthlyClose[] | undefined>
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
