import { Type, type Static } from '@sinclair/typebox'
import { StoredText, TimestampOf } from './common.js'

/** Tickers the providers accept: B3 codes, indexes (`^BVSP`), coins (`BTC`), crypto pairs (`BTC-USD`). */
export const TICKER_PATTERN = '^[A-Za-z0-9^][A-Za-z0-9.^=-]{0,19}$'

/** `GET /portfolio-assets/price/:symbol` and GraphQL's `quote(symbol:)`. */
export const SymbolParamsSchema = Type.Object({ symbol: Type.String({ pattern: TICKER_PATTERN }) })

/** The currency every amount the service sums or compares is in (docs/api.md#currencies). */
export const REAIS = 'BRL'

/** Who priced a quote: the service's providers (src/quotes) name themselves so. */
export const QUOTE_SOURCES = ['brapi.dev', 'offline (cotações simuladas)'] as const
export const QuoteSourceSchema = Type.Unsafe<string>({
  type: 'string',
  enum: [...QUOTE_SOURCES],
  description: 'Who gave the price (brapi.dev, or the offline simulation)'
})

/** A price as a provider gives it, in the currency it gives it in. */
export const ProviderQuoteSchema = Type.Object({
  symbol: StoredText(200, 'The ticker'),
  price: Type.Number({ description: 'The last price, at most 8 decimals, in `currency`' }),
  currency: Type.String({
    description: 'The price\'s currency as the provider gives it (ISO 4217: BRL, USD…); coins are priced in BRL'
  }),
  lastUpdate: TimestampOf('When the provider last priced it')
})
export type ProviderQuote = Static<typeof ProviderQuoteSchema>

/** An asset's price quote: the provider's price and who gave it (docs/api.md#resources). */
export const QuoteSchema = Type.Composite(
  [
    ProviderQuoteSchema,
    Type.Object({ source: QuoteSourceSchema })
  ],
  { title: 'AssetQuote' }
)
export type Quote = Static<typeof QuoteSchema>

/** `YYYY-MM`, a calendar month in UTC. */
export type MonthKey = string

/**
 * The spacing of a price history: monthly closes feed the asset dashboard, daily ones a portfolio's
 * performance (each trading day's close, so a transaction's day is valued at that day's close).
 */
export type HistoryInterval = '1d' | '1mo'

/** What history a provider is asked for: `interval` closes from `since` (`YYYY-MM-DD`, inclusive) to now. */
export interface HistoryQuery {
  interval: HistoryInterval
  since: string
}

/**
 * One close of a history: the period that starts on `date` (`YYYY-MM-DD`, UTC) closed at `close`. `traded` when the
 * close is the price traded then, on that day's share basis (brapi's `rawClose`, a close other than its
 * `adjustedClose`, the offline provider's); else it may be restated for corporate events after it
 * (docs/api.md#corporate-events).
 */
export interface Close {
  date: string
  close: number
  traded?: true
}

/** A price history as a provider gives it: its closes, oldest first, in `currency`. */
export interface PriceHistory {
  currency: string
  closes: Close[]
}

/**
 * What one unit of `currency` is worth in reais, as the provider gives it: `rate` is the exact
 * decimal text (brapi's `bidPrice`), never a binary float.
 */
export interface ExchangeRate {
  currency: string
  rate: string
  lastUpdate: string
}

/**
 * One observation of an economic indicator (`date`: `YYYY-MM-DD`), a percentage as exact decimal
 * text: the SELIC target in force that day (percent a year), or a month's IPCA (percent, dated the
 * month's first day).
 */
export interface PercentObservation {
  date: string
  percent: string
}

/** One day's rate of a currency's history (`date`: `YYYY-MM-DD`), reais per unit, exact decimal text. */
export interface RateObservation {
  date: string
  rate: string
}
