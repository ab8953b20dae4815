import { DEFAULT_MIGRATION_TABLE, Kysely, PostgresDialect, sql } from 'kysely'
import type { FastifyBaseLogger } from 'fastify'
import { ExponentialBackoff, handleAll, retry } from 'cockatiel'
import { connect, type Connection, type ConnectOptions, type StoreEngine } from './connect.js'
import { migrate, type MigrateOptions } from './migrate.js'
import type { Database } from './database.js'
import type { GuardedPool } from './postgres-pool.js'
import { storeFault } from '../errors.js'
import { isPostgresConnectionFailure } from './outage.js'
import { isPostgresUrl } from './database-url.js'
import { poolerHint } from './postgres-schema.js'
import { now, StoreHandle } from './handle.js'
import { PortfolioRepository, type PortfolioRows } from './portfolios.js'
import type { AssetRows } from './asset-rows.js'
import { AssetRepository } from './assets.js'
import { TransactionRepository, type TradeRows } from './transactions.js'
import { ExclusionRepository } from './exclusions.js'
import { AggregatorEventRepository } from './aggregator-events.js'
import { JobRepository, type JobRows } from './jobs.js'
import { ImportRepository, type ImportRows } from './imports.js'
import { IdempotencyRepository } from './idempotency.js'
import { StatsRepository } from './stats.js'
import { DemoRepository } from './demo.js'
import type { Announcer, PortfolioChange, Unsubscribe } from '../change-feed/change-events.js'
import type { Telemetry } from '../observability/telemetry.js'

/** The database named by DATABASE_URL could not be opened or migrated; the message is one line for an operator. */
export class StoreOpenError extends Error {
  override name = 'StoreOpenError'
}

export interface StoreOptions extends ConnectOptions {
  /** Load the demo portfolios on the first start of an empty store. */
  demoData?: boolean
  /**
   * PostgreSQL unreachable at start (refused, timed out, starting up): return at once with a store
   * that answers 503 and becomes ready by itself once the database answers and is migrated,
   * instead of failing (production: docs/deploy.md#failure-modes). Any other failure still throws.
   */
  waitForDatabase?: boolean
  /** Where a start-up that waits for its database says why it is still waiting. */
  log?: FastifyBaseLogger
}

/** While waiting for PostgreSQL at start: a first retry after 1 s, doubling (jittered) up to every 5 s. */
const START_BACKOFF = { initialDelay: 1000, maxDelay: 5000 }

/** One line for the operator: the driver's reason, never the URL (it may hold a password). */
function openFailure (url: string, error: unknown): StoreOpenError {
  const engine = isPostgresUrl(url) ? ' (postgres)' : url.startsWith('sqlite:') ? ' (sqlite)' : ''
  const failure = storeFault(error)
  const reason = (failure instanceof Error ? failure.message : String(failure)).split('\n')[0] ?? ''
  return new StoreOpenError(`Cannot open the database of DATABASE_URL${engine}: ${poolerHint(reason)}`)
}

/**
 * A write of the domain, open: its instant, and the rows of portfolios, assets, transactions, jobs and imports it
 * reads and writes, all in its transaction (the domain's unit of work: src/domain/ports.ts).
 */
interface Work {
  readonly now: string
  readonly portfolios: PortfolioRows
  readonly assets: AssetRows
  readonly trades: TradeRows
  readonly jobs: JobRows
  readonly imports: ImportRows
}

/**
 * The service's data on SQLite or PostgreSQL: one repository per domain over one shared
 * connection. Aggregates (totals, statistics) are computed by the database; multi-row writes
 * are transactions, those of portfolios, assets and transactions each a unit of work of the
 * domain ({@link write}), which decides what they write. The connection itself stays private:
 * callers go through the repositories.
 */
