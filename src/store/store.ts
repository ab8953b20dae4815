import { randomUUID } from 'node:crypto'
import { sql, type Kysely, type Selectable, type Transaction } from 'kysely'
import type { Database, ExcludedTransactionsTable, PortfolioAssetsTable, PortfoliosTable } from './database.js'
import { connect, migrate, type ConnectOptions, type StoreEngine } from './connect.js'
import { DEMO_PORTFOLIOS, type DemoPortfolio } from './demo-data.js'
import type { Page } from '../schemas.js'
import type {
  CreatePortfolioBody,
  Portfolio,
  PortfolioDetail,
  PortfolioValue,
  UpdatePortfolioBody
} from '../modules/portfolios/schemas.js'
import type { Asset, AssetType, CreateAssetBody, UpdateAssetBody } from '../modules/portfolio-assets/schemas.js'
import type {
  CreateExclusionBody,
  ExcludedTransaction,
  ExcludedTransactionRecord
} from '../modules/openfinance-excluded-transactions/schemas.js'
import type { Stats } from '../modules/system/schemas.js'
import type { Lot } from '../dashboard/dashboard.js'

type Executor = Kysely<Database> | Transaction<Database>

const DEMO_LOADED_KEY = 'demo_data_loaded_at'

/** How long one statistics aggregate serves an instance that has not written since. */
export const STATS_TTL_MS = 2_000

/** A portfolio's total, computed by the database from its assets (CONTRACT §6). */
const portfolioTotal = sql<number>`coalesce((select sum(pa.quantity * pa.price) from portfolio_assets pa where pa.portfolio_id = portfolios.id), 0)`

function now (): string {
  return new Date().toISOString()
}

type PortfolioRow = Selectable<PortfoliosTable> & { total_value: number }

function toPortfolio (row: PortfolioRow): Portfolio {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    userId: row.user_id,
    totalValue: Number(row.total_value),
    createdAt: row.created_at,
    updatedAt: row.updated_at
  }
}

function toAsset (row: Selectable<PortfolioAssetsTable>): Asset {
  return {
    id: row.id,
    name: row.name,
    symbol: row.symbol,
    type: row.type,
    quantity: row.quantity,
    price: row.price,
    totalValue: row.quantity * row.price,
    portfolioId: row.portfolio_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at
  }
}

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

export interface WebhookEvent {
  /** Idempotency key: the sender's eventId, or a digest of the payload. */
  eventKey: string
  event: string
  itemId: string | null
  status: string | null
  /** The payload as received, serialised. */
  payload: string
}

export interface AssetFilter {
  portfolioId?: string
  type?: AssetType
}

export interface StoreOptions extends ConnectOptions {
  /** Load the demo portfolios on the first start of an empty store. */
  demoData?: boolean
}

/**
 * The service's data, on SQLite or PostgreSQL behind one async interface. Aggregates
 * (totals, statistics) are computed by the database; multi-row writes are transactions.
 */
export class Store {
  /** Bumped by every write of this instance that statistics depend on. */
  private generation = 0
  private statsCache: { generation: number, at: number, value: Promise<Stats> } | undefined

  private constructor (readonly db: Kysely<Database>, readonly engine: StoreEngine) {}

  /** Connects, migrates, and (when asked) loads the demo data once. */
  static async open (url: string, options: StoreOptions = {}): Promise<Store> {
    const { db, engine } = await connect(url, options)
    try {
      await migrate(db, engine)
      const store = new Store(db, engine)
      if (options.demoData === true) await store.loadDemoDataOnce()
      return store
    } catch (error) {
      await db.destroy()
      throw error
    }
  }

  async close (): Promise<void> {
    await this.db.destroy()
  }

  /** A cheap round trip, for readiness checks. */
  async ping (): Promise<void> {
    await sql`select 1`.execute(this.db)
  }

  // Portfolios

  async listPortfolios (filter: { userId?: string }, page: Page): Promise<Portfolio[]> {
    let query = this.db.selectFrom('portfolios').selectAll().select(portfolioTotal.as('total_value'))
    if (filter.userId !== undefined) query = query.where('user_id', '=', filter.userId)
    const rows = await query.orderBy('created_at').orderBy('id').limit(page.limit).offset(page.offset).execute()
    return rows.map(toPortfolio)
  }

  async getPortfolio (id: string): Promise<Portfolio | undefined> {
    return await this.portfolioById(this.db, id)
  }

