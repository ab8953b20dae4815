import { randomUUID } from 'node:crypto'
import type { Transaction } from 'kysely'
import type { Database } from './database.js'
import { DEMO_PORTFOLIOS, type DemoAsset, type DemoPortfolio } from './demo-data.js'
import { now, type StoreHandle } from './handle.js'
import type { TransactionRow } from './rows.js'
import type { Trade } from '../schemas/average-cost.js'
import { positionValue, toCents } from '../schemas/money.js'

const DEMO_LOADED_KEY = 'demo_data_loaded_at'

/** `monthsAgo` months before `now`, as YYYY-MM-DD (the 15th, so every month exists). */
function monthsBefore (now: Date, monthsAgo: number): string {
  const date = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - monthsAgo, 15))
  return date.toISOString().slice(0, 10)
}

/** An asset's buys and sales as transactions, in date order (of one date, buys first). */
function transactionsOf (asset: DemoAsset, assetId: string, seededAt: Date, timestamp: string): TransactionRow[] {
  const trades: Trade[] = [
    ...asset.lots.map(lot => ({ type: 'BUY' as const, ...lot })),
    ...(asset.sales ?? []).map(sale => ({ type: 'SELL' as const, ...sale }))
  ].map(({ monthsAgo, fee = 0, ...trade }) => ({ ...trade, fee, date: monthsBefore(seededAt, monthsAgo) }))
    .sort((a, b) => a.date.localeCompare(b.date) || (a.type === b.type ? 0 : a.type === 'BUY' ? -1 : 1))
  return trades.map((trade, index) =>
    ({
      id: randomUUID(),
      asset_id: assetId,
      seq: index + 1,
      created_at: timestamp,
      investment_transaction_id: null,
      estimated: 0,
      ...trade
    }))
}

async function insertPortfolios (trx: Transaction<Database>, portfolios: readonly DemoPortfolio[]): Promise<void> {
  const seededAt = new Date()
  for (const portfolio of portfolios) {
    const timestamp = now()
    const portfolioId = randomUUID()
    await trx.insertInto('portfolios').values({
      id: portfolioId,
      name: portfolio.name,
      description: portfolio.description,
      user_id: portfolio.userId,
      created_at: timestamp,
      updated_at: timestamp
    }).execute()
    for (const asset of portfolio.assets) {
      const assetId = randomUUID()
      const transactions = transactionsOf(asset, assetId, seededAt, timestamp)
      // The position the data states; a last known price is the asset's own, as a PATCH of price sets it.
      const { quantity } = asset
      const price = asset.price ?? asset.averagePrice
      await trx.insertInto('portfolio_assets').values({
        id: assetId,
        portfolio_id: portfolioId,
        name: asset.name,
        symbol: asset.symbol,
        type: asset.type,
        quantity,
        price,
        value_cents: toCents(positionValue(quantity, price)),
        created_at: timestamp,
        updated_at: timestamp
      }).execute()
      await trx.insertInto('asset_transactions').values(transactions).execute()
    }
  }
}

/** The demo portfolios of development: loaded once per store, restored by `/reset`. */
export class DemoRepository {
  constructor (private readonly handle: StoreHandle) {}

  /** Replaces every portfolio and asset with the demo data, in one transaction: every portfolio changed. */
  async reset (): Promise<void> {
    await this.handle.write(async (trx, announce) => {
      await trx.deleteFrom('asset_transactions').execute()
      await trx.deleteFrom('portfolio_assets').execute()
      await trx.deleteFrom('portfolios').execute()
      await insertPortfolios(trx, DEMO_PORTFOLIOS)
      await trx.insertInto('bff_store_meta').values({ key: DEMO_LOADED_KEY, value: now() })
        .onConflict(oc => oc.column('key').doUpdateSet({ value: now() }))
        .execute()
      announce.all()
    })
  }

  /** Loads the demo data the first time a store starts; several instances starting at once load it once. */
  async loadOnce (): Promise<boolean> {
    return await this.handle.write(async trx => {
      const claimed = await trx.insertInto('bff_store_meta').values({ key: DEMO_LOADED_KEY, value: now() })
        .onConflict(oc => oc.column('key').doNothing())
        .returning('key')
        .executeTakeFirst()
      if (claimed === undefined) return false
      await insertPortfolios(trx, DEMO_PORTFOLIOS)
      return true
    })
  }
}
