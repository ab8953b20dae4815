import { randomUUID } from 'node:crypto'
import { sql, type Selectable } from 'kysely'
import type { PortfoliosTable } from './database.js'
import { now, type Executor, type StoreHandle } from './handle.js'
import type { Page } from '../schemas/common.js'
import type {
  CreatePortfolioInput,
  Portfolio,
  PortfolioDetail,
  PortfolioValue,
  UpdatePortfolioInput
} from '../schemas/portfolio.js'

/** A portfolio's total, computed by the database from its assets (CONTRACT §6). */
const portfolioTotal = sql<number>`coalesce((select sum(pa.quantity * pa.price) from portfolio_assets pa where pa.portfolio_id = portfolios.id), 0)`

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
  constructor (private readonly handle: StoreHandle) {}

  async list (filter: { userId?: string }, page: Page): Promise<Portfolio[]> {
    let query = this.handle.db.selectFrom('portfolios').selectAll().select(portfolioTotal.as('total_value'))
    if (filter.userId !== undefined) query = query.where('user_id', '=', filter.userId)
    const rows = await query.orderBy('created_at').orderBy('id').limit(page.limit).offset(page.offset).execute()
    return rows.map(toPortfolio)
  }

  async get (id: string): Promise<Portfolio | undefined> {
    return await portfolioById(this.handle.db, id)
  }

  /**
   * The portfolio (its total summed by the database) and its assets, read from one snapshot so
   * the total always matches the assets listed. Two indexed lookups cost less here than one
   * join with a window sum, which SQLite sorts in a temporary b-tree.
   */
  async detail (id: string): Promise<PortfolioDetail | undefined> {
    return await this.handle.db.transaction().setIsolationLevel('repeatable read').execute(async trx => {
      const portfolio = await portfolioById(trx, id)
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

  async value (id: string): Promise<PortfolioValue | undefined> {
    const row = await this.handle.db.selectFrom('portfolios')
      .select(['id', 'updated_at', portfolioTotal.as('total_value')])
      .where('id', '=', id)
      .executeTakeFirst()
    if (row === undefined) return undefined
    // Asset writes touch their portfolio's updated_at, so it is the value's last change.
    return { portfolioId: row.id, totalValue: Number(row.total_value), currency: 'BRL', lastUpdate: row.updated_at }
  }

  async create (input: CreatePortfolioInput): Promise<Portfolio> {
    const timestamp = now()
    const row = {
      id: randomUUID(),
      name: input.name,
      description: input.description ?? null,
      user_id: input.userId,
      created_at: timestamp,
      updated_at: timestamp
    }
    await this.handle.db.insertInto('portfolios').values(row).execute()
    this.handle.wrote()
    return toPortfolio({ ...row, total_value: 0 })
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
