import { randomUUID } from 'node:crypto'
import type { Selectable, Transaction } from 'kysely'
import type { Database, ImportStatus, ImportsTable } from './database.js'
import type { StoreEngine } from './connect.js'
import type { StoreHandle } from './handle.js'
import type { Page } from '../schemas/common.js'
import { MAX_SKIPPED_LISTED, type InvestmentImport, type SkippedInvestment } from '../schemas/import.js'

type Row = Selectable<ImportsTable>

/** An import not ended yet, with the investments it wrote, which an attempt after a failure goes on after. */
interface PendingImport {
  record: InvestmentImport
  written: string[]
}

/** What one investment's write added to its import. */
interface InvestmentWritten {
  investmentId: string
  assetsCreated: number
  assetsUpdated: number
  transactionsRecorded: number
  skipped: readonly SkippedInvestment[]
}

function importOf (row: Row): InvestmentImport {
  const skipped = JSON.parse(row.skipped) as SkippedInvestment[]
  return {
    id: row.id,
    portfolioId: row.portfolio_id,
    itemId: row.item_id,
    status: row.status,
    createdAt: row.created_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    counts: {
      investments: Number(row.investments),
      assetsCreated: Number(row.assets_created),
      assetsUpdated: Number(row.assets_updated),
      transactionsRecorded: Number(row.transactions_recorded),
      skipped: skipped.length
    },
    skipped: skipped.slice(0, MAX_SKIPPED_LISTED),
    error: row.error
  }
}

function pendingOf (row: Row | undefined): PendingImport | undefined {
  return row === undefined ? undefined : { record: importOf(row), written: JSON.parse(row.written) as string[] }
}

/**
 * Investment imports (docs/api.md#imports): their reads, and the changes of an import's run, each one statement.
 * What an investment's write adds to its import is written in that write's transaction ({@link ImportRows}).
 * Built with Kysely (docs/style.md#query-style).
 */
export class ImportRepository {
  constructor (private readonly handle: StoreHandle) {}

  async get (id: string): Promise<InvestmentImport | undefined> {
    const row = await this.handle.db.selectFrom('imports').selectAll().where('id', '=', id).executeTakeFirst()
    return row === undefined ? undefined : importOf(row)
  }

  /** A page of the portfolio's imports, the latest first. */
  async ofPortfolio (portfolioId: string, page: Page): Promise<InvestmentImport[]> {
    const rows = await this.handle.db.selectFrom('imports').selectAll().where('portfolio_id', '=', portfolioId)
      .orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute()
    return rows.map(importOf)
  }

  /** The item's first import not ended (queued, or running: interrupted), with what it wrote. */
  async pendingOf (itemId: string): Promise<PendingImport | undefined> {
    return pendingOf(await pendingQuery(this.handle.db, itemId).executeTakeFirst())
  }

  /** The item's queued import: the next to run (or one waiting to be tried again). */
  async queuedOf (itemId: string): Promise<InvestmentImport | undefined> {
    return await queuedOf(this.handle.db, itemId)
  }

  /** The portfolio the item's latest import went into: the one its updates are imported into. */
  async linkedPortfolio (itemId: string): Promise<string | undefined> {
    const row = await this.handle.db.selectFrom('imports').select('portfolio_id').where('item_id', '=', itemId)
      .orderBy('created_at', 'desc').orderBy('id', 'desc').limit(1).executeTakeFirst()
    return row?.portfolio_id
  }

  /** An attempt begins: running, since `at` unless it began before; the last attempt's error cleared. */
  async start (id: string, at: string): Promise<void> {
    await this.handle.db.updateTable('imports')
      .set(eb => ({ status: 'running', started_at: eb.fn.coalesce('started_at', eb.val(at)), error: null }))
      .where('id', '=', id).execute()
  }

  /** How many investments the aggregator listed for it. */
  async counted (id: string, investments: number): Promise<void> {
    await this.handle.db.updateTable('imports').set({ investments }).where('id', '=', id).execute()
  }

