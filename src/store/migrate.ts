import { DEFAULT_MIGRATION_TABLE, sql, type Kysely, type Migration, type Transaction } from 'kysely'
import { storeFault } from '../errors.js'
import type { Database } from './database.js'
import type { StoreEngine } from './connect.js'
import { MIGRATIONS, MIGRATION_NAMES } from './migrations.js'
import { isPostgresConnectionFailure } from './outage.js'

/*
 * The migrations' runner (docs/deploy.md#migrations). Kysely's Migrator ran them until it was found
 * not to exclude anyone through a pooler in transaction mode, and cannot be driven so that it does.
 * On PostgreSQL it creates its bookkeeping tables before its lock, then takes a session-level
 * `pg_advisory_lock`, runs the migrations in a transaction, and `pg_advisory_unlock`s: a pooler may
 * send those three to three different server connections, so two instances migrated at once (a
 * duplicate key in `pg_type`), and a lock left on a pooled server connection blocked every later
 * start (4 instances started at once through PgBouncer 1.18 in transaction mode: every instance
 * ready in 1 round of 5). It cannot run inside a transaction of ours (its `connection()` throws on a
 * `Transaction`), and on SQLite it takes no lock and runs outside a transaction.
 *
 * So here: one transaction, whose first statement takes a lock that ends with it, then the
 * bookkeeping table, the check of what is recorded, and each pending migration with its record.
 * A lock that is the transaction's cannot outlive it on any connection, pooled or not: PostgreSQL
 * ends the transaction of a connection that ends (an instance that crashed). Kysely's bookkeeping
 * table is kept as it was (`kysely_migration`, `name` and `timestamp`), so that stores migrated by
 * earlier releases read on, and an earlier release started on a later store still refuses to.
 */

/**
 * The first key of the migrations' advisory lock, `pg_advisory_xact_lock(key, schema oid)`: any
 * number the database's other advisory locks do not use ('bfmg' in ASCII). The second is the oid of
 * the store's schema, so that stores in different schemas of one database do not wait for each other.
 * @internal Test seam: the tests hold the lock as another instance would.
 */
export const MIGRATION_LOCK_KEY = 0x62666d67

/** The session holding the migrations' lock, as PostgreSQL knows it (`pg_locks`, `pg_stat_activity`). */
interface LockHolder {
  pid: number
  /** The instance's name for its migration connection (postgres-pool.ts), passed on by a pooler. */
  applicationName: string | null
  /** A pooler's address when the holder came through one. */
  clientAddress: string | null
  /** When its transaction began. */
  since: Date | null
}

export interface MigrateOptions {
  /**
   * PostgreSQL: DATABASE_SCHEMA, where every table and the bookkeeping are named; else the tables land in
   * the connection's current schema, which names the bookkeeping.
   */
  schema?: string
  /** Stops after this migration (a test's store as an earlier release left it). */
  upTo?: string
  /** PostgreSQL: another instance holds the lock; this one waits until its transaction ends. */
  onWait?: (holder: LockHolder) => void
}

/** `kysely_migration`, in `schema` when one is named. */
function bookkeepingTable (schema: string | undefined): ReturnType<typeof sql.id> {
  return schema === undefined ? sql.id(DEFAULT_MIGRATION_TABLE) : sql.id(schema, DEFAULT_MIGRATION_TABLE)
}

/**
 * Applies the pending migrations and answers their names; safe to run from several instances and
 * processes at once, through any pooler that keeps a transaction on one server connection. A store
 * whose recorded migrations are exactly this build's is checked with one query and no lock.
 */
export async function migrate (
  db: Kysely<Database>, engine: StoreEngine, options: MigrateOptions = {}
): Promise<string[]> {
  const { schema, upTo } = options
  // Named, so that one database can hold several stores (one per schema).
  const bookkeeping = engine === 'postgres' ? schema ?? await currentSchema(db) : undefined
  if (upTo === undefined && await upToDate(db, bookkeeping)) return []
  const table = bookkeepingTable(bookkeeping)
  let running: string | undefined
  try {
    // Read committed: every statement after the lock sees what the previous holder committed. Read
    // write: on SQLite `begin immediate` (SqliteStoreDialect), the file's write lock taken (or waited
    // for, busy_timeout) before anything is read.
    return await db.transaction().setIsolationLevel('read committed').setAccessMode('read write').execute(async trx => {
      if (bookkeeping !== undefined) await lockPostgres(trx, bookkeeping, options.onWait)
      await sql`create table if not exists ${table} ("name" varchar(255) not null primary key,
        "timestamp" varchar(255) not null)`.execute(trx)
      const { rows } = await sql<{ name: string }>`select name from ${table}`.execute(trx)
      const pending = pendingOf(new Set(rows.map(row => row.name)), upTo)
      for (const name of pending) {
        running = name
        await (MIGRATIONS[name] as Migration).up(schema === undefined ? trx : trx.withSchema(schema))
        await sql`insert into ${table} ("name", "timestamp") values (${name}, ${new Date().toISOString()})`.execute(trx)
        running = undefined
      }
      return pending
    })
  } catch (error) {
    if (running === undefined || isPostgresConnectionFailure(error)) throw error
    const fault = storeFault(error)
    throw new Error(`Database migration ${running} failed: ${(fault as Error).message ?? String(fault)}`)
  }
}