  /**
   * The portfolio (its total summed by the database) and its assets, read from one snapshot so
   * the total always matches the assets listed. Two indexed lookups cost less here than one
   * join with a window sum, which SQLite sorts in a temporary b-tree.
   */
  async getPortfolioDetail (id: string): Promise<PortfolioDetail | undefined> {
    return await this.db.transaction().setIsolationLevel('repeatable read').execute(async trx => {
      const portfolio = await this.portfolioById(trx, id)
      if (portfolio === undefined) return undefined
      const assets = await trx.selectFrom('portfolio_assets')
        .select(['id', 'name', 'symbol', 'quantity', 'price'])
        .where('portfolio_id', '=', id)
        .orderBy('created_at').orderBy('id')
        .execute()
      const { name, description, userId, totalValue } = portfolio
      return { id, name, description, userId, totalValue, assets }
    })
  }

  async getPortfolioValue (id: string): Promise<PortfolioValue | undefined> {
    const row = await this.db.selectFrom('portfolios')
      .select(['id', 'updated_at', portfolioTotal.as('total_value')])
      .where('id', '=', id)
      .executeTakeFirst()
    if (row === undefined) return undefined
    // Asset writes touch their portfolio's updated_at, so it is the value's last change.
    return { portfolioId: row.id, totalValue: Number(row.total_value), currency: 'BRL', lastUpdate: row.updated_at }
  }

  async createPortfolio (input: CreatePortfolioBody): Promise<Portfolio> {
    const timestamp = now()
    const row = {
      id: randomUUID(),
      name: input.name.trim(),
      description: input.description?.trim() ?? null,
      user_id: input.userId.trim(),
      created_at: timestamp,
      updated_at: timestamp
    }
    await this.db.insertInto('portfolios').values(row).execute()
    this.generation++
    return toPortfolio({ ...row, total_value: 0 })
  }

  async updatePortfolio (id: string, patch: UpdatePortfolioBody): Promise<Portfolio | undefined> {
    return await this.write(async trx => {
      const changes: Partial<PortfoliosTable> = { updated_at: now() }
      if (patch.name !== undefined) changes.name = patch.name.trim()
      if (patch.description !== undefined) changes.description = patch.description?.trim() ?? null
      const result = await trx.updateTable('portfolios').set(changes).where('id', '=', id).executeTakeFirst()
      if (result.numUpdatedRows === 0n) return undefined
      return await this.portfolioById(trx, id)
    })
  }

  /** Deletes the portfolio and its assets in one transaction. */
  async deletePortfolio (id: string): Promise<boolean> {
    return await this.write(async trx => {
      await trx.deleteFrom('asset_lots')
        .where('asset_id', 'in', eb => eb.selectFrom('portfolio_assets').select('id').where('portfolio_id', '=', id))
        .execute()
      await trx.deleteFrom('portfolio_assets').where('portfolio_id', '=', id).execute()
      const result = await trx.deleteFrom('portfolios').where('id', '=', id).executeTakeFirst()
      return result.numDeletedRows > 0n
    })
  }

  // Assets

  async listAssets (filter: AssetFilter, page: Page): Promise<Asset[]> {
    let query = this.db.selectFrom('portfolio_assets').selectAll()
    if (filter.portfolioId !== undefined) query = query.where('portfolio_id', '=', filter.portfolioId)
    if (filter.type !== undefined) query = query.where('type', '=', filter.type)
    const rows = await query.orderBy('created_at').orderBy('id').limit(page.limit).offset(page.offset).execute()
    return rows.map(toAsset)
  }

  async getAsset (id: string): Promise<Asset | undefined> {
    const row = await this.db.selectFrom('portfolio_assets').selectAll().where('id', '=', id).executeTakeFirst()
    return row === undefined ? undefined : toAsset(row)
  }

  /** Stores an asset; `undefined` (and nothing stored) when its portfolio does not exist. */
  async createAsset (input: CreateAssetBody): Promise<Asset | undefined> {
    return await this.write(async trx => {
      const timestamp = now()
      // Touching the portfolio first locks its row (PostgreSQL), so it cannot vanish before the insert.
      if (!await this.touchPortfolio(trx, input.portfolioId, timestamp)) return undefined
      const row = {
        id: randomUUID(),
        portfolio_id: input.portfolioId,
        name: input.name.trim(),
        symbol: input.symbol.trim().toUpperCase(),
        type: input.type,
        quantity: input.quantity,
        price: input.price,
        created_at: timestamp,
        updated_at: timestamp
      }
      await trx.insertInto('portfolio_assets').values(row).execute()
      await insertLot(trx, row.id, timestamp, row.quantity, row.price)
      return toAsset(row)
    })
  }

