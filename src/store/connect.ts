import {
  DEFAULT_MIGRATION_TABLE,
  Kysely,
  Migrator,
  PostgresDialect,
  SqliteDialect,
  sql,
  type KyselyConfig
} from 'kysely'
import { NO_TELEMETRY, type Telemetry } from '../observability/telemetry.js'
import { isPostgresUrl } from './database-url.js'
import type { SpanKind, SpanStatusCode, Tracer } from '@opentelemetry/api'

// The API's enum values, so that a store without span export never loads OpenTelemetry.
const CLIENT_SPAN = 2 as SpanKind.CLIENT
const ERROR_STATUS = 2 as SpanStatusCode.ERROR
import type { Database } from './database.js'
import { MIGRATION_NAMES, migrationProvider } from './migrations.js'
import { openSqlite } from './sqlite.js'
import type { GuardedPool } from './postgres-pool.js'
import type { DependencyHealth } from '../observability/dependencies.js'

export type StoreEngine = 'sqlite' | 'postgres'

export interface Connection {
  db: Kysely<Database>
  engine: StoreEngine
  /** What else to end once `db` is destroyed (SQLite's checkpointer and file watch). */
  release?: () => Promise<void>
  /** PostgreSQL's pool, which can refuse every request until the store is migrated (Store.open). */
  pool?: GuardedPool
}

export interface ConnectOptions {
  /** PostgreSQL pool size per instance. */
  poolSize?: number
  /** PostgreSQL: DATABASE_SCHEMA, the schema every statement names (else the connection's search_path). */
  schema?: string
  /** Where each statement's duration and the pool's state are reported. */
  telemetry?: Telemetry
  /** With span export on: a span per statement. */
  tracer?: Tracer
  /** Where the store's outages and recoveries are reported (`bff_dependency_up{dependency="store"}`). */
  health?: DependencyHealth
  /** SQLite: where the WAL checkpointer thread's failures and recoveries are reported. */
  checkpointerHealth?: DependencyHealth
  /** SQLite: `false` refuses a missing folder for the file (production) rather than create it. */
  createFolder?: boolean
}

/**
 * Kysely's log hook: every statement's duration (the hot-path statements included), as a metric
 * and as a span of the request it ran for. Without either Kysely times nothing.
 */
function queryLog (engine: StoreEngine, { telemetry, tracer }: ConnectOptions): KyselyConfig['log'] {
  const metrics = telemetry === undefined || telemetry === NO_TELEMETRY ? undefined : telemetry
  if (metrics === undefined && tracer === undefined) return undefined
  return event => {
    const failed = event.level === 'error'
    metrics?.storeQuery(event.queryDurationMillis / 1000, failed)
    if (tracer === undefined) return
    // Kysely reports a statement once it is over: its span starts that long ago.
    const end = Date.now()
    const span = tracer.startSpan('store.query', {
      kind: CLIENT_SPAN,
      startTime: end - event.queryDurationMillis,
      attributes: {
        'db.system.name': engine === 'postgres' ? 'postgresql' : 'sqlite',
        'db.query.text': event.query.sql
      }
    })
    if (failed) span.setStatus({ code: ERROR_STATUS })
    span.end(end)
  }
}

/**
 * `sqlite:<file>`, `sqlite::memory:` or `postgres://…` (`DATABASE_URL`, docs/deploy.md#configuration). Each
 * driver is loaded only when used: an instance on one engine does not carry the other in memory.
 * PostgreSQL's pool connects on first use; SQLite's file is opened here.
 */
