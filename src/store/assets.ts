import type { Transaction } from 'kysely'
import type { Database } from './database.js'
import type { StoreHandle } from './handle.js'
import type { Versioned } from '../http/entity-tag.js'
import type { Page } from '../schemas/common.js'
import type { Asset, AssetType } from '../schemas/asset.js'
import type { AssetTransaction } from '../schemas/transaction.js'
import { among, toAsset, toTransaction, type AssetRow, type TransactionRow } from './rows.js'
import { AssetRows } from './asset-rows.js'

export interface AssetFilter {
  portfolioId?: string
  type?: AssetType
  /** Only the assets of this user's portfolios. */
  userId?: string
}

/** An asset with its transactions, in the order they count. */
interface Holding {
  asset: Asset
  transactions: AssetTransaction[]
}

/** What the asset's row keeps of its position, and of the corporate events it follows. */

/**
 * Portfolio assets (docs/api.md#resources), each with its transactions (transactions.ts): their reads, and the rows
 * the domain's writes read and write (`AssetRows`, src/store/asset-rows.ts). Queries are built with Kysely
 * (docs/style.md#query-style).
 */
export class AssetRepository {
  constructor (private readonly handle: StoreHandle) {}

  async list (filter: AssetFilter, page: Page): Promise<Asset[]> {
    let query = this.handle.db.selectFrom('portfolio_assets').selectAll()
    if (filter.portfolioId !== undefined) query = query.where('portfolio_id', '=', filter.portfolioId)
    if (filter.type !== undefined) query = query.where('type', '=', filter.type)
    if (filter.userId !== undefined) {
      const owned = this.handle.db.selectFrom('portfolios').select('id').where('user_id', '=', filter.userId)
      query = query.where('portfolio_id', 'in', owned)
    }
    const rows = await query.orderBy('created_at').orderBy('id').limit(page.limit).offset(page.offset).execute()
    return rows.map(toAsset)
  }

  /** The `userId` of the portfolio of each asset of `ids` that exists, in one statement. */
  async ownersOf (ids: readonly string[]): Promise<Map<string, string>> {
    const rows = await this.handle.db.selectFrom('portfolio_assets')
      .innerJoin('portfolios', 'portfolios.id', 'portfolio_assets.portfolio_id')
      .select(['portfolio_assets.id as id', 'portfolios.user_id as userId'])
      .where(among(this.handle, 'portfolio_assets.id', ids)).execute()
    return new Map(rows.map(row => [row.id, row.userId]))
  }

  /** The asset, and the version its row has. */
  async versioned (id: string): Promise<Versioned<Asset> | undefined> {
    const row = await this.handle.db.selectFrom('portfolio_assets').selectAll().where('id', '=', id).executeTakeFirst()
    return row === undefined ? undefined : { value: toAsset(row), version: row.version }
  }

  /** The symbols of every asset, each once (the corporate events' refresh: src/domain/events-refresh.ts). */
  async symbols (): Promise<string[]> {
    const rows = await this.handle.db.selectFrom('portfolio_assets').select('symbol').distinct().orderBy('symbol')
      .execute()
    return rows.map(row => row.symbol)
  }

  /**
   * The assets of `symbol` whose position was not computed with the events `digest` names: another digest, or a
   * version written since by a write that knew nothing of them.
   */
  async staleForEvents (symbol: string, digest: string): Promise<string[]> {
    const rows = await this.handle.db.selectFrom('portfolio_assets').select('id').where('symbol', '=', symbol)
      .where(eb => eb.or([eb('events_digest', '<>', digest), eb('events_version', '<>', eb.ref('version'))]))
      .orderBy('id').execute()
    return rows.map(row => row.id)
  }

  /** The assets' rows of the write `trx`, whose rows are stamped `now`. */
  rowsIn (trx: Transaction<Database>, now: string): AssetRows {
    return new AssetRows(trx, this.handle.engine, now)
  }

  /** The assets of several portfolios in one statement, each portfolio's oldest first. */
  async ofPortfolios (portfolioIds: readonly string[]): Promise<Map<string, Asset[]>> {
    const byPortfolio = new Map<string, Asset[]>(portfolioIds.map(id => [id, []]))
    if (byPortfolio.size === 0) return byPortfolio
    for (const row of await this.assetRowsOf([...byPortfolio.keys()])) {
      byPortfolio.get(row.portfolio_id)?.push(toAsset(row))
    }
    return byPortfolio
  }

  /**
   * Every asset of the portfolio that holds `assetId`, each with its transactions (the dashboard's
   * portfolio share), read once; `undefined` when there is no such asset.
   */
  async portfolioHoldingsOf (assetId: string): Promise<{ holding: Holding, portfolio: Holding[] } | undefined> {
    const db = this.handle.db
    const portfolioOfAsset = db.selectFrom('portfolio_assets').select('portfolio_id').where('id', '=', assetId)
    const assets = await db
      .selectFrom('portfolio_assets')
      .selectAll()
      .where('portfolio_id', '=', () => portfolioOfAsset)
      .orderBy('created_at')
      .orderBy('id')
      .execute()
    if (assets.length === 0) return undefined
    const transactions = await this.transactionsQuery()
      .where('portfolio_assets.portfolio_id', '=', () => portfolioOfAsset).execute()
    const portfolio = withTransactions(assets, transactions)
    const holding = portfolio.find(entry => entry.asset.id === assetId)
    /* c8 ignore next -- the portfolio was found through this asset */
    if (holding === undefined) return undefined
    return { holding, portfolio }
  }

  /** Every asset of several portfolios with its transactions, in two statements whatever their number. */
  async holdingsOfPortfolios (portfolioIds: readonly string[]): Promise<Map<string, Holding[]>> {
    const byPortfolio = new Map<string, Holding[]>(portfolioIds.map(id => [id, []]))
    if (byPortfolio.size === 0) return byPortfolio
    const ids = [...byPortfolio.keys()]
    const assets = await this.assetRowsOf(ids)
    const transactions = await this.transactionsQuery().where(among(this.handle, 'portfolio_assets.portfolio_id', ids))
      .execute()
    for (const holding of withTransactions(assets, transactions)) {
      byPortfolio.get(holding.asset.portfolioId)?.push(holding)
    }
    return byPortfolio
  }

  /** The assets of several portfolios, oldest first. */
  private async assetRowsOf (portfolioIds: readonly string[]): Promise<AssetRow[]> {
    return await this.handle.db.selectFrom('portfolio_assets').selectAll()
      .where(among(this.handle, 'portfolio_id', portfolioIds)).orderBy('created_at').orderBy('id').execute()
  }

  /** Transactions in the order they count, to be narrowed to some portfolios. */
  private transactionsQuery () {
    return this.handle.db.selectFrom('asset_transactions')
      .innerJoin('portfolio_assets', 'portfolio_assets.id', 'asset_transactions.asset_id')
      .selectAll('asset_transactions')
      .orderBy('asset_transactions.date').orderBy('asset_transactions.seq')
  }
}

/** Asset rows with their transactions (in the order they count) as holdings. */
function withTransactions (assets: readonly AssetRow[], rows: readonly TransactionRow[]): Holding[] {
  const transactionsOf = new Map<string, AssetTransaction[]>(assets.map(asset => [asset.id, []]))
  for (const row of rows) transactionsOf.get(row.asset_id)?.push(toTransaction(row))
  return assets.map(asset => ({ asset: toAsset(asset), transactions: transactionsOf.get(asset.id) ?? [] }))
}
