import { CompiledQuery, type Kysely, type Transaction } from 'kysely'
import { qualifiedTables, type Database } from './database.js'
import type { StoreEngine } from './connect.js'
import { Listeners, type Announcer, type PortfolioChange } from '../change-feed/change-events.js'

type Executor = Kysely<Database> | Transaction<Database>

/**
 * What a write tells of its changes, inside its transaction: each portfolio it changed (or deleted),
 * or `all` of them. The changes are announced to the other instances if and only if the write
 * commits (docs/deploy.md#poolers), and told to this instance's listeners once it has.
 */
export interface Announce {
  portfolio: (portfolioId: string, deleted?: boolean) => void
  all: () => void
}

/** A {@link StoreHandle.statement}: its parameters in order, run on the store or inside a transaction. */
export type Statement<Row> = (parameters: readonly unknown[], executor?: Executor) => Promise<Row[]>
/** A {@link StoreHandle.changes} statement: how many rows it changed. */
export type Changes = (parameters: readonly unknown[], executor?: Executor) => Promise<number>

export function now (): string {
  return new Date().toISOString()
}

/**
 * The Kysely handle the repositories share, and the write counter statistics depend on: every
 * multi-row write goes through {@link write}, which bumps it after the transaction commits.
 */
export class StoreHandle {
  /** Bumped by every committed write of this instance. */
  generation = 0
  /** The portfolio changes this instance committed, told once each write has committed. */
  readonly portfolioChanges = new Listeners<PortfolioChange>()
  /** Set by a change feed that announces changes inside the writes' transactions (PostgreSQL's). */
  announcer: Announcer | undefined

  /** `schema`: DATABASE_SCHEMA, which `db` already names in the builder's queries (Kysely's `withSchema`). */
  constructor (readonly db: Kysely<Database>, readonly engine: StoreEngine, readonly schema?: string) {}

  /**
   * A write in one transaction. `work` tells what it changed through `announce`; the change feed's
   * announcement runs at the end of the transaction, after `work` (one statement, only when something
   * changed, and when the feed has one: PostgreSQL's `pg_notify`), and the listeners of
   * {@link portfolioChanges} hear each change once the transaction has committed. Measured
   * (`bench/feed-costs.ts`): an asset update 2.06 ms without the statement, 2.09 ms with it; a
   * portfolio's create announces nothing (nothing can hold a portfolio before it exists), 0.07 ms either way.
   */
  async write<T> (work: (trx: Transaction<Database>, announce: Announce) => Promise<T>): Promise<T> {
    const changes: PortfolioChange[] = []
    const announce: Announce = {
      portfolio: (portfolioId, deleted = false) => { changes.push({ kind: 'portfolio', portfolioId, deleted }) },
      all: () => { changes.push({ kind: 'all' }) }
    }
    const result = await this.db.transaction().execute(async trx => {
      const result = await work(trx, announce)
      const announcement = changes.length > 0 ? this.announcer?.(changes) : undefined
      if (announcement !== undefined) {
        await trx.executeQuery(CompiledQuery.raw(announcement.sql, announcement.parameters))
      }
      return result
    })
    this.generation++
    for (const change of changes) this.portfolioChanges.emit(change)
    return result
  }

  /** A single-statement write: statistics are recomputed after it. */
  wrote (): void {
    this.generation++
  }

  /**
   * A hot-path statement, written once with `?` placeholders and compiled for the engine once
   * (PostgreSQL's `$1, $2…`), instead of built by the query builder on every request. On SQLite
   * the driver's statement cache then reuses one prepared statement for it. Answers its rows.
   */
  statement<Row> (text: string): Statement<Row> {
    const sql = this.compile(text)
    // Inside a transaction, the transaction's executor: on SQLite the one connection is its until it ends.
    return async (parameters, executor = this.db) =>
      (await executor.executeQuery<Row>(CompiledQuery.raw(sql, [...parameters]))).rows
  }

  /**
   * A write {@link statement} that answers how many rows it changed, as the driver counts them (an update's
   * matched rows): what the builder's `numUpdatedRows` and `numDeletedRows` are.
   */
  changes (text: string): Changes {
    const sql = this.compile(text)
    return async (parameters, executor = this.db) =>
      Number((await executor.executeQuery(CompiledQuery.raw(sql, [...parameters]))).numAffectedRows ?? 0n)
  }

  private compile (text: string): string {
    let index = 0
    const qualified = this.schema === undefined ? text : qualifiedTables(text, this.schema)
    return this.engine === 'postgres' ? qualified.replace(/\?/g, () => `$${++index}`) : qualified
  }

  /**
   * A list bound as one parameter (of a {@link statement}, or of a builder's `sql` fragment): JSON text for
   * SQLite's `json_each(?)`, an array for PostgreSQL's `any(?)`.
   */
  listParameter (values: readonly string[]): unknown {
    return this.engine === 'postgres' ? values : JSON.stringify(values)
  }
}
