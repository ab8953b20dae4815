import { existsSync, mkdirSync, statSync } from 'node:fs'
import { dirname } from 'node:path'
import {
  CompiledQuery, SqliteDialect, SqliteDriver, type DatabaseConnection, type Driver, type SqliteDatabase,
  type SqliteDialectConfig, type SqliteStatement, type TransactionSettings
} from 'kysely'
import type { Database as BetterSqlite } from 'better-sqlite3'
import { storeUnavailable } from '../errors.js'
import type { DependencyHealth } from '../observability/dependencies.js'
import { startCheckpointer } from './checkpointer.js'
import { isSqliteUnavailable } from './outage.js'

export interface SqliteOptions {
  /** Where the file's faults (full, read-only, removed) and recoveries are reported. */
  health?: DependencyHealth
  /** Where the checkpointer thread's failures and recoveries are reported. */
  checkpointerHealth?: DependencyHealth
  /** `false`: a missing folder for the file stops start-up (production) rather than being created. */
  createFolder?: boolean
}

export interface OpenedSqlite {
  /** The connection as Kysely's dialect takes it, every statement guarded. */
  database: SqliteDatabase
  /** Ends the checkpointer and the file watch (after the connection is closed). */
  release?: () => Promise<void>
}

/** How often the file is checked to still be the one opened. */
const FILE_CHECK_INTERVAL_MS = 1000

/** `sqlite:<file>` or `sqlite::memory:`: the one connection, tuned and guarded. Throws when it cannot open. */
export async function openSqlite (file: string, options: SqliteOptions = {}): Promise<OpenedSqlite> {
  const { default: Sqlite } = await import('better-sqlite3')
  const memory = file === ':memory:'
  if (!memory && !existsSync(dirname(file))) {
    if (options.createFolder === false) throw new Error(`the folder ${dirname(file)} does not exist`)
    mkdirSync(dirname(file), { recursive: true })
  }
  const database = new Sqlite(memory ? ':memory:' : file)
  try {
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
  } catch (error) {
    database.close()
    throw error
  }
  if (memory) return { database: guarded(database, options.health, () => undefined) }
  const checkpointer = startCheckpointer(database, file, options.checkpointerHealth)
  const watch = watchFile(file)
  return {
    database: guarded(database, options.health, watch.gone),
    release: async () => {
      watch.stop()
      await checkpointer.stop()
    }
  }
}

/**
 * A database file removed (or replaced) under a running instance is not an error to SQLite: the
 * connection goes on writing to the unlinked file, and every write is lost at the next start. So
 * the path is checked every second to still name the file opened; when it does not, the store
 * refuses every statement until it does again.
 */
function watchFile (file: string): { gone: () => Error | undefined, stop: () => void } {
  const inode = statSync(file).ino
  let gone: Error | undefined
  const check = (): void => {
    let current: number | undefined
    try {
      current = statSync(file).ino
    } catch {
      current = undefined
    }
    gone = current === inode ? undefined : new Error('the database file was removed or replaced while open')
  }
  const timer = setInterval(check, FILE_CHECK_INTERVAL_MS).unref()
  return { gone: () => gone, stop: () => { clearInterval(timer) } }
}

/**
 * Kysely's SQLite dialect, but for a transaction asked to be `read write` (the migrations', src/store/migrate.ts),
 * which begins immediate: it takes the file's write lock at `begin`, so that a second process waits there
 * (busy_timeout) rather than reading a state the first is changing. SQLite has no access modes; Kysely's
 * driver begins every transaction deferred, taking the lock at the first write (a process that read first
 * is then refused, `database is locked`, where it would have waited). The store's other transactions are
 * unchanged: a transaction of one update, 18.8 µs of CPU against 19.3 with Kysely's dialect, 20.6 against
 * 20.9 in a second run (medians of 9 alternated rounds of 5 000, the same process).
 */
export class SqliteStoreDialect extends SqliteDialect {
  constructor (private readonly settings: SqliteDialectConfig) {
    super(settings)
  }

  override createDriver (): Driver {
    return new ImmediateWrites(this.settings)
  }
}

class ImmediateWrites extends SqliteDriver {
  override async beginTransaction (connection: DatabaseConnection, settings: TransactionSettings = {}): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(settings.accessMode === 'read write' ? 'begin immediate' : 'begin'))
  }
}

const STATEMENT_CACHE_SIZE = 500
const NOTHING_CHANGED = { changes: 0, lastInsertRowid: 0 }

/**
 * The connection as Kysely sees it: prepared statements kept by their text, and every statement
 * guarded.
 *
 * Kysely prepares every query anew; SQLite's parse and plan then cost more than most of our
 * lookups themselves. The service's queries have a fixed set of shapes, so prepared statements
 * are kept by SQL text (bounded; schema changes happen only in migrations, before serving).
 *
 * A fault of the file (full, read-only, an I/O error, removed) becomes `storeUnavailable` (503)
 * and is reported; a write that succeeds reports the store back. SQLite rolls a
 * transaction back by itself when the disk is full: Kysely's own `rollback` after it is then
 * skipped, so the caller sees the fault rather than "no transaction is active".
 */
function guarded (
  database: BetterSqlite, health: DependencyHealth | undefined, gone: () => Error | undefined
): SqliteDatabase {
  // Only a write committed shows the file takes writes again: reads, and writes of a transaction
  // that then fails, succeed on a full disk.
  const run = <T>(work: () => T, write = false): T => {
    const removed = gone()
    if (removed !== undefined) {
      health?.down(removed)
      throw storeUnavailable(removed)
    }
    try {
      const result = work()
      if (write && !database.inTransaction) health?.up()
      return result
    } catch (error) {
      if (!isSqliteUnavailable(error)) throw error
      health?.down(error)
      throw storeUnavailable(error)
    }
  }
  const statements = new Map<string, SqliteStatement>()
  return {
    close: () => { statements.clear(); database.close() },
    prepare: (text: string) => {
      let statement = statements.get(text)
      if (statement === undefined) {
        if (statements.size >= STATEMENT_CACHE_SIZE) statements.clear()
        const prepared = run(() => database.prepare(text))
        const rollback = text === 'rollback'
        const write = !prepared.reader && !rollback && text !== 'begin'
        statement = {
          reader: prepared.reader,
          all: parameters => run(() => prepared.all(parameters), write),
          run: parameters =>
            rollback && !database.inTransaction ? NOTHING_CHANGED : run(() => prepared.run(parameters), write),
          /* c8 ignore next -- Kysely iterates only for a streamed query (`.stream()`), which the store never asks */
          iterate: parameters => run(() => prepared.iterate(parameters))
        }
        statements.set(text, statement)
      }
      return statement
    }
  }
}
