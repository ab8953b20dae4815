import { Type } from '@sinclair/typebox'
import { MillisecondsSchema, Timestamp } from '../../schemas/common.js'

export const ResetSchema = Type.Object({ message: Type.Literal('Dados resetados com sucesso') }, { title: 'Reset' })

const Reachability = Type.Object({ reachable: Type.Boolean(), responseTime: MillisecondsSchema })

/** Readiness: the store answered; upstreams are reported, never fatal. */
export const ReadySchema = Type.Object({
  status: Type.Literal('ready'),
  store: Type.Literal('ok'),
  upstreams: Type.Object({
    backend: Reachability,
    aggregator: Type.Composite([Reachability, Type.Object({ configured: Type.Boolean() })])
  }),
  timestamp: Timestamp
}, { title: 'Readiness' })
