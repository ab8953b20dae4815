import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import {
  Kysely,
  Migrator,
  PostgresDialect,
  SqliteDialect,
  sql,
  type KyselyConfig,
  type SqliteDatabase,
  type SqliteStatement
} from 'kysely'
import { NO_TELEMETRY, type Telemetry } from '../observability/telemetry.js'
import type { SpanKind, SpanStatusCode, Tracer } from '@opentelemetry/api'

// The API's enum values, so that a store without span export never loads OpenTelemetry.
const CLIENT_SPAN = 2 as SpanKind.CLIENT
const ERROR_STATUS = 2 as SpanStatusCode.ERROR
import type { Database } from './database.js'
import { migrationProvider } from './migrations.js'
import { startCheckpointer } from './checkpointer.js'

export type StoreEngine = 'sqlite' | 'postgres'

export interface Connection {
  db: Kysely<Database>
  engine: StoreEngine
  /** What else to end once `db` is destroyed (SQLite's checkpointer). */
  release?: () => Promise<void>
}

export interface ConnectOptions {
  /** PostgreSQL pool size per instance. */
  poolSize?: number
  /** Where each statement's duration and the pool's state are reported. */
  telemetry?: Telemetry
  /** With span export on: a span per statement. */
  tracer?: Tracer
  /** SQLite: the WAL checkpointer thread failed (automatic checkpoints are back on). */
  onCheckpointerFailure?: (error: unknown) => void
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
 */
export async function connect (url: string, options: ConnectOptions = {}): Promise<Connection> {
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    const { default: pg } = await import('pg')
    const pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? 10 })
    options.telemetry?.watchPool(() => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }))
    return {
      db: new Kysely<Database>({ dialect: new PostgresDialect({ pool }), log: queryLog('postgres', options) }),
      engine: 'postgres'
    }
  }
  if (url.startsWith('sqlite:')) {
    const { default: SqliteDatabase } = await import('better-sqlite3')
    const file = url.slice('sqlite:'.length)
    const memory = file === ':memory:'
    if (!memory) mkdirSync(dirname(file), { recursive: true })
    const database = new SqliteDatabase(memory ? ':memory:' : file)
    // WAL lets readers proceed during a write; NORMAL sync is durable across process crashes.
    database.pragma('journal_mode = WAL')
    database.pragma('synchronous = NORMAL')
    database.pragma('foreign_keys = ON')
    database.pragma('busy_timeout = 5000')
    // No memory map: every page of the file a read or an index insert touched stayed in the
    // process's resident memory (292 MiB of a 200 MB file under creates), for no throughput. Pages
    // are read into an 8 MiB page cache, over the system's file cache (32 MiB only added to the
    // resident memory under creates).
    database.pragma('mmap_size = 0')
    database.pragma('cache_size = -8192')
    // Sorts and temporary indexes in memory: a statement that needs one never waits on a file.
    database.pragma('temp_store = memory')
    const checkpointer = memory
      ? undefined
      : startCheckpointer(database, file, options.onCheckpointerFailure ?? (() => {}))
    const db = new Kysely<Database>({
      dialect: new SqliteDialect({ database: withStatementCache(database) }),
      log: queryLog('sqlite', options)
    })
    return { db, engine: 'sqlite', ...(checkpointer === undefined ? {} : { release: checkpointer.stop }) }
  }
  throw new Error('DATABASE_URL must start with sqlite: or postgres://')
}

const STATEMENT_CACHE_SIZE = 500

/**
 * Kysely prepares every query anew; SQLite's parse and plan then cost more than most of our
 * lookups themselves. The service's queries have a fixed set of shapes, so prepared statements
 * are kept by SQL text (bounded; schema changes happen only in migrations, before serving).
 */
function withStatementCache (database: SqliteDatabase): SqliteDatabase {
  const statements = new Map<string, SqliteStatement>()
  return {
    close: () => { statements.clear(); database.close() },
    prepare: (text: string) => {
      let statement = statements.get(text)
      if (statement === undefined) {
        if (statements.size >= STATEMENT_CACHE_SIZE) statements.clear()
        statement = database.prepare(text)
        statements.set(text, statement)
      }
      return statement
    }
  }
}

/** Applies pending migrations; safe to run from several instances at once. */
export async function migrate (db: Kysely<Database>, engine: StoreEngine): Promise<void> {
  // Kysely looks for its bookkeeping tables in every schema unless told which: name the current one,
  // so that one database can hold several stores (one per schema, via search_path).
  const migrationTableSchema = engine === 'postgres'
    ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema
    : undefined
  const migrator = new Migrator({ db, provider: migrationProvider, migrationTableSchema })
  const { error, results } = await migrator.migrateToLatest()
  if (error !== undefined) {
    const failed = results?.find(result => result.status === 'Error')?.migrationName
    throw new Error(`Database migration ${failed ?? ''} failed: ${(error as Error).message ?? String(error)}`)
  }
}
