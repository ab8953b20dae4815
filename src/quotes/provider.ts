/** `YYYY-MM`, a calendar month in UTC. */
export type MonthKey = string

export interface Quote {
  symbol: string
  price: number
  currency: string
  /** ISO 8601 timestamp of the price. */
  lastUpdate: string
}

export interface MonthlyClose {
  month: MonthKey
  close: number
}

/** Where prices come from (`QUOTES_PROVIDER`). `undefined` answers mean "no such ticker". */
export interface QuoteProvider {
  /** Named in every quote's `source`. */
  readonly source: string
  quote: (symbol: string) => Promise<Quote | undefined>
  /** Closing prices of each month from `since` (inclusive) on, oldest first. */
  monthlyCloses: (symbol: string, since: MonthKey) => Promise<MonthlyClose[] | undefined>
}

/** The benchmark index the dashboard compares with. */
export const IBOV_SYMBOL = '^BVSP'

/** Tickers the providers accept: B3 codes, indexes (`^BVSP`), crypto pairs (`BTC-USD`). */
export const TICKER_PATTERN = '^[A-Za-z0-9^][A-Za-z0-9.^=-]{0,19}$'
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
