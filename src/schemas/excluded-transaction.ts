import { Type, type Static } from '@sinclair/typebox'
import { NonBlankString, PageQuerySchema, RecordId, StoredText, Timestamp } from './common.js'

/** An excluded transaction as listed (without `created_at`, which only the create answer has). */
export const ExcludedTransactionSchema = Type.Object({
  id: RecordId(),
  client_id: StoredText(200),
  transaction_id: StoredText(200),
  reason: StoredText(2000),
  excluded_at: Timestamp
}, { title: 'ExcludedTransaction' })
export type ExcludedTransaction = Static<typeof ExcludedTransactionSchema>

/** The create response adds `created_at`. */
export const ExcludedTransactionRecordSchema = Type.Composite(
  [ExcludedTransactionSchema, Type.Object({ created_at: Timestamp })],
  { title: 'ExcludedTransactionRecord' }
)
export type ExcludedTransactionRecord = Static<typeof ExcludedTransactionRecordSchema>

export const CreateExclusionInputSchema = Type.Object({
  client_id: NonBlankString(200),
  transaction_id: NonBlankString(200),
  reason: NonBlankString(2000),
  /** When the user excluded it; the time of the request when absent. */
  excluded_at: Type.Optional(Type.String({ format: 'date-time' }))
}, {
  title: 'ExcludeTransactionInput',
  examples: [{ client_id: 'client-7', transaction_id: 'tx-2024-0001', reason: 'Transferência entre contas próprias' }]
})
export type CreateExclusionInput = Static<typeof CreateExclusionInputSchema>

/** `GET /openfinance-excluded-transactions` and GraphQL's `excludedTransactions`: one client's, a page at a time. */
export const ListExclusionsQuerySchema = Type.Composite([
  PageQuerySchema,
  Type.Object({ client_id: NonBlankString(200) })
])
