import { fromCents } from '../schemas/money.js'
import { now, type StoreHandle } from './handle.js'
import type { Stats } from '../schemas/stats.js'
import { MemoryCache } from '../cache/memory-cache.js'
import { NO_TELEMETRY, type Telemetry } from '../observability/telemetry.js'

/** How long one statistics aggregate serves an instance that has not written since. */
const STATS_TTL_MS = 2_000

/**
 * System statistics (docs/api.md#resources), aggregated by the database. The aggregate scans every asset,
 * so its result is shared by concurrent callers and reused for STATS_TTL_MS unless this
 * instance wrote since; writes of other instances show after at most that long.
 */
export class StatsRepository {
  /**
   * The aggregate of this instance's latest write count (its key, so a write of its own makes the next
   * request aggregate again), a use of the one mechanism (src/cache/memory-cache.ts).
   */
  private readonly aggregates: MemoryCache<Stats>

  constructor (private readonly handle: StoreHandle, telemetry: Telemetry = NO_TELEMETRY) {
    this.aggregates = new MemoryCache<Stats>({ name: 'stats', maxEntries: 1, ttlMs: STATS_TTL_MS, telemetry })
  }

  async get (): Promise<Stats> {
    return await this.aggregates.get(String(this.handle.generation), async () => await this.aggregate())
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