  /**
   * Changes quantity and/or price. A higher quantity records a buy of the difference at the
   * given price (or the asset's price); a lower one takes the difference from the oldest lots
   * first (FIFO), so the lots always add up to the quantity.
   */
  async updateAsset (id: string, patch: UpdateAssetBody): Promise<Asset | undefined> {
    return await this.write(async trx => {
      const timestamp = now()
      // Touching the row first locks it (PostgreSQL) and returns the values before this change.
      const before = await trx.updateTable('portfolio_assets').set({ updated_at: timestamp }).where('id', '=', id)
        .returning(['quantity', 'price']).executeTakeFirst()
      if (before === undefined) return undefined
      const changes: Partial<PortfolioAssetsTable> = {}
      if (patch.quantity !== undefined) changes.quantity = patch.quantity
      if (patch.price !== undefined) changes.price = patch.price
      const row = Object.keys(changes).length === 0
        ? await trx.selectFrom('portfolio_assets').selectAll().where('id', '=', id).executeTakeFirstOrThrow()
        : await trx.updateTable('portfolio_assets').set(changes).where('id', '=', id).returningAll().executeTakeFirstOrThrow()
      if (patch.quantity !== undefined && patch.quantity > before.quantity) {
        await insertLot(trx, id, timestamp, patch.quantity - before.quantity, row.price)
      } else if (patch.quantity !== undefined && patch.quantity < before.quantity) {
        await takeFromOldestLots(trx, id, before.quantity - patch.quantity)
      }
      await this.touchPortfolio(trx, row.portfolio_id, timestamp)
      return toAsset(row)
    })
  }

  /** The asset's buy lots, oldest first. */
  async listLots (assetId: string): Promise<Lot[]> {
    return await this.db.selectFrom('asset_lots').select(['id', 'date', 'quantity', 'price'])
      .where('asset_id', '=', assetId).orderBy('date').orderBy('seq').execute()
  }

  /** Every asset of a portfolio with its lots, for the dashboard's portfolio share. */
  async portfolioHoldings (portfolioId: string): Promise<Array<{ asset: Asset, lots: Lot[] }>> {
    const assets = await this.db.selectFrom('portfolio_assets').selectAll().where('portfolio_id', '=', portfolioId)
      .orderBy('created_at').orderBy('id').execute()
    const lots = await this.db.selectFrom('asset_lots')
      .innerJoin('portfolio_assets', 'portfolio_assets.id', 'asset_lots.asset_id')
      .select(['asset_lots.id', 'asset_lots.asset_id', 'asset_lots.date', 'asset_lots.quantity', 'asset_lots.price'])
      .where('portfolio_assets.portfolio_id', '=', portfolioId)
      .orderBy('asset_lots.date').orderBy('asset_lots.seq')
      .execute()
    return assets.map(asset => ({
      asset: toAsset(asset),
      lots: lots.filter(lot => lot.asset_id === asset.id).map(({ id, date, quantity, price }) => ({ id, date, quantity, price }))
    }))
  }

  async deleteAsset (id: string): Promise<boolean> {
    return await this.write(async trx => {
      await trx.deleteFrom('asset_lots').where('asset_id', '=', id).execute()
      const row = await trx.deleteFrom('portfolio_assets').where('id', '=', id).returning('portfolio_id').executeTakeFirst()
      if (row === undefined) return false
      await this.touchPortfolio(trx, row.portfolio_id, now())
      return true
    })
  }

  // Statistics and demo data

  /**
   * System statistics, aggregated by the database. The aggregate scans every asset, so its
   * result is shared by concurrent callers and reused for STATS_TTL_MS unless this instance
   * wrote since; writes of other instances show after at most that long.
   */
  async stats (): Promise<Stats> {
    const cached = this.statsCache
    if (cached !== undefined && cached.generation === this.generation && Date.now() - cached.at < STATS_TTL_MS) return await cached.value
    const entry = { generation: this.generation, at: Date.now(), value: this.aggregateStats() }
    this.statsCache = entry
    entry.value.catch(() => { if (this.statsCache === entry) this.statsCache = undefined })
    return await entry.value
  }

