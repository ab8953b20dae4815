import { InsufficientQuantityError, PositionTooLargeError } from '../errors.js'
import { averagePrice, type Position, type Trade } from '../schemas/average-cost.js'
import { decimal, positionValue, toCents, type Decimal } from '../schemas/money.js'
import type { LockedAsset, PositionColumns, RecordedTrade, UnitOfWork } from './ports.js'
import { replay, type Entry } from './replay.js'

/*
 * The rules every write of an asset's position shares (docs/api.md#transactions), applied inside the write's unit
 * of work, on the asset's row read under its lock: the order transactions count in and the sale of more than is
 * held (src/domain/replay.ts), the bound of a value, the reconciliation of what the previous version wrote.
 */

/**
 * The largest value of one asset, and of one transaction: 10 trillion BRL. Sums of such values
 * stay exact integers of cents in the database and in a JavaScript number.
 */
const MAX_POSITION_VALUE = 1e13

/** `quantity × price` in integer cents; over the maximum, BAD_REQUEST (the write fails and nothing is written). */
function valueCents (quantity: number, price: number): number {
  const value = positionValue(quantity, price)
  if (value.gt(MAX_POSITION_VALUE)) throw new PositionTooLargeError(String(MAX_POSITION_VALUE))
  return toCents(value)
}

/** What the asset's row keeps of `quantity` held at `price`, its value bounded. */
export function positionAt (quantity: number, price: number): PositionColumns {
  return { quantity, price, valueCents: valueCents(quantity, price) }
}

/** What the asset's row keeps of a replayed position: the quantity held and its average price. */
export function positionColumns (position: Position): PositionColumns {
  return positionAt(position.quantity.toNumber(), averagePrice(position).toNumber())
}

/** `trade` as it may be recorded: its own value bounded like an asset's, so its `totalValue` and sums stay exact. */
export function bounded<T extends Trade> (trade: T): T {
  valueCents(trade.quantity, trade.price)
  return trade
}

/** The position `entries` make (src/domain/replay.ts); a sale of more than is held then: INSUFFICIENT_QUANTITY. */
export function heldAfter (entries: readonly Entry[]): Position {
  const { after, shortAt } = replay(entries)
  if (shortAt !== undefined) throw new InsufficientQuantityError(shortAt)
  return after
}

/** The place in the order recorded of a transaction recorded after `recorded`. */
export function nextSeq (recorded: readonly RecordedTrade[]): number {
  return recorded.reduce((last, trade) => Math.max(last, trade.seq), 0) + 1
}

/** The day (`YYYY-MM-DD`, UTC) of an ISO 8601 instant: a write's `now` dates what it records today. */
export function dayOf (instant: string): string {
  return instant.slice(0, 10)
}

/**
 * A change of the quantity held by `difference` as a trade (a PATCH's: docs/api.md#transactions): a BUY of a gain, a
 * SELL of a loss, dated the day of `now`, at `price`, without a fee.
 */
export function quantityChange (difference: Decimal, price: number, now: string): Trade {
  const type = difference.gt(0) ? 'BUY' : 'SELL'
  return { type, date: dayOf(now), quantity: difference.abs().toNumber(), price, fee: 0 }
}

/**
 * Inside a write holding the asset's row: its transactions in the order they count, after recording what makes
 * them hold the quantity its row holds, if they do not. Only the previous version leaves a difference — it kept buy
 * lots, not transactions — when it wrote during a rolling deployment (docs/deploy.md#migrations): the difference
 * is recorded as a PATCH of quantity records it now, a BUY or SELL dated today at the asset's price.
 */
export async function reconciledTrades (work: UnitOfWork, { value: asset }: LockedAsset): Promise<RecordedTrade[]> {
  const recorded = await work.trades.of(asset.id)
  // Exact: the quantities of the row and of the replay both have at most 8 decimals.
  const difference = decimal(asset.quantity).minus(heldAfter(recorded).quantity)
  if (difference.eq(0)) return recorded
  const seq = nextSeq(recorded)
  const trade = bounded(quantityChange(difference, asset.price, work.now))
  const { id } = await work.trades.insert(asset.id, trade, seq)
  return [...recorded, { ...trade, id, seq, investmentTransactionId: null, estimated: false }]
}
