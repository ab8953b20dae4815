import { fromCents } from '../schemas/money.js'
import { now, type StoreHandle } from './handle.js'
import type { Stats } from '../schemas/stats.js'

/** How long one statistics aggregate serves an instance that has not written since. */
const STATS_TTL_MS = 2_000

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
    const stats = await this.handle.db.selectNoFrom(eb => [
      eb.cast<number>(eb.selectFrom('portfolios').select(eb.fn.countAll().as('n')), 'integer').as('total_portfolios'),
      eb.cast<number>(eb.selectFrom('portfolio_assets').select(eb.fn.countAll().as('n')), 'integer').as('total_assets'),
      eb.fn.coalesce(
        eb.selectFrom('portfolio_assets').select(assets => assets.fn.sum<number | string>('value_cents').as('n')),
        eb.lit(0)
      ).as('total_value'),
      eb.cast<number>(
        eb.selectFrom('portfolios').select(portfolios => portfolios.fn.count('user_id').distinct().as('n')),
        'integer'
      ).as('active_users'),
      eb.selectFrom('portfolios').select(portfolios => portfolios.fn.max('updated_at').as('n')).as('last_update')
    ]).executeTakeFirstOrThrow()
    return {
      totalPortfolios: Number(stats.total_portfolios),
      totalAssets: Number(stats.total_assets),
      totalValue: fromCents(stats.total_value),
      activeUsers: Number(stats.active_users),
      lastUpdate: stats.last_update ?? now()
    }
  }
}
