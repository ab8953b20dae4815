import { Type, type Static } from '@sinclair/typebox'

/** Asset dashboard of spec §2.4. */
export const DashboardSchema = Type.Object({
  basicInfo: Type.Object({
    ticker: Type.String(),
    name: Type.String(),
    imageUrl: Type.String(),
    quantity: Type.Number(),
    averagePrice: Type.Number(),
    lastQuote: Type.Number(),
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
    type: Type.Literal('BUY'),
    description: Type.String(),
    quantity: Type.Number(),
    pricePerUnit: Type.Number(),
    totalValue: Type.Number()
  }))
}, { title: 'AssetDashboard' })
export type Dashboard = Static<typeof DashboardSchema>
