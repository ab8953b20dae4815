import { createHash } from 'node:crypto'
import { addDays } from '../schemas/calendar.js'
import {
  type CashEventType, type EventsRead, type ProviderCashEvent, type ProviderStockEvent, type StockEventType
} from '../schemas/corporate-events.js'
import { decimal, type Decimal } from '../schemas/money.js'

/*
 * What the service makes of a symbol's corporate events (docs/api.md#corporate-events): which it applies, and how.
 */

/** Shares after ÷ shares before, exact: `b` shares become `a`. */
interface Ratio {
  after: Decimal
  before: Decimal
}

/** A split, a grouping or a bonus issue, applied. */
export interface StockEvent {
  kind: 'stock'
  type: StockEventType
  /** The data com (`YYYY-MM-DD`): what is held at its end is entitled. */
  dataCom: string
  /** When it takes effect: its ex-date, else the day after the data com. */
  effective: string
  ratio: Ratio
}

/** A dividend, a JCP or a rendimento, applied. */
export interface CashEvent {
  kind: 'cash'
  type: CashEventType
  dataCom: string
  /** Its ex-date, else the day after the data com. */
  effective: string
  paymentDate: string | null
  /** Per share on the scale of the provider's adjusted prices; `null` when only `rawRate` was given. */
  rate: Decimal | null
  /** Per share on the day's scale; `null` when the provider gave none. */
  rawRate: Decimal | null
}

export type CorporateEvent = StockEvent | CashEvent

/** An event the service does not apply, and why (the asset answers `eventsUnapplied`, and one warning names it). */
interface UnappliedEvent {
  label: string
  /** Its data com; `null` when it has none the service can read. */
  dataCom: string | null
  why: string
}

/** A symbol's events as the service applies them: each list by date (stock events by effect, cash by data com). */
export interface EventBook {
  stock: readonly StockEvent[]
  cash: readonly CashEvent[]
  unapplied: readonly UnappliedEvent[]
  /** When they were read of the provider (ISO 8601); `null` when never (a symbol without events to ask). */
  asOf: string | null
}

export const NO_EVENTS: EventBook = { stock: [], cash: [], unapplied: [], asOf: null }

const STOCK_LABELS: Readonly<Record<string, StockEventType>> = {
  DESDOBRAMENTO: 'SPLIT', GRUPAMENTO: 'REVERSE_SPLIT', BONIFICACAO: 'BONUS'
}
const CASH_LABELS: Readonly<Record<string, CashEventType>> = {
  DIVIDENDO: 'DIVIDEND', JCP: 'JCP', RENDIMENTO: 'INCOME'
}

/** A ratio beyond these is taken for the provider's mistake, not a market's event. */
const LARGEST_RATIO = 1000

/** `a para b` (b shares become a; a decimal comma read as a point), else undefined. */
const COMPLETE_FACTOR = /^\s*(\d+(?:[.,]\d+)?)\s+para\s+(\d+(?:[.,]\d+)?)\s*$/i

/** The data com, else the eve of the ex-date; and the effect, the ex-date else the day after the data com. */
function datesOf (event: { lastDatePrior: string | null, exDate: string | null }): [string, string] | string {
  const dataCom = event.lastDatePrior ?? (event.exDate === null ? null : addDays(event.exDate, -1))
  if (dataCom === null) return 'no data com'
  const effective = event.exDate ?? addDays(dataCom, 1)
  return effective > dataCom ? [dataCom, effective] : 'an ex-date not after its data com'
}

/** The ratio of a stock event: its completeFactor, else its factor as its label reads it. */
function ratioOf (type: StockEventType, event: ProviderStockEvent): Ratio | string {
  const complete = COMPLETE_FACTOR.exec(event.completeFactor ?? '')
  if (complete !== null) {
    const [after, before] = [decimal(complete[1]!.replace(',', '.')), decimal(complete[2]!.replace(',', '.'))]
    return after.gt(0) && before.gt(0) ? { after, before } : 'a completeFactor of no shares'
  }
  if (event.factor === null || event.factor <= 0) return 'no ratio'
  const factor = decimal(event.factor)
  if (type !== 'BONUS') return { after: factor, before: decimal(1) }
  // New shares per share: 0.1 is 10 %; above 1 it is the percent itself (10 → 10 %).
  return { after: decimal(1).plus(factor.gt(1) ? factor.div(100) : factor), before: decimal(1) }
}

