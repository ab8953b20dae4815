import { randomUUID } from 'node:crypto'
import { sql, type Selectable, type Transaction } from 'kysely'
import type { StoreEngine } from './connect.js'
import type { Database, PortfoliosTable } from './database.js'
import { now, type Executor, type StoreHandle } from './handle.js'
import type { Page } from '../schemas/common.js'
import { fromCents } from '../domain/money.js'
import type { Asset } from '../schemas/asset.js'
import { toAsset, type AssetRow } from './rows.js'
import { entityTag, type Precondition } from '../http/entity-tag.js'
import { PreconditionFailedError } from '../errors.js'
import type {
  CreatePortfolioInput,
  Portfolio,
  PortfolioDetail,
  PortfolioValue,
  UpdatePortfolioInput
} from '../schemas/portfolio.js'

/** A portfolio's total, the sum of its assets' values computed by the database (docs/api.md#money). */
const TOTAL_SQL =
  'coalesce((select sum(pa.value_cents) from portfolio_assets pa where pa.portfolio_id = portfolios.id), 0)'
const portfolioTotal = sql.raw<number | string>(TOTAL_SQL)

type PortfolioRow = Selectable<PortfoliosTable> & { total_value: number | string }

interface DetailRow<Item> extends PortfolioRow {
  /** JSON text on SQLite, parsed by the driver on PostgreSQL. */
  assets: string | Item[]
}

/** The asset fields of REST's portfolio detail (`GET /portfolios/:id`). */
export const DETAIL_ASSET_COLUMNS = ['id', 'name', 'symbol', 'quantity', 'price'] as const
/** Every column of an asset row, for answers that hold whole assets (GraphQL). */
const ASSET_COLUMNS = [
  'id',
  'portfolio_id',
  'name',
  'symbol',
  'type',
  'quantity',
  'price',
  'value_cents',
  'created_at',
  'updated_at'
] as const

/**
 * A portfolio, its total and its assets in one statement (one round trip, one snapshot on
 * both engines, so the total always matches the assets listed), the assets aggregated as JSON
 * objects of `columns`. Correlated subqueries read the assets in the order of their index
 * (portfolio_id, created_at, id): SQLite sorts nothing, where an `order by` inside the aggregate
 * made it build a temporary B-tree on every read (8 µs against 29 µs for ten assets).
 */
export function detailSql (engine: StoreEngine, columns: readonly string[]): string {
  const fields = columns.map(column => `'${column}', a.${column}`).join(', ')
  const assets = engine === 'postgres'
    ? `coalesce(json_agg(json_build_object(${fields}) order by a.created_at, a.id), '[]'::json)`
    : `coalesce(json_group_array(json_object(${fields})), '[]')`
  return `select p.*, ${TOTAL_SQL.replaceAll('portfolios.id', 'p.id')} as total_value,
      (select ${assets}
        from (select * from portfolio_assets where portfolio_id = p.id order by created_at, id) a) as assets
    from portfolios p where p.id = ?`
}

const BY_ID_SQL = `select portfolios.*, ${TOTAL_SQL} as total_value from portfolios where id = ?`

const INSERT_SQL =
  'insert into portfolios (id, name, description, user_id, created_at, updated_at) values (?, ?, ?, ?, ?, ?)'

/** The fields a portfolio and its detail share, from a row with its summed total. */
function portfolioFields (row: PortfolioRow): Pick<Portfolio, 'id' | 'name' | 'description' | 'userId' | 'totalValue'> {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    userId: row.user_id,
    totalValue: fromCents(row.total_value)
  }
}

function toPortfolio (row: PortfolioRow): Portfolio {
  return { ...portfolioFields(row), createdAt: row.created_at, updatedAt: row.updated_at }
}

function itemsOf<Item> (row: DetailRow<Item>): Item[] {
  return typeof row.assets === 'string' ? JSON.parse(row.assets) as Item[] : row.assets
}

type DetailAsset = PortfolioDetail['assets'][number]

type DetailRows = Array<DetailRow<DetailAsset>>
type Trx = Transaction<Database>

/** A changed portfolio, and its detail (whose tag is the ETag of `GET /portfolios/:id`). */
interface Changed {
  portfolio: Portfolio
  detail: PortfolioDetail
}

/** REST's detail of a portfolio, from a row of the detail statement: what `GET /portfolios/:id` answers and tags. */
function toDetail (row: DetailRow<DetailAsset>): PortfolioDetail {
  return { ...portfolioFields(row), assets: itemsOf(row) }
}

/** Sets a portfolio's `updated_at` (and, on PostgreSQL, locks its row); false when it does not exist. */
export async function touchPortfolio (executor: Executor, id: string, timestamp: string): Promise<boolean> {
  const result = await executor
    .updateTable('portfolios')
    .set({ updated_at: timestamp })
    .where('id', '=', id)
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}

/** Portfolios (docs/api.md#resources), their totals summed by the database. Inputs arrive validated and trimmed. */
export class PortfolioRepository {
  private readonly selectDetail: (parameters: readonly unknown[], executor?: Executor) => Promise<DetailRows>
  private readonly selectWithAssets: (parameters: readonly unknown[]) => Promise<Array<DetailRow<AssetRow>>>
  private readonly insert: (parameters: readonly unknown[]) => Promise<unknown[]>
  private readonly selectById: (parameters: readonly unknown[]) => Promise<PortfolioRow[]>

