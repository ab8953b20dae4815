import { Type, type Static } from '@sinclair/typebox'
import { TimestampOf } from './common.js'

/**
 * What a portfolio is worth at market prices (docs/api.md#valuation): `GET /portfolios/:id/valuation`,
 * each message of its live stream, GraphQL's `Portfolio.valuation` and `portfolioValuation`.
 */
export const PortfolioValuationSchema = Type.Object({
  portfolioId: Type.String({ description: 'The portfolio' }),
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
  unquotedSymbols: Type.Array(Type.String(), {
    description: 'Symbols without a quote (unknown to the provider, or the provider failing), distinct and sorted: ' +
      'their assets count at their totalValue'
  }),
  updatedAt: TimestampOf('When this valuation was computed')
}, { title: 'PortfolioValuation', description: 'A portfolio\'s value at market prices' })
export type PortfolioValuation = Static<typeof PortfolioValuationSchema>
