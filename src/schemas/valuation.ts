import { Type, type Static } from '@sinclair/typebox'
import { RecordId, StoredText, TimestampOf } from './common.js'
import { QuoteSourceSchema } from './quote.js'

/**
 * What a portfolio is worth at market prices (docs/api.md#valuation): `GET /portfolios/:id/valuation`,
 * each message of its live stream, GraphQL's `Portfolio.valuation` and `portfolioValuation`.
 */
export const PortfolioValuationSchema = Type.Object({
  portfolioId: RecordId('The portfolio'),
  currency: Type.Literal('BRL'),
  bookValue: Type.Number({
    description: 'The portfolio\'s totalValue: quantity × purchase price of each asset, summed'
  }),
  marketValue: Type.Number({
    description: 'Each asset\'s quantity × its symbol\'s quote, rounded to cents (its totalValue when unquoted), summed'
  }),
  result: Type.Number({ description: 'marketValue − bookValue' }),
  resultPercent: Type.Number({ description: 'result / bookValue × 100, 2 decimals; 0 when bookValue is 0' }),
  quotedAt: Type.Union([TimestampOf('The oldest quote time used'), Type.Null()], {
    description: 'The oldest quote time used; null when no asset was quoted'
  }),
  quoteSource: Type.Union([QuoteSourceSchema, Type.Null()], {
    description: 'Who priced the quoted assets: brapi.dev (market prices), or the offline simulation (simulated ' +
      'prices, not market prices); null when no asset was quoted'
  }),
  unquotedSymbols: Type.Array(StoredText(200), {
    description: 'Symbols without a quote (unknown to the provider, or the provider failing), distinct and sorted: ' +
      'their assets count at their totalValue'
  }),
  updatedAt: TimestampOf('When this valuation was computed')
}, { title: 'PortfolioValuation', description: 'A portfolio\'s value at market prices' })
export type PortfolioValuation = Static<typeof PortfolioValuationSchema>

/** A message's `id:`, one more than the last (docs/api.md#valuation): digits of a safe integer. */
const EventId = Type.String({ pattern: '^[0-9]{1,16}$', maxLength: 16, description: 'Increases by one per message' })

/**
 * The events of the live valuation stream (`GET /portfolios/:id/valuation/stream`), each as an
 * object of the fields of a Server-Sent Event — `event`, `id`, `data` (its JSON decoded) — the
 * shape OpenAPI 3.2 gives a stream's items (`itemSchema`) and SSE client generators read from
 * `schema` in 3.1 (docs/api.md#valuation).
 */
const PortfolioValuationEventSchema = Type.Object({
  event: Type.Literal('valuation'),
  id: EventId,
  data: PortfolioValuationSchema
}, {
  title: 'PortfolioValuationEvent',
  description: 'The portfolio\'s valuation: at once, then after each change (at most one per VALUATION_MIN_INTERVAL_MS)'
})

const PortfolioDeletedEventSchema = Type.Object({
  event: Type.Literal('deleted'),
  id: EventId,
  data: Type.Object({ portfolioId: RecordId('The deleted portfolio') })
}, { title: 'PortfolioDeletedEvent', description: 'The portfolio was deleted: the last message, then the stream ends' })

export const PortfolioValuationStreamEventSchema = Type.Union(
  [PortfolioValuationEventSchema, PortfolioDeletedEventSchema],
  {
    title: 'PortfolioValuationStreamEvent',
    description: 'One message of the stream, by its `event`; between them, comment lines (`: heartbeat`) at ' +
      'least every 15 s, which carry nothing',
    discriminator: {
      propertyName: 'event',
      mapping: {
        valuation: '#/components/schemas/PortfolioValuationEvent',
        deleted: '#/components/schemas/PortfolioDeletedEvent'
      }
    }
  }
)
export type PortfolioValuationStreamEvent = Static<typeof PortfolioValuationStreamEventSchema>
