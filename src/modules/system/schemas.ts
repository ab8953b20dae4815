import { Type, type Static } from '@sinclair/typebox'
import { Timestamp } from '../../schemas.js'

const Sha1Hex = Type.String({ pattern: '^[0-9a-f]{40}$' })

export const ProviderConfigSchema = Type.Object({
  userProviderHash: Sha1Hex,
  clientProviderHash: Sha1Hex,
  autoCalculated: Type.Boolean(),
  models: Type.Object({ user: Type.String(), client: Type.String() })
})

/** System statistics of spec §2.9; `activeUsers` counts distinct portfolio owners (CONTRACT §6). */
export const StatsSchema = Type.Object({
  totalPortfolios: Type.Integer(),
  totalAssets: Type.Integer(),
  totalValue: Type.Number(),
  activeUsers: Type.Integer(),
  lastUpdate: Timestamp
})
export type Stats = Static<typeof StatsSchema>

export const ResetSchema = Type.Object({ message: Type.String() })

const Reachability = Type.Object({ reachable: Type.Boolean(), responseTime: Type.String() })

/** Readiness: the store answered; upstreams are reported, never fatal. */
export const ReadySchema = Type.Object({
  status: Type.Literal('ready'),
  store: Type.Literal('ok'),
  upstreams: Type.Object({
    backend: Reachability,
    aggregator: Type.Composite([Reachability, Type.Object({ configured: Type.Boolean() })])
  }),
  timestamp: Timestamp
})
