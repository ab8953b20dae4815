import type { Kysely, Transaction } from 'kysely'
import type { Database } from './database.js'
import type { StoreEngine } from './connect.js'

export type Executor = Kysely<Database> | Transaction<Database>

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

  constructor (readonly db: Kysely<Database>, readonly engine: StoreEngine) {}

  async write<T> (work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
    const result = await this.db.transaction().execute(work)
    this.generation++
    return result
  }

  /** A single-statement write: statistics are recomputed after it. */
  wrote (): void {
    this.generation++
  }
}