/**
 * The migrations to run, in order, after the `recorded` ones. A recorded one this build does not know
 * (an older build started after a newer one) stops it, and so does a gap: migrations are append-only.
 */
function pendingOf (recorded: Set<string>, upTo: string | undefined): string[] {
  const unknown = [...recorded].filter(name => !MIGRATION_NAMES.includes(name))
  if (unknown.length > 0) {
    throw new Error(`the database records migration ${unknown.join(', ')}, which this build does not know ` +
      '(a later release ran it): start that release or a later one')
  }
  const pending = MIGRATION_NAMES.slice(recorded.size)
  const missing = MIGRATION_NAMES.slice(0, recorded.size).filter(name => !recorded.has(name))
  if (missing.length > 0) {
    throw new Error(`the database records later migrations but not ${missing.join(', ')} (rows of ` +
      `${DEFAULT_MIGRATION_TABLE} deleted by hand?)`)
  }
  if (upTo === undefined) return pending
  return pending.filter(name => MIGRATION_NAMES.indexOf(name) <= MIGRATION_NAMES.indexOf(upTo))
}

async function currentSchema (db: Kysely<Database>): Promise<string> {
  return (await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db)).rows[0]?.schema ?? ''
}

/**
 * Whether every migration of this build is recorded as run, and nothing else: one query, no lock (every
 * start but the first after a release). A store in any other state, or without the bookkeeping table
 * yet, goes to the transaction. A migration is recorded in the transaction that runs it, so a recorded
 * one is complete.
 */
async function upToDate (db: Kysely<Database>, schema: string | undefined): Promise<boolean> {
  const recorded = await sql<{ name: string }>`select name from ${bookkeepingTable(schema)}`.execute(db).then(
    ({ rows }) => new Set(rows.map(row => row.name)),
    () => undefined
  )
  return recorded?.size === MIGRATION_NAMES.length && MIGRATION_NAMES.every(name => recorded.has(name))
}

/**
 * The migrations' lock, the transaction's own. Taken at once when free; otherwise its holder is told
 * to `onWait`, and the lock waited for, for as long as the holder's transaction lasts (its migrations,
 * or until its connection ends).
 */
async function lockPostgres (
  trx: Transaction<Database>, schema: string, onWait: MigrateOptions['onWait']
): Promise<void> {
  const { rows } = await sql<{ locked: boolean }>`select pg_try_advisory_xact_lock(${MIGRATION_LOCK_KEY}, oid::int)
    as locked from pg_namespace where nspname = ${schema}`.execute(trx)
  const locked = rows[0]?.locked
  if (locked === undefined) throw new Error(`no schema "${schema}" to migrate in`)
  if (locked) return
  const holder = await lockHolder(trx, schema)
  // None found: it let go meanwhile, and the lock is taken at once (or after a newcomer's, unannounced).
  if (holder !== undefined) onWait?.(holder)
  await sql`select pg_advisory_xact_lock(${MIGRATION_LOCK_KEY}, oid::int) from pg_namespace
    where nspname = ${schema}`.execute(trx)
}

async function lockHolder (trx: Transaction<Database>, schema: string): Promise<LockHolder | undefined> {
  const { rows } = await sql<LockHolder>`select l.pid, a.application_name as "applicationName",
      host(a.client_addr) as "clientAddress", a.xact_start as since
    from pg_locks l left join pg_stat_activity a on a.pid = l.pid
    where l.locktype = 'advisory' and l.granted and l.objsubid = 2
      and l.database = (select oid from pg_database where datname = current_database())
      and l.classid = ${MIGRATION_LOCK_KEY} and l.objid = (select oid from pg_namespace where nspname = ${schema})`
    .execute(trx)
  return rows[0]
}
