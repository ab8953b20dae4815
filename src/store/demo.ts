import { randomUUID } from 'node:crypto'
import { decimal, positionCents, sum } from '../schemas/money.js'
import type { Transaction } from 'kysely'
import type { Database } from './database.js'
import { insertLot } from './assets.js'
import { DEMO_PORTFOLIOS, type DemoPortfolio } from './demo-data.js'
import { now, type StoreHandle } from './handle.js'

const DEMO_LOADED_KEY = 'demo_data_loaded_at'

/** `monthsAgo` months before `now`, as YYYY-MM-DD (the 15th, so every month exists). */
function monthsBefore (now: Date, monthsAgo: number): string {
  const date = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - monthsAgo, 15))
  return date.toISOString().slice(0, 10)
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
    for (const { lots, ...asset } of portfolio.assets) {
      const assetId = randomUUID()
      const quantity = sum(lots.map(lot => decimal(lot.quantity))).toNumber()
      await trx.insertInto('portfolio_assets').values({
        id: assetId,
        portfolio_id: portfolioId,
        ...asset,
        quantity,
        value_cents: positionCents(quantity, asset.price),
        created_at: timestamp,
        updated_at: timestamp
      }).execute()
      for (const lot of lots) {
        await insertLot(trx, assetId, timestamp, lot.quantity, lot.price, monthsBefore(seededAt, lot.monthsAgo))
      }
    }
  }
}

/** The demo portfolios of development: loaded once per store, restored by `/reset`. */
export class DemoRepository {
  constructor (private readonly handle: StoreHandle) {}

  /** Replaces every portfolio and asset with the demo data, in one transaction: every portfolio changed. */
  async reset (): Promise<void> {
    await this.handle.write(async (trx, announce) => {
      await trx.deleteFrom('asset_lots').execute()
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
