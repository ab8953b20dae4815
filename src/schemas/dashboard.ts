import { Type, type Static } from '@sinclair/typebox'
import { TimestampOf } from './common.js'
import { TransactionTypeSchema } from './transaction.js'

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
    investedValue: Type.Number({ description: 'What the quantity held cost, at average cost' }),
    grossValue: Type.Number(),
    result: Type.Number({ description: 'grossValue − investedValue: the result of what is held, not yet realized' }),
    resultPercentage: Type.Number(),
    realizedResult: Type.Number({
      description: 'What the sales made over the average price, less every transaction\'s fee'
    }),
    fees: Type.Number({ description: 'The fees of every transaction' })
  }),
  monthlyHistory: Type.Array(Type.Object({
    month: Type.String(),
    currentBalance: Type.Number(),
    quantity: Type.Number(),
    returnPercentage: Type.Number(),
    portfolioPercentage: Type.Number(),
    ibovPercentage: Type.Number()
  })),
  historicalChart: Type.Array(Type.Object({
    month: Type.String(),
    appliedValue: Type.Number(),
    grossBalance: Type.Number()
  })),
  transactions: Type.Array(Type.Object({
    id: Type.String(),
    date: Type.String(),
    type: TransactionTypeSchema,
    description: Type.String(),
    quantity: Type.Number(),
    pricePerUnit: Type.Number(),
    totalValue: Type.Number({ description: 'quantity × pricePerUnit, the fee apart' }),
    fee: Type.Number()
  }))
}, { title: 'AssetDashboard' })
export type Dashboard = Static<typeof DashboardSchema>
