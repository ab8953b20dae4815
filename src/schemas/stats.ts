import { Type, type Static } from '@sinclair/typebox'
import { Timestamp } from './common.js'

/** A count of rows: at most 2³¹ − 1, as GraphQL's `Int`, which the same counts are there (schema.graphql). */
function Count (description: string) {
  return Type.Integer({ minimum: 0, maximum: 2 ** 31 - 1, description })
}

/** System statistics (docs/api.md#resources); `activeUsers` counts distinct portfolio owners. */
export const StatsSchema = Type.Object({
  totalPortfolios: Count('Portfolios in the store'),
  totalAssets: Count('Assets in the store'),
  totalValue: Type.Number({ description: 'The sum of every portfolio\'s totalValue, in BRL' }),
  activeUsers: Count('Distinct owners of a portfolio'),
  lastUpdate: Timestamp
}, { title: 'SystemStats' })
export type Stats = Static<typeof StatsSchema>
