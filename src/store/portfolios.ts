import { randomUUID } from 'node:crypto'
import { sql, type Selectable } from 'kysely'
import type { StoreEngine } from './connect.js'
import type { PortfoliosTable } from './database.js'
import { now, type Executor, type StoreHandle } from './handle.js'
import type { Page } from '../schemas/common.js'
import { fromCents } from '../money.js'
import type {
  CreatePortfolioInput,
  Portfolio,
  PortfolioDetail,
  PortfolioValue,
  UpdatePortfolioInput
} from '../schemas/portfolio.js'

/** A portfolio's total, computed by the database from its assets (CONTRACT §6). */
const TOTAL_SQL = 'coalesce((select sum(pa.value_cents) from portfolio_assets pa where pa.portfolio_id = portfolios.id), 0)'
const portfolioTotal = sql.raw<number | string>(TOTAL_SQL)

type PortfolioRow = Selectable<PortfoliosTable> & { total_value: number | string }

interface DetailRow {
  id: string
  name: string
  description: string | null
  user_id: string
  total_value: number | string
  /** JSON text on SQLite, parsed by the driver on PostgreSQL. */
  assets: string | PortfolioDetail['assets']
}

/**
 * A portfolio, its total and its assets in one statement (one round trip, one snapshot on
 * both engines, so the total always matches the assets listed), the assets aggregated as JSON.
 */
const DETAIL_SQL: Record<StoreEngine, string> = {
  sqlite: `select p.id, p.name, p.description, p.user_id, coalesce(a.total_value, 0) as total_value, coalesce(a.assets, '[]') as assets
    from portfolios p left join (
      select portfolio_id, sum(value_cents) as total_value,
        json_group_array(json_object('id', id, 'name', name, 'symbol', symbol, 'quantity', quantity, 'price', price) order by created_at, id) as assets
      from portfolio_assets where portfolio_id = ? group by portfolio_id
    ) a on a.portfolio_id = p.id
    where p.id = ?`,
  postgres: `select p.id, p.name, p.description, p.user_id, coalesce(a.total_value, 0) as total_value, coalesce(a.assets, '[]'::json) as assets
    from portfolios p left join (
      select portfolio_id, sum(value_cents) as total_value,
        json_agg(json_build_object('id', id, 'name', name, 'symbol', symbol, 'quantity', quantity, 'price', price) order by created_at, id) as assets
      from portfolio_assets where portfolio_id = ? group by portfolio_id
    ) a on a.portfolio_id = p.id
    where p.id = ?`
}

const BY_ID_SQL = `select portfolios.*, ${TOTAL_SQL} as total_value from portfolios where id = ?`

const INSERT_SQL = 'insert into portfolios (id, name, description, user_id, created_at, updated_at) values (?, ?, ?, ?, ?, ?)'

/** The fields a portfolio and its detail share, from a row with its summed total. */
function portfolioFields (row: Pick<PortfolioRow, 'id' | 'name' | 'description' | 'user_id' | 'total_value'>): Pick<Portfolio, 'id' | 'name' | 'description' | 'userId' | 'totalValue'> {
  return { id: row.id, name: row.name, description: row.description, userId: row.user_id, totalValue: fromCents(row.total_value) }
}

function toPortfolio (row: PortfolioRow): Portfolio {
  return { ...portfolioFields(row), createdAt: row.created_at, updatedAt: row.updated_at }
}

async function portfolioById (executor: Executor, id: string): Promise<Portfolio | undefined> {
  const row = await executor.selectFrom('portfolios').selectAll().select(portfolioTotal.as('total_value'))
    .where('id', '=', id)
    .executeTakeFirst()
  return row === undefined ? undefined : toPortfolio(row)
}

/** Sets a portfolio's `updated_at` (and, on PostgreSQL, locks its row); false when it does not exist. */
export async function touchPortfolio (executor: Executor, id: string, timestamp: string): Promise<boolean> {
  const result = await executor.updateTable('portfolios').set({ updated_at: timestamp }).where('id', '=', id).executeTakeFirst()
  return result.numUpdatedRows > 0n
}

/** Portfolios (spec §2.1), their totals summed by the database. Inputs arrive validated and trimmed. */
export class PortfolioRepository {
  private readonly selectDetail: (parameters: readonly unknown[]) => Promise<DetailRow[]>
  private readonly insert: (parameters: readonly unknown[]) => Promise<unknown[]>
  private readonly selectById: (parameters: readonly unknown[]) => Promise<PortfolioRow[]>

  constructor (private readonly handle: StoreHandle) {
    this.selectById = handle.statement<PortfolioRow>(BY_ID_SQL)
    this.selectDetail = handle.statement<DetailRow>(DETAIL_SQL[handle.engine])
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

  /** The portfolio, its total and its assets, in one statement. */
  async detail (id: string): Promise<PortfolioDetail | undefined> {
    const row = (await this.selectDetail([id, id]))[0]
    if (row === undefined) return undefined
    const assets = typeof row.assets === 'string' ? JSON.parse(row.assets) as PortfolioDetail['assets'] : row.assets
    return { ...portfolioFields(row), assets }
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

  async update (id: string, input: UpdatePortfolioInput): Promise<Portfolio | undefined> {
    return await this.handle.write(async trx => {
      const changes: Partial<PortfoliosTable> = { updated_at: now() }
      if (input.name !== undefined) changes.name = input.name
      if (input.description !== undefined) changes.description = input.description
      const result = await trx.updateTable('portfolios').set(changes).where('id', '=', id).executeTakeFirst()
      if (result.numUpdatedRows === 0n) return undefined
      return await portfolioById(trx, id)
    })
  }

  /** Deletes the portfolio, its assets and their lots in one transaction. */
  async delete (id: string): Promise<boolean> {
    return await this.handle.write(async trx => {
      await trx.deleteFrom('asset_lots')
        .where('asset_id', 'in', eb => eb.selectFrom('portfolio_assets').select('id').where('portfolio_id', '=', id))
        .execute()
      await trx.deleteFrom('portfolio_assets').where('portfolio_id', '=', id).execute()
      const result = await trx.deleteFrom('portfolios').where('id', '=', id).executeTakeFirst()
      return result.numDeletedRows > 0n
    })
  }
}
