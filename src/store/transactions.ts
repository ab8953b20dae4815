import { randomUUID } from 'node:crypto'
import type { Transaction } from 'kysely'
import type { Database } from './database.js'
import type { StoreHandle } from './handle.js'
import { among, toTransaction } from './rows.js'
import type { Trade } from '../schemas/average-cost.js'
import type { Page } from '../schemas/common.js'
import type { AssetTransaction } from '../schemas/transaction.js'

/**
 * The dated buys and sales of assets (docs/api.md#transactions), read in the order they count: by date, then as
 * recorded (`seq`). They are written inside the domain's writes ({@link TradeRows}), which decide what is recorded.
 * Queries are built with Kysely (docs/style.md#query-style).
 */
export class TransactionRepository {
  constructor (private readonly handle: StoreHandle) {}

  /** A page of the asset's transactions in the order they count; `undefined` when there is no such asset. */
  async list (assetId: string, page: Page): Promise<AssetTransaction[] | undefined> {
    const db = this.handle.db
    const asset = await db.selectFrom('portfolio_assets').select('id').where('id', '=', assetId).executeTakeFirst()
    if (asset === undefined) return undefined
    const rows = await db.selectFrom('asset_transactions').selectAll().where('asset_id', '=', assetId)
      .orderBy('date').orderBy('seq').limit(page.limit).offset(page.offset).execute()
    return rows.map(toTransaction)
  }

  /** The transactions of several assets in one statement, each asset's in the order they count. */
  async ofAssets (assetIds: readonly string[]): Promise<Map<string, AssetTransaction[]>> {
    const byAsset = new Map<string, AssetTransaction[]>(assetIds.map(id => [id, []]))
    if (byAsset.size === 0) return byAsset
    const rows = await this.handle.db.selectFrom('asset_transactions').selectAll()
      .where(among(this.handle, 'asset_id', [...byAsset.keys()]))
      .orderBy('asset_id').orderBy('date').orderBy('seq').execute()
    for (const row of rows) byAsset.get(row.asset_id)?.push(toTransaction(row))
    return byAsset
  }

  /** The transactions' rows of the write `trx`, whose rows are stamped `now`. */
  rowsIn (trx: Transaction<Database>, now: string): TradeRows {
    return new TradeRows(trx, now)
  }
}

/** Where a transaction came from: the investment transaction an import recorded it as, or an import's estimate. */
interface Origin {
  investmentTransactionId: string | null
  estimated: boolean
}

/** A transaction as a write reads it: its id, its place in the order recorded, and where it came from. */
type Recorded = Origin & { id: string, seq: number }

/** Rows of one insert of an import's trades: 11 parameters each, far under either engine's limit (SQLite 32 766). */
const ROWS_PER_INSERT = 500

/**
 * Transactions' rows inside a write of the domain (the `trades` of its unit of work: src/domain/ports.ts), whose
 * asset's row the write holds: what they read and write, and no rule.
 */
export class TradeRows {
  constructor (private readonly trx: Transaction<Database>, private readonly now: string) {}

  /**
   * The asset's transactions in the order they count, each with its place in the order recorded, and where it
   * came from: the investment transaction it was imported from, whether an import estimated it.
   */
  async of (assetId: string): Promise<Array<Trade & Recorded>> {
    const rows = await this.trx.selectFrom('asset_transactions')
      .select(['id', 'seq', 'type', 'date', 'quantity', 'price', 'fee', 'investment_transaction_id', 'estimated'])
      .where('asset_id', '=', assetId).orderBy('date').orderBy('seq').execute()
    return rows.map(({ investment_transaction_id: investmentTransactionId, estimated, ...trade }) =>
      ({ ...trade, investmentTransactionId, estimated: Number(estimated) === 1 }))
  }

  /** Records `trade` at `seq`; an import's, with the investment transaction it is, or estimated. */
  async insert (assetId: string, trade: Trade, seq: number, imported?: Origin): Promise<AssetTransaction> {
    const row = this.rowOf(assetId, trade, seq, imported)
    await this.trx.insertInto('asset_transactions').values(row).execute()
    return toTransaction(row)
  }

  /**
   * Records an import's trades of the asset, each at its `seq`, in statements of {@link ROWS_PER_INSERT} rows: with a
   * statement a trade, an import of 1 000 trades took 290–350 ms of CPU and 1.1–1.6 s on PostgreSQL, against
   * 135–147 ms and 0.3–0.5 s so (bench/imports.ts, BENCHMARKS.md).
   */
  async insertAll (assetId: string, trades: ReadonlyArray<{ trade: Trade, seq: number, imported: Origin }>) {
    for (let start = 0; start < trades.length; start += ROWS_PER_INSERT) {
      const rows = trades.slice(start, start + ROWS_PER_INSERT)
        .map(({ trade, seq, imported }) => this.rowOf(assetId, trade, seq, imported))
      await this.trx.insertInto('asset_transactions').values(rows).execute()
    }
  }

  private rowOf (assetId: string, { type, date, quantity, price, fee }: Trade, seq: number, imported?: Origin) {
    return {
      id: randomUUID(),
      asset_id: assetId,
      type,
      date,
      seq,
      quantity,
      price,
      fee,
      created_at: this.now,
      investment_transaction_id: imported?.investmentTransactionId ?? null,
      estimated: imported?.estimated === true ? 1 : 0
    }
  }

  async delete (id: string): Promise<void> {
    await this.trx.deleteFrom('asset_transactions').where('id', '=', id).execute()
  }
}