function stockEventOf (event: ProviderStockEvent): StockEvent | string {
  const type = STOCK_LABELS[event.label]
  if (type === undefined) return 'an unknown label'
  const dates = datesOf(event)
  if (typeof dates === 'string') return dates
  const ratio = ratioOf(type, event)
  if (typeof ratio === 'string') return ratio
  const { after, before } = ratio
  if (after.gt(before.times(LARGEST_RATIO)) || before.gt(after.times(LARGEST_RATIO))) {
    return 'a ratio outside 1/1000 to 1000'
  }
  const raises = after.gt(before)
  if (raises !== (type !== 'REVERSE_SPLIT') || after.eq(before)) return 'a ratio against its label'
  return { kind: 'stock', type, dataCom: dates[0], effective: dates[1], ratio }
}

function rateOf (value: number | null): Decimal | null | string {
  if (value === null) return null
  return value < 0 ? 'a negative rate' : decimal(value)
}

function cashEventOf (event: ProviderCashEvent): CashEvent | string {
  const type = CASH_LABELS[event.label]
  if (type === undefined) return 'an unknown label'
  const dates = datesOf(event)
  if (typeof dates === 'string') return dates
  const [rate, rawRate] = [rateOf(event.rate), rateOf(event.rawRate)]
  if (typeof rate === 'string' || typeof rawRate === 'string') return 'a negative rate'
  if (rate === null && rawRate === null) return 'no rate'
  return { kind: 'cash', type, dataCom: dates[0], effective: dates[1], paymentDate: event.paymentDate, rate, rawRate }
}

function byDate<T> (dateOf: (item: T) => string): (a: T, b: T) => number {
  return (a, b) => (dateOf(a) < dateOf(b) ? -1 : dateOf(a) > dateOf(b) ? 1 : 0)
}

/** The events of one read as the service applies them; `unapplied`, those it cannot, each with why. */
export function eventBookOf (read: EventsRead): EventBook {
  const stock: StockEvent[] = []
  const cash: CashEvent[] = []
  const unapplied: UnappliedEvent[] = []
  const sort = <E extends { label: string, lastDatePrior: string | null }, A> (
    events: readonly E[], apply: (event: E) => A | string, into: A[]
  ): void => {
    for (const event of events) {
      const applied = apply(event)
      if (typeof applied !== 'string') into.push(applied)
      else unapplied.push({ label: event.label, dataCom: event.lastDatePrior, why: applied })
    }
  }
  sort(read.events.stock, stockEventOf, stock)
  sort(read.events.cash, cashEventOf, cash)
  return {
    stock: stock.sort(byDate(event => event.effective)),
    cash: cash.sort(byDate(event => event.dataCom)),
    unapplied,
    asOf: read.asOf
  }
}

/**
 * What an asset's stored position was computed with, as of `today`: the stock events in effect by then and the
 * events unapplied by then, as one short text ('' for none), so that a refresh tells a stale position by comparing
 * texts (src/domain/events-refresh.ts).
 */
export function digestOf (book: EventBook, today: string): string {
  const applied = book.stock.filter(event => event.effective <= today)
    .map(event => `${event.type} ${event.dataCom} ${event.effective} ${event.ratio.after}/${event.ratio.before}`)
  const unapplied = book.unapplied.filter(event => event.dataCom === null || event.dataCom <= today)
    .map(event => `${event.label} ${event.dataCom ?? ''} ${event.why}`)
  if (applied.length + unapplied.length === 0) return ''
  return createHash('sha256').update([...applied, '|', ...unapplied].join('\n')).digest('base64url').slice(0, 22)
}
