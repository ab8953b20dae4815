import { CompiledQuery, type Kysely, type Transaction } from 'kysely'
import type { Database } from './database.js'
import type { StoreEngine } from './connect.js'
import { Listeners, type PortfolioChange } from './changes.js'

export type Executor = Kysely<Database> | Transaction<Database>

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

  constructor (readonly db: Kysely<Database>, readonly engine: StoreEngine) {}

  async write<T> (work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
    const result = await this.db.transaction().execute(work)
    this.generation++
    return result
  }

  /** Tells the listeners of {@link portfolioChanges}: call it once the write that changed the portfolio committed. */
  changedPortfolio (portfolioId: string, deleted = false): void {
    this.portfolioChanges.emit({ kind: 'portfolio', portfolioId, deleted })
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
    return this.engine === 'postgres' ? text.replace(/\?/g, () => `$${++index}`) : text
  }

  /**
   * A list bound as one parameter (of a {@link statement}, or of a builder's `sql` fragment): JSON text for
   * SQLite's `json_each(?)`, an array for PostgreSQL's `any(?)`.
   */
  listParameter (values: readonly string[]): unknown {
    return this.engine === 'postgres' ? values : JSON.stringify(values)
  }
}
