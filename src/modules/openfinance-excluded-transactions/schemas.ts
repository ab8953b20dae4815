import { Type, type Static } from '@sinclair/typebox'
import { NonBlankString, PageQuerySchema, Timestamp } from '../../schemas.js'

/** Excluded transaction of spec §2.5, as listed (without `created_at`). */
export const ExcludedTransactionSchema = Type.Object({
  id: Type.String(),
  client_id: Type.String(),
  transaction_id: Type.String(),
  reason: Type.String(),
  excluded_at: Timestamp
})
export type ExcludedTransaction = Static<typeof ExcludedTransactionSchema>

/** The create response adds `created_at`. */
export const ExcludedTransactionRecordSchema = Type.Composite([ExcludedTransactionSchema, Type.Object({ created_at: Timestamp })])
export type ExcludedTransactionRecord = Static<typeof ExcludedTransactionRecordSchema>

export const CreateExclusionBodySchema = Type.Object({
  client_id: NonBlankString(200),
  transaction_id: NonBlankString(200),
  reason: NonBlankString(2000),
  /** When the user excluded it; the time of the request when absent. */
  excluded_at: Type.Optional(Type.String({ format: 'date-time' }))
})
export type CreateExclusionBody = Static<typeof CreateExclusionBodySchema>

export const ListExclusionsQuerySchema = Type.Composite([
  PageQuerySchema,
  Type.Object({ client_id: NonBlankString(200) })
])
