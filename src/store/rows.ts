import { sql, type RawBuilder, type Selectable, type SqlBool } from 'kysely'
import type { PortfolioAssetsTable } from './database.js'
import { columnOf, rowReader, storedFields } from './columns.js'
import type { StoreHandle } from './handle.js'
import { AssetSchema } from '../schemas/asset.js'
import { fromCents } from '../schemas/money.js'

export type AssetRow = Selectable<PortfolioAssetsTable>

/**
 * An asset as answered, each field from its column; its `totalValue` is the stored cents every sum adds, so the
 * two always agree.
 */
export const toAsset = rowReader(AssetSchema, (row: Pick<AssetRow, 'value_cents'>) => ({
  totalValue: fromCents(row.value_cents)
}))

/** The columns {@link toAsset} reads. */
export const ASSET_COLUMNS = [...storedFields(AssetSchema, ['totalValue']).map(columnOf), 'value_cents'] as const

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
