import { randomUUID } from 'node:crypto'
import { sql, type Transaction } from 'kysely'
import type { Database } from './database.js'
import { now, type StoreHandle } from './handle.js'
import { touchPortfolioStatement, type TouchPortfolio } from './portfolios.js'
import type { Page } from '../schemas/common.js'
import type { Asset, AssetType, CreateAssetInput, UpdateAssetInput } from '../schemas/asset.js'
import type { AssetTransaction } from '../schemas/transaction.js'
import { PreconditionFailedError } from '../errors.js'
import { versionTag, type Precondition, type Tagged } from '../http/entity-tag.js'
import { decimal } from '../schemas/money.js'
import { among, toAsset, type AssetRow } from './rows.js'
import {
  lastSeq, positionColumns, reconciledRows, toTransaction, transactionRow, valueCents, type TransactionRow
} from './trades.js'

export interface AssetFilter {
  portfolioId?: string
  type?: AssetType
  /** Only the assets of this user's portfolios. */
  userId?: string
}

/** An asset with its transactions, in the order they count. */
export interface Holding {
  asset: Asset
  transactions: AssetTransaction[]
}

type Trx = Transaction<Database>

/**
 * A PATCH's change of quantity (docs/api.md#transactions): a BUY or SELL of the difference, dated
 * today, at `price`, recorded after the asset's other transactions (the caller holds its row).
 */
async function recordQuantityChange (
  trx: Trx, asset: { id: string, quantity: number, price: number }, to: number, price: number, timestamp: string
): Promise<void> {
  const rows = await reconciledRows(trx, asset.id, asset.quantity, asset.price, timestamp)
  const bought = to > asset.quantity
  // Decimal arithmetic: the difference of two amounts of at most 8 decimals, exactly.
  const quantity = (bought ? decimal(to).minus(asset.quantity) : decimal(asset.quantity).minus(to)).toNumber()
  const trade = { type: bought ? 'BUY' : 'SELL', date: timestamp.slice(0, 10), quantity, price, fee: 0 } as const
  await trx.insertInto('asset_transactions')
    .values(transactionRow(asset.id, trade, lastSeq(rows) + 1, timestamp)).execute()
}

/**
 * Portfolio assets (docs/api.md#resources), each with its transactions (transactions.ts). Every write
 * touches the asset's portfolio, whose `updated_at` is the last change of its value. Inputs arrive
 * validated and normalised. Queries are built with Kysely (docs/style.md#query-style).
 */
export class AssetRepository {
  /** The portfolio's write every asset write makes: the portfolios' own statement (docs/style.md#query-style). */
  private readonly touchPortfolio: TouchPortfolio

  constructor (private readonly handle: StoreHandle) {
    this.touchPortfolio = touchPortfolioStatement(handle)
  }

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

  /** The asset with its tag. */
  async get (id: string): Promise<Tagged<Asset> | undefined> {
    const row = await this.handle.db.selectFrom('portfolio_assets').selectAll().where('id', '=', id).executeTakeFirst()
    return row === undefined ? undefined : tagged(row)
  }

  /**
   * Stores an asset and its first transaction, a BUY of its quantity at its price on `date` (today
   * when absent); `undefined` (and nothing stored) when its portfolio does not exist.
   */
  async create (input: CreateAssetInput): Promise<Asset | undefined> {
    return await this.handle.write(async (trx, announce) => {
      const timestamp = now()
      // Touching the portfolio first locks its row (PostgreSQL), so it cannot vanish before the insert.
      if (!await this.touchPortfolio(trx, input.portfolioId, timestamp)) return undefined
      const id = randomUUID()
      const { quantity, price } = input
      const buy = transactionRow(id, {
        type: 'BUY', date: input.date ?? timestamp.slice(0, 10), quantity, price, fee: 0
      }, 1, timestamp)
      const row = {
        id,
        portfolio_id: input.portfolioId,
        name: input.name,
        symbol: input.symbol,
        type: input.type,
        ...positionColumns([buy]),
        created_at: timestamp,
        updated_at: timestamp,
        version: 1
      }
      await trx.insertInto('portfolio_assets').values(row).execute()
      await trx.insertInto('asset_transactions').values(buy).execute()
      announce.portfolio(row.portfolio_id)
      return toAsset(row)
    })
  }

