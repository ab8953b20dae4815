import { sql, type RawBuilder, type Selectable, type SqlBool } from 'kysely'
import type { PortfolioAssetsTable } from './database.js'
import type { StoreHandle } from './handle.js'
import type { Asset } from '../schemas/asset.js'
import { fromCents } from '../schemas/money.js'

export type AssetRow = Selectable<PortfolioAssetsTable>

/** An asset as answered; its `totalValue` is the stored cents every sum adds, so the two always agree. */
export function toAsset (row: AssetRow): Asset {
  return {
    id: row.id,
    name: row.name,
    symbol: row.symbol,
    type: row.type,
    quantity: row.quantity,
    price: row.price,
    totalValue: fromCents(row.value_cents),
    portfolioId: row.portfolio_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at
  }
}

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