export async function connect (url: string, options: ConnectOptions = {}): Promise<Connection> {
  if (isPostgresUrl(url)) {
    const { GuardedPool } = await import('./postgres-pool.js')
    const pool = new GuardedPool(url, { size: options.poolSize ?? 10, health: options.health })
    options.telemetry?.watchPool(() => pool.state())
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), log: queryLog('postgres', options) })
    return { db: options.schema === undefined ? db : db.withSchema(options.schema), engine: 'postgres', pool }
  }
  if (url.startsWith('sqlite:')) {
    const { database, release } = await openSqlite(url.slice('sqlite:'.length), {
      health: options.health,
      checkpointerHealth: options.checkpointerHealth,
      createFolder: options.createFolder
    })
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }), log: queryLog('sqlite', options) })
    return { db, engine: 'sqlite', ...(release === undefined ? {} : { release }) }
  }
  throw new Error('DATABASE_URL must start with sqlite: or postgres://')
}

/**
 * PostgreSQL's invalid_schema_name about a schema, or undefined_table about a table (`"schema.table"`),
 * that is not the store's own: another store's, dropped while Kysely read the catalog.
 */
function otherSchemaChanged (error: unknown, own: string | undefined): boolean {
  if (!(error instanceof Error)) return false
  const code = (error as { code?: unknown }).code
  if (code === '3F000') return own === undefined || !error.message.includes(`"${own}"`)
  return code === '42P01' && own !== undefined && !error.message.includes(`"${own}.`)
}

/**
 * Whether every migration of this build is recorded as run, and nothing else: one query, where
 * Kysely's migrator first reads the catalog of every table (about 15 ms of a start on SQLite).
 * A store in any other state, or one without the bookkeeping table yet, goes to the migrator,
 * which takes its lock before running anything (several instances may start at once) and reports
 * a run migration this build does not know. Kysely records a migration in the transaction that
 * runs it, so a recorded one is complete.
 */
async function upToDate (db: Kysely<Database>, schema: string | undefined): Promise<boolean> {
  const table = schema === undefined ? sql.id(DEFAULT_MIGRATION_TABLE) : sql.id(schema, DEFAULT_MIGRATION_TABLE)
  const recorded = await sql<{ name: string }>`select name from ${table}`.execute(db).then(
    ({ rows }) => new Set(rows.map(row => row.name)),
    () => undefined
  )
  return recorded?.size === MIGRATION_NAMES.length && MIGRATION_NAMES.every(name => recorded.has(name))
}

/**
 * Applies pending migrations; safe to run from several instances at once. On PostgreSQL in `schema`
 * (DATABASE_SCHEMA: every table and Kysely's bookkeeping named in it), else in the connection's current one.
 * `upTo` stops after that migration (a test's store as an earlier release left it).
 */
export async function migrate (
  db: Kysely<Database>, engine: StoreEngine, { schema, upTo }: { schema?: string, upTo?: string } = {}
): Promise<void> {
  // Kysely looks for its bookkeeping tables in every schema unless told which: name the store's own,
  // so that one database can hold several stores (one per schema).
  const migrationTableSchema = engine === 'postgres'
    ? schema ?? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema
    : undefined
  if (upTo === undefined && await upToDate(db, migrationTableSchema)) return
  const migrator = new Migrator({
    db: schema === undefined ? db : db.withSchema(schema), provider: migrationProvider, migrationTableSchema
  })
  const run = async (): ReturnType<Migrator['migrateToLatest']> =>
    await (upTo === undefined ? migrator.migrateToLatest() : migrator.migrateTo(upTo))
  let { error, results } = await run()
  // Kysely's bookkeeping check lists the tables of every schema by name: a schema another store
  // drops meanwhile fails it with 3F000 (seen in CI: stores of parallel test files on one
  // database), a table dropped meanwhile (another store's migration, an operator) with 42P01.
  // Nothing ran yet, and migrations are idempotent under Kysely's lock: run again.
  for (let retries = 20; retries > 0 && otherSchemaChanged(error, migrationTableSchema); retries--) {
    ({ error, results } = await run())
  }
  if (error !== undefined) {
    const failed = results?.find(result => result.status === 'Error')?.migrationName
    throw new Error(`Database migration ${failed ?? ''} failed: ${(error as Error).message ?? String(error)}`)
  }
}
