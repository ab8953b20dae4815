import { Type, type Static } from '@sinclair/typebox'
import { Timestamp } from './common.js'

/** System statistics (docs/api.md#resources); `activeUsers` counts distinct portfolio owners. */
export const StatsSchema = Type.Object({
  totalPortfolios: Type.Integer({ description: 'Portfolios in the store' }),
  totalAssets: Type.Integer({ description: 'Assets in the store' }),
  totalValue: Type.Number({ description: 'The sum of every portfolio\'s totalValue, in BRL' }),
  activeUsers: Type.Integer({ description: 'Distinct owners of a portfolio' }),
  lastUpdate: Timestamp
}, { title: 'SystemStats' })
export type Stats = Static<typeof StatsSchema>