  /**
   * A PATCH (docs/api.md#transactions): `price` becomes the asset's price; a new `quantity` is a
   * BUY or SELL of the difference, dated today, at that price (else the asset's), and the asset
   * keeps its price. Answers the asset with its new tag.
   */
  async update (id: string, input: UpdateAssetInput, precondition?: Precondition): Promise<Tagged<Asset> | undefined> {
    return await this.handle.write(async (trx, announce) => {
      if (precondition !== undefined) await this.check(trx, id, precondition)
      const timestamp = now()
      // Touching the row first locks it (PostgreSQL) and returns the values before this change.
      const before = await trx.updateTable('portfolio_assets')
        .set({ updated_at: timestamp, version: sql<number>`version + 1` }).where('id', '=', id)
        .returning(['quantity', 'price']).executeTakeFirst()
      if (before === undefined) return undefined
      const quantity = input.quantity ?? before.quantity
      const price = input.price ?? before.price
      const row = await trx.updateTable('portfolio_assets')
        .set({ quantity, price, value_cents: valueCents(quantity, price) })
        .where('id', '=', id).returningAll().executeTakeFirstOrThrow()
      if (quantity !== before.quantity) await recordQuantityChange(trx, { id, ...before }, quantity, price, timestamp)
      await this.touchPortfolio(trx, row.portfolio_id, timestamp)
      announce.portfolio(row.portfolio_id)
      return tagged(row)
    })
  }

  /** Removes the asset and its transactions, when `precondition` (an If-Match) holds for its tag. */
  async delete (id: string, precondition?: Precondition): Promise<boolean> {
    return await this.handle.write(async (trx, announce) => {
      if (precondition !== undefined) await this.check(trx, id, precondition, true)
      await trx.deleteFrom('asset_transactions').where('asset_id', '=', id).execute()
      const row = await trx
        .deleteFrom('portfolio_assets')
        .where('id', '=', id)
        .returning('portfolio_id')
        .executeTakeFirst()
      if (row === undefined) return false
      await this.touchPortfolio(trx, row.portfolio_id, now())
      announce.portfolio(row.portfolio_id)
      return true
    })
  }

  /**
   * Inside a write: reads the asset, locking its row (PostgreSQL; on SQLite the store's one
   * connection runs one transaction at a time), and throws PreconditionFailedError unless `precondition` holds
   * for the tag of the asset as `GET /portfolio-assets/:id` answers it now. A missing asset
   * passes: the write then finds nothing (not found). The locks follow the order of the write they
   * precede (a delete takes the transactions first), so that they add no deadlock.
   */
  private async check (trx: Trx, id: string, precondition: Precondition, deleting = false): Promise<void> {
    const query = trx.selectFrom('portfolio_assets').selectAll().where('id', '=', id)
    const postgres = this.handle.engine === 'postgres'
    if (postgres && deleting) {
      await trx.selectFrom('asset_transactions').select('id').where('asset_id', '=', id).forUpdate().execute()
    }
    const row = await (postgres ? query.forUpdate() : query).executeTakeFirst()
    if (row !== undefined && !precondition(versionTag(id, row.version))) throw new PreconditionFailedError()
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

/** An asset row as answered, with its tag. */
function tagged (row: AssetRow): Tagged<Asset> {
  return { value: toAsset(row), etag: versionTag(row.id, row.version) }
}

/** Asset rows with their transactions (in the order they count) as holdings. */
function withTransactions (assets: readonly AssetRow[], rows: readonly TransactionRow[]): Holding[] {
  const transactionsOf = new Map<string, AssetTransaction[]>(assets.map(asset => [asset.id, []]))
  for (const row of rows) transactionsOf.get(row.asset_id)?.push(toTransaction(row))
  return assets.map(asset => ({ asset: toAsset(asset), transactions: transactionsOf.get(asset.id) ?? [] }))
}