  /** An attempt failed and another follows: queued again, with its error. */
  async retrying (id: string, error: string): Promise<void> {
    await this.handle.db.updateTable('imports').set({ status: 'queued', error }).where('id', '=', id).execute()
  }

  /** Ends it at `at`: done, or failed with its error. */
  async finish (id: string, status: Extract<ImportStatus, 'done' | 'failed'>, at: string, error: string | null):
  Promise<InvestmentImport | undefined> {
    const row = await this.handle.db.updateTable('imports').set({ status, finished_at: at, error })
      .where('id', '=', id).returningAll().executeTakeFirst()
    return row === undefined ? undefined : importOf(row)
  }

  /** The imports' rows of the write `trx`, stamped `now`. */
  rowsIn (trx: Transaction<Database>, now: string): ImportRows {
    return new ImportRows(trx, this.handle.engine, now)
  }
}

type Executor = Transaction<Database> | StoreHandle['db']

function pendingQuery (db: Executor, itemId: string) {
  return db.selectFrom('imports').selectAll().where('item_id', '=', itemId).where('status', 'in', ['queued', 'running'])
    .orderBy('created_at').orderBy('id').limit(1)
}

async function queuedOf (db: Executor, itemId: string): Promise<InvestmentImport | undefined> {
  const row = await db.selectFrom('imports').selectAll().where('item_id', '=', itemId).where('status', '=', 'queued')
    .orderBy('created_at', 'desc').orderBy('id', 'desc').limit(1).executeTakeFirst()
  return row === undefined ? undefined : importOf(row)
}

/**
 * Imports' rows inside a write of the domain (the `imports` of its unit of work): an import asked for, and what each
 * investment's write adds to its import, in that write's transaction — so an import that fails part-way keeps
 * exactly the investments it wrote.
 */
export class ImportRows {
  constructor (
    private readonly trx: Transaction<Database>,
    private readonly engine: StoreEngine,
    private readonly now: string
  ) {}

  /** A new import, queued. */
  async insert (portfolioId: string, itemId: string): Promise<InvestmentImport> {
    const row: Row = {
      id: randomUUID(),
      portfolio_id: portfolioId,
      item_id: itemId,
      status: 'queued',
      created_at: this.now,
      started_at: null,
      finished_at: null,
      investments: 0,
      assets_created: 0,
      assets_updated: 0,
      transactions_recorded: 0,
      skipped: '[]',
      written: '[]',
      error: null
    }
    await this.trx.insertInto('imports').values(row).execute()
    return importOf(row)
  }

  /** The item's queued import: the next to run (or one waiting to be tried again). */
  async queuedOf (itemId: string): Promise<InvestmentImport | undefined> {
    return await queuedOf(this.trx, itemId)
  }

  /** Ends a queued import that another replaces: failed, with why. */
  async fail (id: string, error: string): Promise<void> {
    await this.trx.updateTable('imports').set({ status: 'failed', finished_at: this.now, error })
      .where('id', '=', id).execute()
  }

  /** Adds what an investment's write did to the import `id` (its row locked first). */
  async wrote (id: string, written: InvestmentWritten): Promise<void> {
    const query = this.trx.selectFrom('imports').select(['written', 'skipped']).where('id', '=', id)
    const row = await (this.engine === 'postgres' ? query.forUpdate() : query).executeTakeFirst()
    if (row === undefined) return
    const ids = [...JSON.parse(row.written) as string[], written.investmentId]
    const skipped = [...JSON.parse(row.skipped) as SkippedInvestment[], ...written.skipped]
    await this.trx.updateTable('imports').set(eb => ({
      assets_created: eb('assets_created', '+', written.assetsCreated),
      assets_updated: eb('assets_updated', '+', written.assetsUpdated),
      transactions_recorded: eb('transactions_recorded', '+', written.transactionsRecorded),
      written: JSON.stringify(ids),
      skipped: JSON.stringify(skipped)
    })).where('id', '=', id).execute()
  }
}
