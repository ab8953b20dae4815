import { randomUUID } from 'node:crypto'
import type { Selectable } from 'kysely'
import type { ExcludedTransactionsTable } from './database.js'
import { now, type StoreHandle } from './handle.js'
import type { Page } from '../schemas/common.js'
import type {
  CreateExclusionInput,
  ExcludedTransaction,
  ExcludedTransactionRecord
} from '../schemas/excluded-transaction.js'

function toExclusion (row: Selectable<ExcludedTransactionsTable>): ExcludedTransactionRecord {
  return {
    id: row.id,
    client_id: row.client_id,
    transaction_id: row.transaction_id,
    reason: row.reason,
    excluded_at: row.excluded_at,
    created_at: row.created_at
  }
}

/** Open-finance excluded transactions (docs/api.md#resources), one per `(client_id, transaction_id)`. */
export class ExclusionRepository {
  constructor (private readonly handle: StoreHandle) {}

  /** Stores an exclusion once per (client_id, transaction_id); a repeat returns the stored record. */
  async create (input: CreateExclusionInput): Promise<{ record: ExcludedTransactionRecord, created: boolean }> {
    const db = this.handle.db
    const timestamp = now()
    const row = {
      id: randomUUID(),
      client_id: input.client_id,
      transaction_id: input.transaction_id,
      reason: input.reason,
      excluded_at: input.excluded_at ?? timestamp,
      created_at: timestamp
    }
    const inserted = await db.insertInto('excluded_transactions').values(row)
      .onConflict(oc => oc.columns(['client_id', 'transaction_id']).doNothing())
      .returningAll()
      .executeTakeFirst()
    if (inserted !== undefined) return { record: toExclusion(inserted), created: true }
    const existing = await db.selectFrom('excluded_transactions').selectAll()
      .where('client_id', '=', row.client_id)
      .where('transaction_id', '=', row.transaction_id)
      .executeTakeFirstOrThrow()
    return { record: toExclusion(existing), created: false }
  }

  async list (clientId: string, page: Page): Promise<ExcludedTransaction[]> {
    return await this.handle.db.selectFrom('excluded_transactions')
      .select(['id', 'client_id', 'transaction_id', 'reason', 'excluded_at'])
      .where('client_id', '=', clientId)
      .orderBy('created_at').orderBy('id')
      .limit(page.limit).offset(page.offset)
      .execute()
  }

  async get (id: string): Promise<ExcludedTransactionRecord | undefined> {
    const row = await this.handle.db
      .selectFrom('excluded_transactions')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst()
    return row === undefined ? undefined : toExclusion(row)
  }

  async count (): Promise<number> {
    const row = await this.handle.db
      .selectFrom('excluded_transactions')
      .select(eb => eb.cast<number>(eb.fn.countAll(), 'integer').as('n'))
      .executeTakeFirstOrThrow()
    return Number(row.n)
  }

  async delete (id: string): Promise<boolean> {
    const result = await this.handle.db.deleteFrom('excluded_transactions').where('id', '=', id).executeTakeFirst()
    return result.numDeletedRows > 0n
  }
}
