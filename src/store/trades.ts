import { randomUUID } from 'node:crypto'
import type { Selectable, Transaction } from 'kysely'
import type { AssetTransactionsTable, Database } from './database.js'
import type { Executor } from './handle.js'
import { PositionTooLargeError } from '../errors.js'
import { averagePrice, positionOf, type Trade } from '../schemas/average-cost.js'
import { decimal, money, positionValue, toCents } from '../schemas/money.js'
import type { AssetTransaction } from '../schemas/transaction.js'

/**
 * What the asset writes share: an asset's transactions as rows, in the order they count, and the
 * asset's quantity, price and value they make (docs/api.md#transactions).
 */

export type TransactionRow = Selectable<AssetTransactionsTable>

/**
 * The largest value of one asset, and of one transaction: 10 trillion BRL. Sums of such values
 * stay exact integers of cents in the database and in a JavaScript number.
 */
const MAX_POSITION_VALUE = 1e13

/** `quantity × price` in integer cents; over the maximum the write fails (a domain error) and nothing is written. */
export function valueCents (quantity: number, price: number): number {
  const value = positionValue(quantity, price)
  if (value.gt(MAX_POSITION_VALUE)) {
    throw new PositionTooLargeError(String(MAX_POSITION_VALUE))
  }
  return toCents(value)
}

/** A transaction as answered: its `totalValue` is quantity × price to the cent. */
export function toTransaction (row: TransactionRow): AssetTransaction {
  return {
    id: row.id,
    assetId: row.asset_id,
    type: row.type,
    date: row.date,
    quantity: row.quantity,
    price: row.price,
    fee: row.fee,
    totalValue: money(positionValue(row.quantity, row.price)),
    createdAt: row.created_at
  }
}

/** In the order transactions count: by date, then as recorded. */
export function byDateThenSeq (a: TransactionRow, b: TransactionRow): number {
  return a.date < b.date ? -1 : a.date > b.date ? 1 : a.seq - b.seq
}

/** The asset's transactions in the order they count. */
async function transactionRowsOf (executor: Executor, assetId: string): Promise<TransactionRow[]> {
  return await executor.selectFrom('asset_transactions').selectAll().where('asset_id', '=', assetId)
    .orderBy('date').orderBy('seq').execute()
}

/** A new row for `trade`, recorded after `seq` others of its asset (the caller holds the asset's row). */
export function transactionRow (assetId: string, trade: Trade, seq: number, timestamp: string): TransactionRow {
  // Its own value is bounded like an asset's, so that its totalValue and every sum stay exact.
  valueCents(trade.quantity, trade.price)
  return { id: randomUUID(), asset_id: assetId, seq, created_at: timestamp, ...trade }
}

/** The highest `seq` among rows, 0 for none. */
export function lastSeq (rows: readonly TransactionRow[]): number {
  return rows.reduce((last, row) => Math.max(last, row.seq), 0)
}

export interface PositionColumns {
  quantity: number
  price: number
  value_cents: number
}

/**
 * The asset's columns that its transactions make: the quantity held after all of them, their
 * average price, and its value. A sale of more than is held at its date is INSUFFICIENT_QUANTITY;
 * a value over the maximum, BAD_REQUEST.
 */
export function positionColumns (rows: readonly TransactionRow[]): PositionColumns {
  const position = positionOf([...rows].sort(byDateThenSeq))
  const quantity = position.quantity.toNumber()
  const price = averagePrice(position).toNumber()
  return { quantity, price, value_cents: valueCents(quantity, price) }
}

/**
 * Inside a write holding the asset's row: its transactions in the order they count, after
 * recording what makes them hold `held`, the quantity its row holds, if they do not. Only the
 * previous version leaves a difference — it kept buy lots, not transactions — when it wrote
 * during a rolling deployment (docs/deploy.md#migrations): the difference is recorded as a
 * PATCH of quantity records it now, a BUY or SELL dated today at the asset's price.
 */
export async function reconciledRows (
  trx: Transaction<Database>, assetId: string, held: number, price: number, timestamp: string
): Promise<TransactionRow[]> {
  const rows = await transactionRowsOf(trx, assetId)
  const difference = decimal(held).minus(positionOf([...rows].sort(byDateThenSeq)).quantity)
  if (difference.eq(0)) return rows
  const type = difference.gt(0) ? 'BUY' : 'SELL'
  const trade: Trade = { type, date: timestamp.slice(0, 10), quantity: difference.abs().toNumber(), price, fee: 0 }
  const row = transactionRow(assetId, trade, lastSeq(rows) + 1, timestamp)
  await trx.insertInto('asset_transactions').values(row).execute()
  return [...rows, row]
}

/** Sets the asset's position columns, in the write `trx` that changed its transactions, and bumps its version. */
export async function setPosition (
  trx: Transaction<Database>,
  assetId: string,
  columns: PositionColumns,
  timestamp: string
): Promise<void> {
  await trx.updateTable('portfolio_assets')
    .set(eb => ({ ...columns, updated_at: timestamp, version: eb('version', '+', 1) }))
    .where('id', '=', assetId)
    .execute()
}