  constructor (private readonly handle: StoreHandle) {
    this.selectById = handle.statement<PortfolioRow>(BY_ID_SQL)
    this.selectDetail = handle.statement(detailSql(handle.engine, DETAIL_ASSET_COLUMNS))
    this.selectWithAssets = handle.statement(detailSql(handle.engine, ASSET_COLUMNS))
    this.insert = handle.statement(INSERT_SQL)
  }

  async list (filter: { userId?: string }, page: Page): Promise<Portfolio[]> {
    let query = this.handle.db.selectFrom('portfolios').selectAll().select(portfolioTotal.as('total_value'))
    if (filter.userId !== undefined) query = query.where('user_id', '=', filter.userId)
    const rows = await query.orderBy('created_at').orderBy('id').limit(page.limit).offset(page.offset).execute()
    return rows.map(toPortfolio)
  }

  async get (id: string): Promise<Portfolio | undefined> {
    const row = (await this.selectById([id]))[0]
    return row === undefined ? undefined : toPortfolio(row)
  }

  /** The portfolio, its total and its assets (REST's detail), in one statement. */
  async detail (id: string): Promise<PortfolioDetail | undefined> {
    const row = (await this.selectDetail([id]))[0]
    return row === undefined ? undefined : toDetail(row)
  }

  /** The portfolio and its whole assets, oldest first, in one statement (one snapshot: the total is theirs). */
  async withAssets (id: string): Promise<{ portfolio: Portfolio, assets: Asset[] } | undefined> {
    const row = (await this.selectWithAssets([id]))[0]
    return row === undefined ? undefined : { portfolio: toPortfolio(row), assets: itemsOf(row).map(toAsset) }
  }

  async value (id: string): Promise<PortfolioValue | undefined> {
    const row = await this.handle.db.selectFrom('portfolios')
      .select(['id', 'updated_at', portfolioTotal.as('total_value')])
      .where('id', '=', id)
      .executeTakeFirst()
    if (row === undefined) return undefined
    // Asset writes touch their portfolio's updated_at, so it is the value's last change.
    return { portfolioId: row.id, totalValue: fromCents(row.total_value), currency: 'BRL', lastUpdate: row.updated_at }
  }

  /** Stores a new portfolio and answers it from what was written (a new portfolio's total is 0). */
  async create (input: CreatePortfolioInput): Promise<Portfolio> {
    const timestamp = now()
    const portfolio: Portfolio = {
      id: randomUUID(),
      name: input.name,
      description: input.description ?? null,
      userId: input.userId,
      totalValue: 0,
      createdAt: timestamp,
      updatedAt: timestamp
    }
    await this.insert([portfolio.id, portfolio.name, portfolio.description, portfolio.userId, timestamp, timestamp])
    this.handle.wrote()
    return portfolio
  }

  /**
   * Renames or describes a portfolio, when `precondition` (an If-Match) holds for its detail's
   * tag; answers it and its detail after the change, read in the same transaction.
   */
  async change (id: string, input: UpdatePortfolioInput, precondition?: Precondition): Promise<Changed | undefined> {
    return await this.handle.write(async trx => {
      if (precondition !== undefined) await this.check(trx, id, precondition)
      const changes: Partial<PortfoliosTable> = { updated_at: now() }
      if (input.name !== undefined) changes.name = input.name
      if (input.description !== undefined) changes.description = input.description
      const result = await trx.updateTable('portfolios').set(changes).where('id', '=', id).executeTakeFirst()
      if (result.numUpdatedRows === 0n) return undefined
      const row = (await this.selectDetail([id], trx))[0]
      /* c8 ignore next -- updated in this transaction */
      if (row === undefined) return undefined
      return { portfolio: toPortfolio(row), detail: toDetail(row) }
    })
  }

  /**
   * Inside a write: locks the portfolio (PostgreSQL; on SQLite the store's one connection runs one
   * transaction at a time) and fails with 412 unless `precondition` holds for its detail's tag as
   * it is now — asset writes lock the same row, so nothing changes it between the check and the
   * write. A missing portfolio passes: the write then finds nothing (404). A delete first locks
   * what it will delete, in the order every delete takes (lots, assets, then the portfolio, which
   * asset writes lock last): locking the portfolio first could deadlock against an asset write.
   */
  private async check (trx: Trx, id: string, precondition: Precondition, deleting = false): Promise<void> {
    if (this.handle.engine === 'postgres') {
      const assetIds = trx.selectFrom('portfolio_assets').select('id').where('portfolio_id', '=', id)
      if (deleting) {
        await trx.selectFrom('asset_lots').select('id').where('asset_id', 'in', assetIds).forUpdate().execute()
        await assetIds.forUpdate().execute()
      }
      await trx.selectFrom('portfolios').select('id').where('id', '=', id).forUpdate().execute()
    }
    const row = (await this.selectDetail([id], trx))[0]
    if (row !== undefined && !precondition(entityTag(toDetail(row)))) throw new PreconditionFailedError()
  }

  /** Deletes the portfolio, its assets and their lots in one transaction, when `precondition` holds (see change). */
  async delete (id: string, precondition?: Precondition): Promise<boolean> {
    return await this.handle.write(async trx => {
      if (precondition !== undefined) await this.check(trx, id, precondition, true)
      await trx.deleteFrom('asset_lots')
        .where('asset_id', 'in', eb => eb.selectFrom('portfolio_assets').select('id').where('portfolio_id', '=', id))
        .execute()
      await trx.deleteFrom('portfolio_assets').where('portfolio_id', '=', id).execute()
      const result = await trx.deleteFrom('portfolios').where('id', '=', id).executeTakeFirst()
      return result.numDeletedRows > 0n
    })
  }
}
