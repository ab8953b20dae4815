import { randomUUID } from 'node:crypto'
import { sql, type RawBuilder, type SqlBool, type Transaction, type Updateable } from 'kysely'
import type { Database, PortfolioAssetsTable } from './database.js'
import { now, type StoreHandle } from './handle.js'
import { touchPortfolioStatement, type TouchPortfolio } from './portfolios.js'
import type { Page } from '../schemas/common.js'
import type { Asset, AssetType, CreateAssetInput, Lot, UpdateAssetInput } from '../schemas/asset.js'
import { PositionTooLargeError, PreconditionFailedError } from '../errors.js'
import { versionTag, type Precondition, type Tagged } from '../http/entity-tag.js'
import { decimal, positionValue, toCents } from '../schemas/money.js'
import { toAsset, type AssetRow } from './rows.js'

export interface AssetFilter {
  portfolioId?: string
  type?: AssetType
}

/** An asset with its buy lots, oldest first. */
export interface Holding {
  asset: Asset
  lots: Lot[]
}

/**
 * The largest value of one asset: 10 trillion BRL. Sums of such values stay exact integers of
 * cents in the database and in a JavaScript number.
 */
const MAX_POSITION_VALUE = 1e13

/** An asset's value in integer cents; over the maximum the write fails (a domain error) and nothing is written. */
function valueCents (quantity: number, price: number): number {
  const value = positionValue(quantity, price)
  if (value.gt(MAX_POSITION_VALUE)) {
    throw new PositionTooLargeError(String(MAX_POSITION_VALUE))
  }
  return toCents(value)
}

type Trx = Transaction<Database>

/** Records a buy after the asset's existing ones (callers hold the asset's row, so `seq` is safe to compute). */
export async function insertLot (
  trx: Transaction<Database>,
  assetId: string,
  timestamp: string,
  quantity: number,
  price: number,
  date = timestamp.slice(0, 10)
): Promise<void> {
  const last = await trx
    .selectFrom('asset_lots')
    .select(eb => eb.fn.max('seq').as('seq'))
    .where('asset_id', '=', assetId)
    .executeTakeFirst()
  const seq = Number(last?.seq ?? 0) + 1
  await trx
    .insertInto('asset_lots')
    .values({ id: randomUUID(), asset_id: assetId, date, seq, quantity, price, created_at: timestamp })
    .execute()
}

/** Removes `quantity` from the asset's lots, oldest first; emptied lots are deleted. */
async function takeFromOldestLots (trx: Transaction<Database>, assetId: string, quantity: number): Promise<void> {
  const lots = await trx.selectFrom('asset_lots').select(['id', 'quantity']).where('asset_id', '=', assetId)
    .orderBy('date').orderBy('seq').execute()
  // Decimal arithmetic: what is left of a lot has at most 8 decimals, and an emptied lot is exactly 0.
  let remaining = decimal(quantity)
  for (const lot of lots) {
    if (remaining.lte(0)) break
    const left = decimal(lot.quantity).minus(remaining)
    remaining = left.lt(0) ? left.neg() : decimal(0)
    if (left.lte(0)) await trx.deleteFrom('asset_lots').where('id', '=', lot.id).execute()
    else await trx.updateTable('asset_lots').set({ quantity: left.toNumber() }).where('id', '=', lot.id).execute()
  }
}

