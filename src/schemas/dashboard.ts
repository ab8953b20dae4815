import { Type, type Static } from '@sinclair/typebox'
import { TimestampOf } from './common.js'

/** An asset's dashboard (docs/api.md#the-asset-dashboard). */
export const DashboardSchema = Type.Object({
  basicInfo: Type.Object({
    ticker: Type.String(),
    name: Type.String(),
    imageUrl: Type.String(),
    quantity: Type.Number(),
    averagePrice: Type.Number(),
    lastQuote: Type.Number(),
    quoteSource: Type.String({
      description: 'Who priced lastQuote (and so grossValue and result): the quote provider as a quote\'s ' +
        'source names it (brapi.dev, or the offline simulation), or `asset` when the provider does not know ' +
        'the symbol and the asset\'s own stored price is used'
    }),
    quoteUpdatedAt: Type.Union([TimestampOf('When the provider last priced it'), Type.Null()], {
      description: 'When the provider last priced lastQuote; null for an asset\'s own stored price'
    }),
    investedValue: Type.Number(),
    grossValue: Type.Number(),
    result: Type.Number(),
    resultPercentage: Type.Number()
  }),
  monthlyHistory: Type.Array(Type.Object({
    month: Type.String(),
    currentBalance: Type.Number(),
    quantity: Type.Number(),
    returnPercentage: Type.Number(),
    portfolioPercentage: Type.Number(),
    ibovPercentage: Type.Number(),
    estimated: Type.Boolean({
      description: 'True when a figure of this month rests on a price that is not market data: a month without ' +
        'its own close (valued at the average buy price, or at an earlier close), an asset priced at its own ' +
        'stored price, a close converted with another month\'s exchange rate, or the benchmark missing ' +
        '(ibovPercentage is then not the index\'s change)'
    })
  })),
  historicalChart: Type.Array(Type.Object({
    month: Type.String(),
    appliedValue: Type.Number(),
    grossBalance: Type.Number()
  })),
  transactions: Type.Array(Type.Object({
    id: Type.String(),
    date: Type.String(),
    type: Type.Literal('BUY'),
    description: Type.String(),
    quantity: Type.Number(),
    pricePerUnit: Type.Number(),
    totalValue: Type.Number()
  }))
}, { title: 'AssetDashboard' })
export type Dashboard = Static<typeof DashboardSchema>
