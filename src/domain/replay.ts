import { afterTrade, NO_POSITION, type Position, type Trade } from '../schemas/average-cost.js'
import { decimal, quotient, UNIT_DECIMALS, type Decimal } from '../schemas/money.js'
import type { CorporateEvent, EventBook, StockEvent } from './corporate-events.js'

/** The end of an event's data com: what is held then is what the event counts (docs/api.md#corporate-events). */
interface DataCom {
  type: 'DATA_COM'
  date: string
  event: CorporateEvent
}

/** A split, grouping or bonus issue taking effect: (ratio − 1) × what was held at its data com is added. */
interface StockEffect {
  type: 'STOCK_EVENT'
  date: string
  event: StockEvent
}

/**
 * What a position is replayed from (docs/api.md#average-cost, docs/api.md#corporate-events): dated entries, each of a
 * kind its `type` tells — a trade (BUY, SELL), a stock event taking effect, the end of an event's data com — replayed
 * in one order. Every position the service computes is replayed here: a write's (src/domain/holdings.ts), the
 * dashboard's at the end of each month, the performance's at each day, the income's at each data com.
 */
export type Entry = Trade | StockEffect | DataCom

/** Of one date: a stock event takes effect first (a trade of its ex-date is on the new basis), a data com ends last. */
const RANKS: Readonly<Record<Entry['type'], number>> = { STOCK_EVENT: 0, BUY: 1, SELL: 1, DATA_COM: 2 }

/** By date, then by {@link RANKS}; entries of one date and rank keep the order they were given in (as recorded). */
function inOrder (a: Entry, b: Entry): number {
  if (a.date !== b.date) return a.date < b.date ? -1 : 1
  return RANKS[a.type] - RANKS[b.type]
}

/** The events a replay counts as of `today`: those whose data com has ended, stock ones in effect by `today`. */
export interface ReplayedEvents {
  book: EventBook
  today: string
}

/** `trades` and, as of `today`, the entries of `book`'s events. */
function entriesOf (trades: readonly Trade[], events: ReplayedEvents | undefined): Entry[] {
  if (events === undefined || (events.book.stock.length === 0 && events.book.cash.length === 0)) return [...trades]
  const { book, today } = events
  const entries: Entry[] = [...trades]
  for (const event of [...book.stock, ...book.cash]) {
    if (event.dataCom <= today) entries.push({ type: 'DATA_COM', date: event.dataCom, event })
  }
  for (const event of book.stock) {
    if (event.effective <= today) entries.push({ type: 'STOCK_EVENT', date: event.effective, event })
  }
  return entries
}

/**
 * A position replayed entry by entry in the order they count: by date, then as recorded (`Array#sort` is stable, so
 * entries of one date given in the order recorded — an asset's transactions by `seq`, a new one last — keep it).
 * A sale of more than is held at its date, or a grouping that takes more than is held at its effect, stops the
 * replay: {@link shortAt} is that date, and the position stays what it was before it.
 */
export class Replay {
  private readonly entries: readonly Entry[]
  private next = 0
  private position: Position = NO_POSITION
  private short: string | undefined
  /** What each event's data com left held, once the replay has passed it. */
  private readonly entitled = new Map<CorporateEvent, Decimal>()

  /** `trades` in any order of dates, those of one date in the order recorded; `events`, as of their `today`. */
  constructor (trades: readonly Trade[], events?: ReplayedEvents) {
    this.entries = entriesOf(trades, events).sort(inOrder)
  }

  /**
   * The position after every entry dated up to `until`, a day (`YYYY-MM-DD`) or a month (`YYYY-MM`), included;
   * after all of them when `until` is absent. Each call goes on from the last: `until` never moves back. A
   * performance calls it for each day of each holding (7 000 days since 2006): compared as text, without a copy.
   */
  through (until?: string): Position {
    // Every day of a month sorts at or before its `-31`, and every day of the next one after it.
    const last = until === undefined || until.length > 7 ? until : `${until}-31`
    for (; this.short === undefined && this.next < this.entries.length; this.next++) {
      const entry = this.entries[this.next] as Entry
      if (last !== undefined && entry.date > last) break
      this.apply(entry)
    }
    return this.position
  }

  /** The date of the first sale (or grouping) of more than was held then, once the replay has reached it. */
  get shortAt (): string | undefined {
    return this.short
  }

  /** What was held at the end of `event`'s data com, once the replay has passed it; else undefined. */
  heldAt (event: CorporateEvent): Decimal | undefined {
    return this.entitled.get(event)
  }

  private apply (entry: Entry): void {
    switch (entry.type) {
      case 'DATA_COM':
        this.entitled.set(entry.event, this.position.quantity)
        return
      case 'STOCK_EVENT': {
        const held = this.entitled.get(entry.event) ?? decimal(0)
        const quantity = quantityAfter(this.position.quantity, held, entry.event)
        if (quantity.lt(0)) this.short = entry.date
        else this.position = { ...this.position, quantity }
        return
      }
      default:
        if (entry.type === 'SELL' && decimal(entry.quantity).gt(this.position.quantity)) {
          this.short = entry.date
          return
        }
        this.position = afterTrade(this.position, entry)
    }
  }
}

/**
 * `quantity` once `event` takes effect on `held` (what its data com left held): quantity + held × (ratio − 1), to 8
 * decimals half away from zero. With no trade between the data com and the effect it is quantity × ratio.
 */
function quantityAfter (quantity: Decimal, held: Decimal, event: StockEvent): Decimal {
  const { after, before } = event.ratio
  return quotient(quantity.times(before).plus(held.times(after.minus(before))), before, UNIT_DECIMALS)
}

/** A replay to the end: the position after every entry, or the date of the first sale of more than was held. */
interface Replayed {
  /** After every entry; when one sold more than was held, before that one. */
  after: Position
  shortAt: string | undefined
}

/** Every entry of `trades` and `events` replayed (trades of one date given in the order recorded). */
export function replay (trades: readonly Trade[], events?: ReplayedEvents): Replayed {
  const replayed = new Replay(trades, events)
  return { after: replayed.through(), shortAt: replayed.shortAt }
}
