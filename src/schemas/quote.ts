import { Type, type Static } from '@sinclair/typebox'
import { MonthSchema, StoredText, TimestampOf } from './common.js'

/** Tickers the providers accept: B3 codes, indexes (`^BVSP`), crypto pairs (`BTC-USD`). */
export const TICKER_PATTERN = '^[A-Za-z0-9^][A-Za-z0-9.^=-]{0,19}$'

/** `GET /portfolio-assets/price/:symbol` and GraphQL's `quote(symbol:)`. */
export const SymbolParamsSchema = Type.Object({ symbol: Type.String({ pattern: TICKER_PATTERN }) })

/** Who priced a quote: the service's providers (src/quotes) name themselves so. */
export const QUOTE_SOURCES = ['brapi.dev', 'offline (cotações simuladas)'] as const
const QuoteSourceSchema = Type.Unsafe<string>({
  type: 'string',
  enum: [...QUOTE_SOURCES],
  description: 'Who gave the price (brapi.dev, or the offline simulation)'
})

/** A price as a provider gives it. */
export const ProviderQuoteSchema = Type.Object({
  symbol: StoredText(200, 'The ticker'),
  price: Type.Number({ description: 'The last price, at most 8 decimals' }),
  currency: Type.String({ description: 'The price\'s currency (BRL)' }),
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

/** The closing price of a month. */
export const MonthlyCloseSchema = Type.Object({
  month: MonthSchema,
  close: Type.Number()
})
export type MonthlyClose = Static<typeof MonthlyCloseSchema>