  private async aggregateStats (): Promise<Stats> {
    const row = await sql<{ total_portfolios: number, total_assets: number, total_value: number, active_users: number, last_update: string | null }>`
      select
        cast((select count(*) from portfolios) as integer) as total_portfolios,
        cast((select count(*) from portfolio_assets) as integer) as total_assets,
        coalesce((select sum(quantity * price) from portfolio_assets), 0) as total_value,
        cast((select count(distinct user_id) from portfolios) as integer) as active_users,
        (select max(updated_at) from portfolios) as last_update
    `.execute(this.db)
    const stats = row.rows[0]
    /* c8 ignore next -- a select without FROM always yields one row */
    if (stats === undefined) throw new Error('statistics query returned no row')
    return {
      totalPortfolios: Number(stats.total_portfolios),
      totalAssets: Number(stats.total_assets),
      totalValue: Number(stats.total_value),
      activeUsers: Number(stats.active_users),
      lastUpdate: stats.last_update ?? now()
    }
  }

  /** Replaces every portfolio and asset with the demo data, in one transaction. */
  async resetToDemoData (): Promise<void> {
    await this.write(async trx => {
      await trx.deleteFrom('asset_lots').execute()
      await trx.deleteFrom('portfolio_assets').execute()
      await trx.deleteFrom('portfolios').execute()
      await insertPortfolios(trx, DEMO_PORTFOLIOS)
      await trx.insertInto('bff_store_meta').values({ key: DEMO_LOADED_KEY, value: now() })
        .onConflict(oc => oc.column('key').doUpdateSet({ value: now() }))
        .execute()
    })
  }

  /** Loads the demo data the first time a store starts; several instances starting at once load it once. */
  async loadDemoDataOnce (): Promise<boolean> {
    return await this.write(async trx => {
      const claimed = await trx.insertInto('bff_store_meta').values({ key: DEMO_LOADED_KEY, value: now() })
        .onConflict(oc => oc.column('key').doNothing())
        .returning('key')
        .executeTakeFirst()
      if (claimed === undefined) return false
      await insertPortfolios(trx, DEMO_PORTFOLIOS)
      return true
    })
  }

  // Excluded transactions

  /** Stores an exclusion once per (client_id, transaction_id); a repeat returns the stored record. */
  async createExclusion (input: CreateExclusionBody): Promise<{ record: ExcludedTransactionRecord, created: boolean }> {
    const timestamp = now()
    const row = {
      id: randomUUID(),
      client_id: input.client_id.trim(),
      transaction_id: input.transaction_id.trim(),
      reason: input.reason.trim(),
      excluded_at: input.excluded_at === undefined ? timestamp : new Date(input.excluded_at).toISOString(),
      created_at: timestamp
    }
    const inserted = await this.db.insertInto('excluded_transactions').values(row)
      .onConflict(oc => oc.columns(['client_id', 'transaction_id']).doNothing())
      .returningAll()
      .executeTakeFirst()
    if (inserted !== undefined) return { record: toExclusion(inserted), created: true }
    const existing = await this.db.selectFrom('excluded_transactions').selectAll()
      .where('client_id', '=', row.client_id)
      .where('transaction_id', '=', row.transaction_id)
      .executeTakeFirstOrThrow()
    return { record: toExclusion(existing), created: false }
  }

  async listExclusions (clientId: string, page: Page): Promise<ExcludedTransaction[]> {
    const rows = await this.db.selectFrom('excluded_transactions')
      .select(['id', 'client_id', 'transaction_id', 'reason', 'excluded_at'])
      .where('client_id', '=', clientId)
      .orderBy('created_at').orderBy('id')
      .limit(page.limit).offset(page.offset)
      .execute()
    return rows
  }

  async getExclusion (id: string): Promise<ExcludedTransactionRecord | undefined> {
    const row = await this.db.selectFrom('excluded_transactions').selectAll().where('id', '=', id).executeTakeFirst()
    return row === undefined ? undefined : toExclusion(row)
  }

  async deleteExclusion (id: string): Promise<boolean> {
    const result = await this.db.deleteFrom('excluded_transactions').where('id', '=', id).executeTakeFirst()
    return result.numDeletedRows > 0n
  }

  // Aggregator webhooks

