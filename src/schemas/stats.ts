import { Type, type Static } from '@sinclair/typebox'
import { Timestamp } from './common.js'

/** System statistics of spec §2.9; `activeUsers` counts distinct portfolio owners (CONTRACT §6). */
export const StatsSchema = Type.Object({
  totalPortfolios: Type.Integer(),
  totalAssets: Type.Integer(),
  totalValue: Type.Number(),
  activeUsers: Type.Integer(),
  lastUpdate: Timestamp
}, { title: 'SystemStats' })
export type Stats = Static<typeof StatsSchema>
