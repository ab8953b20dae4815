import { Kysely, PostgresDialect, type KyselyConfig } from 'kysely'
import { NO_TELEMETRY, type Telemetry } from '../observability/telemetry.js'
import { isPostgresUrl } from './database-url.js'
import type { SpanKind, SpanStatusCode, Tracer } from '@opentelemetry/api'

// The API's enum values, so that a store without span export never loads OpenTelemetry.
const CLIENT_SPAN = 2 as SpanKind.CLIENT
const ERROR_STATUS = 2 as SpanStatusCode.ERROR
import type { Database } from './database.js'
import { openSqlite, SqliteStoreDialect } from './sqlite.js'
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
    const db = new Kysely<Database>({ dialect: new SqliteStoreDialect({ database }), log: queryLog('sqlite', options) })
    return { db, engine: 'sqlite', ...(release === undefined ? {} : { release }) }
  }
  throw new Error('DATABASE_URL must start with sqlite: or postgres://')
}
