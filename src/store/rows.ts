import { sql, type RawBuilder, type Selectable, type SqlBool } from 'kysely'
import type { AssetTransactionsTable, PortfolioAssetsTable } from './database.js'
import { columnOf, rowReader, storedFields } from './columns.js'
import type { StoreHandle } from './handle.js'
import { AssetSchema } from '../schemas/asset.js'
import { fromCents, money, positionValue } from '../schemas/money.js'
import type { AssetTransaction } from '../schemas/transaction.js'

export type AssetRow = Selectable<PortfolioAssetsTable>
export type TransactionRow = Selectable<AssetTransactionsTable>

/**
 * An asset as answered, each field from its column; its `totalValue` is the stored cents every sum adds, so the
 * two always agree.
 */
export const toAsset = rowReader(AssetSchema, (row: Pick<AssetRow, 'value_cents' | 'events_unapplied'>) => ({
  totalValue: fromCents(row.value_cents),
  eventsUnapplied: Number(row.events_unapplied) === 1
}))

/** A transaction as answered: its `totalValue` is quantity × price to the cent. */
export function toTransaction (row: TransactionRow): AssetTransaction {
  return {
    id: row.id,
    assetId: row.asset_id,
    type: row.type,
    date: row.date,
    quantity: row.quantity,
    price: row.price,
    fee: row.fee,
    totalValue: money(positionValue(row.quantity, row.price)),
    createdAt: row.created_at,
    investmentTransactionId: row.investment_transaction_id,
    // An integer on both engines (0 or 1).
    estimated: Number(row.estimated) === 1
  }
}

/** The columns {@link toAsset} reads. */
export const ASSET_COLUMNS = [
  ...storedFields(AssetSchema, ['totalValue', 'eventsUnapplied']).map(columnOf), 'value_cents', 'events_unapplied'
] as const

/**
 * `column` among `ids`, bound as one parameter whatever their number (`json_each` on SQLite, `any` on
 * PostgreSQL): one statement text, so one prepared statement, for any number of ids.
 */
export function among (handle: StoreHandle, column: string, ids: readonly string[]): RawBuilder<SqlBool> {
  const list = handle.listParameter(ids)
  return handle.engine === 'postgres'
    ? sql<SqlBool>`${sql.ref(column)} = any(${list}::text[])`
    : sql<SqlBool>`${sql.ref(column)} in (select value from json_each(${list}))`
}