  /**
   * Stores a webhook event once per `eventKey` and, for item events, keeps the item's latest
   * event and status (a status-less event keeps the status known before). A redelivery stores
   * nothing and answers `stored: false`.
   */
  async recordWebhookEvent (event: WebhookEvent): Promise<{ stored: boolean }> {
    return await this.db.transaction().execute(async trx => {
      const receivedAt = now()
      const inserted = await trx.insertInto('aggregator_webhook_events').values({
        id: randomUUID(),
        event_key: event.eventKey,
        event: event.event,
        item_id: event.itemId,
        payload: event.payload,
        received_at: receivedAt
      }).onConflict(oc => oc.column('event_key').doNothing()).returning('id').executeTakeFirst()
      if (inserted === undefined) return { stored: false }
      if (event.itemId !== null) {
        await trx.insertInto('aggregator_items')
          .values({ item_id: event.itemId, status: event.status, last_event: event.event, updated_at: receivedAt })
          .onConflict(oc => oc.column('item_id').doUpdateSet(eb => ({
            status: event.status === null ? eb.ref('aggregator_items.status') : eb.val(event.status),
            last_event: eb.ref('excluded.last_event'),
            updated_at: eb.ref('excluded.updated_at')
          })))
          .execute()
      }
      return { stored: true }
    })
  }

  async getAggregatorItem (itemId: string): Promise<{ itemId: string, status: string | null, lastEvent: string, updatedAt: string } | undefined> {
    const row = await this.db.selectFrom('aggregator_items').selectAll().where('item_id', '=', itemId).executeTakeFirst()
    return row === undefined ? undefined : { itemId: row.item_id, status: row.status, lastEvent: row.last_event, updatedAt: row.updated_at }
  }

  async countWebhookEvents (): Promise<number> {
    const row = await this.db.selectFrom('aggregator_webhook_events').select(eb => eb.cast<number>(eb.fn.countAll(), 'integer').as('n')).executeTakeFirstOrThrow()
    return Number(row.n)
  }

  /** A write transaction; statistics of this instance are recomputed after it commits. */
  private async write<T> (work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
    const result = await this.db.transaction().execute(work)
    this.generation++
    return result
  }

  private async portfolioById (executor: Executor, id: string): Promise<Portfolio | undefined> {
    const row = await executor.selectFrom('portfolios').selectAll().select(portfolioTotal.as('total_value'))
      .where('id', '=', id)
      .executeTakeFirst()
    return row === undefined ? undefined : toPortfolio(row)
  }

  private async touchPortfolio (executor: Executor, id: string, timestamp: string): Promise<boolean> {
    const result = await executor.updateTable('portfolios').set({ updated_at: timestamp }).where('id', '=', id).executeTakeFirst()
    return result.numUpdatedRows > 0n
  }
}

/** Records a buy after the asset's existing ones (callers hold the asset's row, so `seq` is safe to compute). */
async function insertLot (trx: Transaction<Database>, assetId: string, timestamp: string, quantity: number, price: number, date = timestamp.slice(0, 10)): Promise<void> {
  const last = await trx.selectFrom('asset_lots').select(eb => eb.fn.max('seq').as('seq')).where('asset_id', '=', assetId).executeTakeFirst()
  const seq = Number(last?.seq ?? 0) + 1
  await trx.insertInto('asset_lots').values({ id: randomUUID(), asset_id: assetId, date, seq, quantity, price, created_at: timestamp }).execute()
}

/** Removes `quantity` from the asset's lots, oldest first; emptied lots are deleted. */
async function takeFromOldestLots (trx: Transaction<Database>, assetId: string, quantity: number): Promise<void> {
  const lots = await trx.selectFrom('asset_lots').select(['id', 'quantity']).where('asset_id', '=', assetId)
    .orderBy('date').orderBy('seq').execute()
  let remaining = quantity
  for (const lot of lots) {
    if (remaining <= 0) break
    const taken = Math.min(lot.quantity, remaining)
    remaining -= taken
    // What is left of a lot within rounding of zero is nothing.
    if (lot.quantity - taken <= lot.quantity * 1e-12) await trx.deleteFrom('asset_lots').where('id', '=', lot.id).execute()
    else await trx.updateTable('asset_lots').set({ quantity: lot.quantity - taken }).where('id', '=', lot.id).execute()
  }
}

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
      const quantity = lots.reduce((sum, lot) => sum + lot.quantity, 0)
      await trx.insertInto('portfolio_assets').values({ id: assetId, portfolio_id: portfolioId, ...asset, quantity, created_at: timestamp, updated_at: timestamp }).execute()
      for (const lot of lots) await insertLot(trx, assetId, timestamp, lot.quantity, lot.price, monthsBefore(seededAt, lot.monthsAgo))
    }
  }
}