export class Store {
  readonly portfolios: PortfolioRepository
  readonly assets: AssetRepository
  readonly transactions: TransactionRepository
  readonly exclusions: ExclusionRepository
  readonly aggregatorEvents: AggregatorEventRepository
  /** The queue of background work (docs/deploy.md#background-work). */
  readonly jobs: JobRepository
  readonly imports: ImportRepository
  readonly idempotency: IdempotencyRepository
  readonly stats: StatsRepository
  readonly demo: DemoRepository
  /** Ends a start-up still waiting for its database. */
  private readonly starting = new AbortController()

  private constructor (
    private readonly handle: StoreHandle,
    private readonly release?: () => Promise<void>,
    /** PostgreSQL's pool, for {@link notify}. */
    private readonly pool?: GuardedPool,
    telemetry?: Telemetry
  ) {
    this.portfolios = new PortfolioRepository(handle)
    this.assets = new AssetRepository(handle)
    this.transactions = new TransactionRepository(handle)
    this.exclusions = new ExclusionRepository(handle)
    this.aggregatorEvents = new AggregatorEventRepository(handle)
    this.jobs = new JobRepository(handle)
    this.imports = new ImportRepository(handle)
    this.idempotency = new IdempotencyRepository(handle)
    this.stats = new StatsRepository(handle, telemetry)
    this.demo = new DemoRepository(handle)
  }

  /**
   * Connects, migrates, and (when asked) loads the demo data once. Another instance's migrations in
   * progress are waited for, one line saying whose: with `waitForDatabase`, behind a store that answers
   * 503 until they are done and this store is migrated (the instance listens, not ready); otherwise here.
   */
  static async open (url: string, options: StoreOptions = {}): Promise<Store> {
    let connection: Connection
    try {
      connection = await connect(url, options)
    } catch (error) {
      throw openFailure(url, error)
    }
    const { pool } = connection
    const store = new Store(
      new StoreHandle(connection.db, connection.engine, options.schema), connection.release, pool, options.telemetry
    )
    let onWait: MigrateOptions['onWait']
    const waiting = new Promise<'waiting'>(resolve => {
      onWait = holder => {
        options.log?.info({ holder }, 'store waiting for another instance to migrate it')
        resolve('waiting')
      }
    })
    const preparing = store.prepare(url, options.log, onWait)
    try {
      const first = await Promise.race([preparing.then(() => 'migrated' as const), waiting])
      if (first === 'waiting' && options.waitForDatabase === true && pool !== undefined) {
        pool.refuse(new Error('waiting for another instance to migrate the store'))
        store.prepareLater(url, options, pool, onWait, preparing)
        return store
      }
      await preparing
      if (options.demoData === true) await store.demo.loadOnce()
      options.health?.up()
      return store
    } catch (error) {
      if (options.waitForDatabase !== true || pool === undefined || !isPostgresConnectionFailure(error)) {
        await store.close().catch(() => {})
        throw openFailure(url, error)
      }
      pool.refuse(error)
      options.health?.down(error)
      store.prepareLater(url, options, pool, onWait)
      return store
    }
  }

  /**
   * Migrations, on PostgreSQL through a connection of their own, between the checks that the tables
   * are where DATABASE_SCHEMA (or the URL's search_path) says (postgres-schema.ts). Closing the store
   * ends that connection, and a wait for another instance's migrations with it.
   */
  private async prepare (
    url: string, log: FastifyBaseLogger | undefined, onWait: MigrateOptions['onWait']
  ): Promise<void> {
    let ran: string[]
    if (this.engine === 'postgres') {
      const [{ migrationPool }, { checkTablesIn, storeSchema }] = await Promise.all([
        import('./postgres-pool.js'), import('./postgres-schema.js')
      ])
      const pool = migrationPool(url, this.starting.signal)
      const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
      try {
        const schema = await storeSchema(db, url, this.handle.schema)
        ran = await migrate(db, 'postgres', { schema: this.handle.schema, onWait })
        await checkTablesIn(db, schema)
      } finally {
        await db.destroy()
      }
    } else {
      ran = await migrate(this.handle.db, this.engine)
    }
    if (ran.length > 0) log?.info({ migrations: ran }, 'store migrations run')
  }

