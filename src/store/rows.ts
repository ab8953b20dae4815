import type { Selectable } from 'kysely'
import type { PortfolioAssetsTable } from './database.js'
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
