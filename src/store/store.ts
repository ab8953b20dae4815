import { sql } from 'kysely'
import { connect, migrate, type ConnectOptions, type StoreEngine } from './connect.js'
import { StoreHandle } from './handle.js'
import { PortfolioRepository } from './portfolios.js'
import { AssetRepository } from './assets.js'
import { ExclusionRepository } from './exclusions.js'
import { AggregatorEventRepository } from './aggregator-events.js'
import { ItemVerificationRepository } from './item-verifications.js'
import { IdempotencyRepository } from './idempotency.js'
import { StatsRepository } from './stats.js'
import { DemoRepository } from './demo.js'

/** The database named by DATABASE_URL could not be opened or migrated; the message is one line for an operator. */
export class StoreOpenError extends Error {
  override name = 'StoreOpenError'
}

export interface StoreOptions extends ConnectOptions {
  /** Load the demo portfolios on the first start of an empty store. */
  demoData?: boolean
}

/**
 * The service's data on SQLite or PostgreSQL: one repository per domain over one shared
 * connection. Aggregates (totals, statistics) are computed by the database; multi-row writes
 * are transactions. The connection itself stays private: callers go through the repositories.
 */
export class Store {
  readonly portfolios: PortfolioRepository
  readonly assets: AssetRepository
  readonly exclusions: ExclusionRepository
  readonly aggregatorEvents: AggregatorEventRepository
  readonly itemVerifications: ItemVerificationRepository
  readonly idempotency: IdempotencyRepository
  readonly stats: StatsRepository
  readonly demo: DemoRepository

  private constructor (private readonly handle: StoreHandle, private readonly release?: () => Promise<void>) {
    this.portfolios = new PortfolioRepository(handle)
    this.assets = new AssetRepository(handle)
    this.exclusions = new ExclusionRepository(handle)
    this.aggregatorEvents = new AggregatorEventRepository(handle)
    this.itemVerifications = new ItemVerificationRepository(handle)
    this.idempotency = new IdempotencyRepository(handle)
    this.stats = new StatsRepository(handle)
    this.demo = new DemoRepository(handle)
  }

  /** Connects, migrates, and (when asked) loads the demo data once. */
  static async open (url: string, options: StoreOptions = {}): Promise<Store> {
    const { db, engine, release } = await connect(url, options)
    try {
      await migrate(db, engine)
      const store = new Store(new StoreHandle(db, engine), release)
      if (options.demoData === true) await store.demo.loadOnce()
      return store
    } catch (error) {
      await db.destroy().catch(() => {})
      await release?.()
      // The driver's reason (refused, unknown host, bad password…), never the URL: it may hold a password.
      throw new StoreOpenError(
        `Cannot open the database of DATABASE_URL (${engine}): ${(error as Error).message.split('\n')[0] ?? ''}`
      )
    }
  }

  get engine (): StoreEngine {
    return this.handle.engine
  }

  async close (): Promise<void> {
    await this.handle.db.destroy()
    await this.release?.()
  }

  /** A cheap round trip, for readiness checks. */
  async ping (): Promise<void> {
    await sql`select 1`.execute(this.handle.db)
  }

  /** Names of the migrations applied to this database, in order. */
  async appliedMigrations (): Promise<string[]> {
    const rows = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(this.handle.db)
    return rows.rows.map(row => row.name)
  }
}
