import { InsufficientQuantityError, PositionTooLargeError } from '../errors.js'
import { averagePrice, type Position, type Trade } from '../schemas/average-cost.js'
import { decimal, positionValue, toCents, type Decimal } from '../schemas/money.js'
import { digestOf } from './corporate-events.js'
import type { LockedAsset, PositionColumns, RecordedTrade, UnitOfWork } from './ports.js'
import { replay, Replay, type ReplayedEvents } from './replay.js'

/*
 * The rules every write of an asset's position shares (docs/api.md#transactions), applied inside the write's unit
 * of work, on the asset's row read under its lock: the order transactions count in and the sale of more than is
 * held (src/domain/replay.ts), the corporate events they are replayed with (docs/api.md#corporate-events), the bound
 * of a value, the reconciliation of what the previous version wrote.
 */

/** What the asset's row keeps of the corporate events its position follows. */
export type EventColumns = Pick<PositionColumns, 'eventsDigest' | 'eventsUnapplied' | 'eventsAsOf'>

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

/** What the asset's row keeps of `quantity` held at `price`, its value bounded, and of the events it follows. */
export function positionAt (quantity: number, price: number, events: EventColumns): PositionColumns {
  return { quantity, price, valueCents: valueCents(quantity, price), ...events }
}

/** What the asset's row keeps of a replayed position: the quantity held and its average price. */
export function positionColumns (position: Position, events: EventColumns): PositionColumns {
  return positionAt(position.quantity.toNumber(), averagePrice(position).toNumber(), events)
}

/** The row's columns of `events`: their digest as of their day, when they were read, and whether one was unapplied. */
export function eventColumns ({ book, today }: ReplayedEvents, unapplied: boolean): EventColumns {
  return { eventsDigest: digestOf(book, today), eventsUnapplied: unapplied, eventsAsOf: book.asOf }
}

/** `trade` as it may be recorded: its own value bounded like an asset's, so its `totalValue` and sums stay exact. */
export function bounded<T extends Trade> (trade: T): T {
  valueCents(trade.quantity, trade.price)
  return trade
}

/** The position `trades` and `events` make (src/domain/replay.ts); a sale of more than held: INSUFFICIENT_QUANTITY. */
function heldAfter (trades: readonly Trade[], events?: ReplayedEvents): Position {
  const { after, shortAt } = replay(trades, events)
  if (shortAt !== undefined) throw new InsufficientQuantityError(shortAt)
  return after
}

/** Whether `trades` held anything at the end of an event's data com the service does not apply (or of no data com). */
function entitledToUnapplied (trades: readonly Trade[], { book, today }: ReplayedEvents): boolean {
  const dates = book.unapplied.map(event => event.dataCom).filter(date => date === null || date <= today)
  if (dates.includes(null)) return trades.length > 0
  const replayed = new Replay(trades)
  return (dates as string[]).sort().some(date => replayed.through(date).quantity.gt(0))
}

/**
 * The position of an asset's trades after a write (`next`: its trades before it, `before`, and the write's) with its
 * symbol's events, and the row's columns of them (docs/api.md#corporate-events). When the trades before it already
 * sell, at some date, more than the stock events leave held (a sale recorded before a grouping was known), its stock
 * events are left unapplied (`eventsUnapplied`) until its trades agree with them; a write that makes them so is
 * INSUFFICIENT_QUANTITY, as one that sells more than is held without them.
 */
export function positionWithEvents (
  before: readonly Trade[], next: readonly Trade[], events: ReplayedEvents
): { position: Position, events: EventColumns } {
  const withThem = replay(next, events)
  if (withThem.shortAt === undefined) {
    return { position: withThem.after, events: eventColumns(events, entitledToUnapplied(next, events)) }
  }
  if (replay(before, events).shortAt === undefined) throw new InsufficientQuantityError(withThem.shortAt)
  const withoutStock: ReplayedEvents = { book: { ...events.book, stock: [] }, today: events.today }
  return { position: heldAfter(next, withoutStock), events: eventColumns(events, true) }
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
 * them hold the quantity its row holds, if they do not. Only the version before transactions leaves a difference —
 * it kept buy lots, not transactions — when it wrote during a rolling deployment (docs/deploy.md#migrations): the
 * difference is recorded as a PATCH of quantity records it now, a BUY or SELL dated today at the asset's price. A
 * row computed with corporate events (its digest not '') was written by this version since, which records every
 * trade: there is nothing to reconcile.
 */
export async function reconciledTrades (
  work: UnitOfWork, { value: asset, eventsDigest }: LockedAsset
): Promise<RecordedTrade[]> {
  const recorded = await work.trades.of(asset.id)
  if (eventsDigest !== '') return recorded
  // Exact: the quantities of the row and of the replay both have at most 8 decimals.
  const difference = decimal(asset.quantity).minus(heldAfter(recorded).quantity)
  if (difference.eq(0)) return recorded
  const seq = nextSeq(recorded)
  const trade = bounded(quantityChange(difference, asset.price, work.now))
  const { id } = await work.trades.insert(asset.id, trade, seq)
  return [...recorded, { ...trade, id, seq, investmentTransactionId: null, estimated: false }]
}