/**
 * Portfolio assets (docs/api.md#resources) and their buy lots. Every write touches the asset's portfolio,
 * whose `updated_at` is the last change of its value. Inputs arrive validated and normalised. Queries are
 * built with Kysely (docs/style.md#query-style).
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
    const rows = await query.orderBy('created_at').orderBy('id').limit(page.limit).offset(page.offset).execute()
    return rows.map(toAsset)
  }

  /** The asset with its tag. */
  async get (id: string): Promise<Tagged<Asset> | undefined> {
    const row = await this.handle.db.selectFrom('portfolio_assets').selectAll().where('id', '=', id).executeTakeFirst()
    return row === undefined ? undefined : tagged(row)
  }

  /** Stores an asset and its first lot; `undefined` (and nothing stored) when its portfolio does not exist. */
  async create (input: CreateAssetInput): Promise<Asset | undefined> {
    return await this.handle.write(async (trx, announce) => {
      const timestamp = now()
      // Touching the portfolio first locks its row (PostgreSQL), so it cannot vanish before the insert.
      if (!await this.touchPortfolio(trx, input.portfolioId, timestamp)) return undefined
      const row = {
        id: randomUUID(),
        portfolio_id: input.portfolioId,
        name: input.name,
        symbol: input.symbol,
        type: input.type,
        quantity: input.quantity,
        price: input.price,
        value_cents: valueCents(input.quantity, input.price),
        created_at: timestamp,
        updated_at: timestamp,
        version: 1
      }
      await trx.insertInto('portfolio_assets').values(row).execute()
      await insertLot(trx, row.id, timestamp, row.quantity, row.price)
      announce.portfolio(row.portfolio_id)
      return toAsset(row)
    })
  }

  /**
   * Changes quantity and/or price. A higher quantity records a buy of the difference at the
   * given price (or the asset's price); a lower one takes the difference from the oldest lots
   * first (FIFO), so the lots always add up to the quantity. Answers the asset with its new tag.
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
      const changes: Updateable<PortfolioAssetsTable> = {}
      if (input.quantity !== undefined) changes.quantity = input.quantity
      if (input.price !== undefined) changes.price = input.price
      if (Object.keys(changes).length > 0) {
        changes.value_cents = valueCents(input.quantity ?? before.quantity, input.price ?? before.price)
      }
      const row =
        Object.keys(changes).length === 0
          ? await trx.selectFrom('portfolio_assets').selectAll().where('id', '=', id).executeTakeFirstOrThrow()
          : await trx
            .updateTable('portfolio_assets')
            .set(changes)
            .where('id', '=', id)
            .returningAll()
            .executeTakeFirstOrThrow()
      if (input.quantity !== undefined && input.quantity > before.quantity) {
        await insertLot(trx, id, timestamp, decimal(input.quantity).minus(before.quantity).toNumber(), row.price)
      } else if (input.quantity !== undefined && input.quantity < before.quantity) {
        await takeFromOldestLots(trx, id, decimal(before.quantity).minus(input.quantity).toNumber())
      }
      await this.touchPortfolio(trx, row.portfolio_id, timestamp)
      announce.portfolio(row.portfolio_id)
      return tagged(row)
    })
  }

  /** Removes the asset and its lots, when `precondition` (an If-Match) holds for its tag. */
  async delete (id: string, precondition?: Precondition): Promise<boolean> {
    return await this.handle.write(async (trx, announce) => {
      if (precondition !== undefined) await this.check(trx, id, precondition, true)
      await trx.deleteFrom('asset_lots').where('asset_id', '=', id).execute()
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
   * precede (a delete takes the lots first), so that they add no deadlock.
   */
  private async check (trx: Trx, id: string, precondition: Precondition, deleting = false): Promise<void> {
    const query = trx.selectFrom('portfolio_assets').selectAll().where('id', '=', id)
    const postgres = this.handle.engine === 'postgres'
    if (postgres && deleting) {
      await trx.selectFrom('asset_lots').select('id').where('asset_id', '=', id).forUpdate().execute()
    }
    const row = await (postgres ? query.forUpdate() : query).executeTakeFirst()
    if (row !== undefined && !precondition(versionTag(id, row.version))) throw new PreconditionFailedError()
  }

  /** The asset's buy lots, oldest first. */
  async lots (assetId: string): Promise<Lot[]> {
    return await this.handle.db.selectFrom('asset_lots').select(['id', 'date', 'quantity', 'price'])
      .where('asset_id', '=', assetId).orderBy('date').orderBy('seq').execute()
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
   * Every asset of the portfolio that holds `assetId`, each with its lots (the dashboard's
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
    const lots = await this.lotsQuery().where('portfolio_assets.portfolio_id', '=', () => portfolioOfAsset).execute()
    const portfolio = withLots(assets, lots)
    const holding = portfolio.find(entry => entry.asset.id === assetId)
    /* c8 ignore next -- the portfolio was found through this asset */
    if (holding === undefined) return undefined
    return { holding, portfolio }
  }

  /** Every asset of several portfolios with its lots, in two statements whatever their number. */
  async holdingsOfPortfolios (portfolioIds: readonly string[]): Promise<Map<string, Holding[]>> {
    const byPortfolio = new Map<string, Holding[]>(portfolioIds.map(id => [id, []]))
    if (byPortfolio.size === 0) return byPortfolio
    const ids = [...byPortfolio.keys()]
    const assets = await this.assetRowsOf(ids)
    const lots = await this.lotsQuery().where('portfolio_assets.portfolio_id', 'in', ids).execute()
    for (const holding of withLots(assets, lots)) byPortfolio.get(holding.asset.portfolioId)?.push(holding)
    return byPortfolio
  }

  /** The assets of several portfolios, oldest first. */
  private async assetRowsOf (portfolioIds: readonly string[]): Promise<AssetRow[]> {
    return await this.handle.db.selectFrom('portfolio_assets').selectAll().where(this.portfolioIn(portfolioIds))
      .orderBy('created_at').orderBy('id').execute()
  }

  /**
   * `portfolio_id` among `ids`, bound as one parameter whatever their number (`json_each` on SQLite, `any` on
   * PostgreSQL): one statement text, so one prepared statement, for any number of portfolios.
   */
  private portfolioIn (ids: readonly string[]): RawBuilder<SqlBool> {
    const list = this.handle.listParameter(ids)
    return this.handle.engine === 'postgres'
      ? sql<SqlBool>`portfolio_id = any(${list}::text[])`
      : sql<SqlBool>`portfolio_id in (select value from json_each(${list}))`
  }

  /** Lots with their asset's id, oldest first, to be narrowed to some portfolios. */
  private lotsQuery () {
    return this.handle.db.selectFrom('asset_lots')
      .innerJoin('portfolio_assets', 'portfolio_assets.id', 'asset_lots.asset_id')
      .select(['asset_lots.id', 'asset_lots.asset_id', 'asset_lots.date', 'asset_lots.quantity', 'asset_lots.price'])
      .orderBy('asset_lots.date').orderBy('asset_lots.seq')
  }
}

/** An asset row as answered, with its tag. */
function tagged (row: AssetRow): Tagged<Asset> {
  return { value: toAsset(row), etag: versionTag(row.id, row.version) }
}

/** Asset rows with their lots (rows with `asset_id`, oldest first) as holdings. */
function withLots (assets: readonly AssetRow[], lots: ReadonlyArray<Lot & { asset_id: string }>): Holding[] {
  const lotsOf = new Map<string, Lot[]>(assets.map(asset => [asset.id, []]))
  for (const { asset_id: assetId, ...lot } of lots) lotsOf.get(assetId)?.push(lot)
  return assets.map(asset => ({ asset: toAsset(asset), lots: lotsOf.get(asset.id) ?? [] }))
}