  /**
   * Started with PostgreSQL unreachable, or while another instance migrates it (`first`, that wait):
   * migrations are tried again with capped backoff until they succeed (then the pool accepts requests)
   * or the store is closed. A failure other than the database being unreachable (a refused password,
   * a failed migration) is logged each time its reason changes and tried again all the same: the
   * instance stays alive and not ready.
   */
  private prepareLater (
    url: string, options: StoreOptions, pool: GuardedPool, onWait: MigrateOptions['onWait'], first?: Promise<void>
  ): void {
    let lastReason = ''
    let pending = first
    const attempts = retry(handleAll, { backoff: new ExponentialBackoff(START_BACKOFF) })
    attempts.onRetry(event => {
      const error = 'error' in event ? event.error : undefined
      if (isPostgresConnectionFailure(error)) return
      const reason = String((error as Error | undefined)?.message)
      if (reason !== lastReason) options.log?.error({ err: error }, 'store cannot start: retrying')
      lastReason = reason
    })
    attempts.execute(async () => {
      const attempt = pending ?? this.prepare(url, options.log, onWait)
      pending = undefined
      await attempt
      pool.accept()
      if (options.demoData === true) await this.demo.loadOnce()
    }, this.starting.signal).then(() => {
      options.health?.up()
      options.log?.info('store migrated: ready')
    }, () => { /* closed while waiting */ })
  }

  get engine (): StoreEngine {
    return this.handle.engine
  }

  /**
   * A write of the domain in one transaction: `work` reads and writes rows through the unit of work, and the
   * transaction commits when it settles (an error it throws rolls it back). The portfolios it changed are
   * announced inside the transaction and told once it has committed ({@link onPortfolioChange}).
   */
  async write<T> (work: (work: Work) => Promise<T>): Promise<T> {
    return await this.handle.write(async (trx, announce) => {
      const instant = now()
      return await work({
        now: instant,
        portfolios: this.portfolios.rowsIn(trx, instant, announce),
        assets: this.assets.rowsIn(trx, instant),
        trades: this.transactions.rowsIn(trx, instant),
        jobs: this.jobs.rowsIn(trx),
        imports: this.imports.rowsIn(trx, instant)
      })
    })
  }

  /**
   * Every change of a portfolio this store commits (its row, its assets; the reset of the demo
   * data), told once committed, whichever interface or host wrote it: the change feed sends them
   * on to every instance.
   */
  onPortfolioChange (listener: (change: PortfolioChange) => void): Unsubscribe {
    return this.handle.portfolioChanges.add(listener)
  }

  /**
   * From now on every write runs `announcer`'s statement at the end of its transaction, when it
   * changed a portfolio (the change feed's `pg_notify`: told if and only if it commits); `undefined`
   * stops it.
   */
  announceChangesWith (announcer: Announcer | undefined): void {
    this.handle.announcer = announcer
  }

  /**
   * PostgreSQL: a notification through the store's own connections, as writes send theirs; past Kysely,
   * so that the change feed's heartbeats (one a second) are neither counted nor traced as statements.
   */
  async notify (channel: string, payload: string): Promise<void> {
    if (this.pool === undefined) throw new Error('notifications need a PostgreSQL store')
    const client = await this.pool.connect()
    try {
      await client.query('select pg_notify($1, $2)', [channel, payload])
    } finally {
      client.release()
    }
  }

  async close (): Promise<void> {
    this.starting.abort()
    await this.handle.db.destroy()
    await this.release?.()
  }

  /** A cheap round trip, for readiness checks. */
  async ping (): Promise<void> {
    await sql`select 1`.execute(this.handle.db)
  }

  /** Names of the migrations applied to this database, in order. */
  async appliedMigrations (): Promise<string[]> {
    const { schema } = this.handle
    const table = schema === undefined ? sql.id(DEFAULT_MIGRATION_TABLE) : sql.id(schema, DEFAULT_MIGRATION_TABLE)
    const rows = await sql<{ name: string }>`select name from ${table} order by name`.execute(this.handle.db)
    return rows.rows.map(row => row.name)
  }
}
