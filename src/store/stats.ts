import { sql } from 'kysely'
import { fromCents } from '../domain/money.js'
import { now, type StoreHandle } from './handle.js'
import type { Stats } from '../schemas/stats.js'

/** How long one statistics aggregate serves an instance that has not written since. */
export const STATS_TTL_MS = 2_000

/**
 * System statistics (docs/api.md#resources), aggregated by the database. The aggregate scans every asset,
 * so its result is shared by concurrent callers and reused for STATS_TTL_MS unless this
 * instance wrote since; writes of other instances show after at most that long.
 */
export class StatsRepository {
  private cache: { generation: number, at: number, value: Promise<Stats> } | undefined

  constructor (private readonly handle: StoreHandle) {}

  async get (): Promise<Stats> {
    const cached = this.cache
    const generation = this.handle.generation
    if (cached !== undefined && cached.generation === generation && Date.now() - cached.at < STATS_TTL_MS) {
      return await cached.value
    }
    const entry = { generation, at: Date.now(), value: this.aggregate() }
    this.cache = entry
    entry.value.catch(() => { if (this.cache === entry) this.cache = undefined })
    return await entry.value
  }

  private async aggregate (): Promise<Stats> {
    const row = await sql<{
      total_portfolios: number
      total_assets: number
      total_value: number | string
      active_users: number
      last_update: string | null
    }>`
      select
        cast((select count(*) from portfolios) as integer) as total_portfolios,
        cast((select count(*) from portfolio_assets) as integer) as total_assets,
        coalesce((select sum(value_cents) from portfolio_assets), 0) as total_value,
        cast((select count(distinct user_id) from portfolios) as integer) as active_users,
        (select max(updated_at) from portfolios) as last_update
    `.execute(this.handle.db)
    const stats = row.rows[0]
    /* c8 ignore next -- a select without FROM always yields one row */
    if (stats === undefined) throw new Error('statistics query returned no row')
    return {
      totalPortfolios: Number(stats.total_portfolios),
      totalAssets: Number(stats.total_assets),
      totalValue: fromCents(stats.total_value),
      activeUsers: Number(stats.active_users),
      lastUpdate: stats.last_update ?? now()
    }
  }
}
