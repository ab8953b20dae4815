import type { Position, Trade } from '../schemas/average-cost.js'
import type { AssetEvent, IncomeStatus } from '../schemas/corporate-events.js'
import { decimal, quotient, UNIT_DECIMALS, type Decimal } from '../schemas/money.js'
import type { CashEvent, CorporateEvent, EventBook, StockEvent } from './corporate-events.js'
import { Replay, type ReplayedEvents } from './replay.js'

/*
 * What an asset's trades were entitled to of its symbol's corporate events (docs/api.md#corporate-events): the
 * shares each event counts, read off the one replay, and the cash each pays.
 */

/** JCP's income tax withheld at source: 15 % of the gross. */
const JCP_WITHHELD = decimal('0.15')

/** A cash event's money for the shares it counts, each rounded to the cent once. */
export interface CashPaid {
  event: CashEvent
  /** Per share held at the data com (8 decimals). */
  rate: Decimal
  gross: Decimal
  withheld: Decimal
  /** gross − withheld. */
  net: Decimal
  status: IncomeStatus
}

/** An event the trades were entitled to: what was held at the end of its data com, and the cash it pays. */
export interface Entitlement {
  event: CorporateEvent
  held: Decimal
  cash: CashPaid | undefined
}

function cashOnly ({ book, today }: ReplayedEvents): ReplayedEvents {
  return { book: { ...book, stock: [] }, today }
}

/** A replay run to its end with the events its trades follow, and the positions it passed through on the way. */
export interface FollowedEvents {
  /**
   * All of them, or — when the trades sell, at some date, more than the stock events leave held (a sale recorded
   * before a grouping was known) — the cash events alone, the stock ones left unapplied as a write leaves them
   * (src/domain/holdings.ts).
   */
  events: ReplayedEvents
  /** The position at each of the `marks` it was made with, in their order. */
  positions: Position[]
  /** Run to its end: what each event's data com left held, and where a sale went short. */
  replay: Replay
}

/**
 * `trades` replayed once with the events they follow ({@link FollowedEvents}), the position taken at each of `marks`
 * (days or months, ascending) on the way: the choice, the positions and the entitlements ({@link entitlementsOf}) of
 * one replay, not one each — a dashboard of 20 assets with 93 events each replayed every asset three or four times.
 * Only trades that go short with the stock events are replayed again, with the cash ones alone.
 */
export function replayedWith (
  trades: readonly Trade[], events: ReplayedEvents, marks: readonly string[] = []
): FollowedEvents {
  const run = (applied: ReplayedEvents): FollowedEvents => {
    const replayed = new Replay(trades, applied)
    const positions = marks.map(mark => replayed.through(mark))
    replayed.through()
    return { events: applied, positions, replay: replayed }
  }
  const all = run(events)
  return all.replay.shortAt === undefined || events.book.stock.length === 0 ? all : run(cashOnly(events))
}

/** The product of the ratios of the stock events of `book` in effect after `day`, by `today`: [after, before]. */
function ratiosAfter (book: EventBook, day: string, today: string): [Decimal, Decimal] {
  let [after, before] = [decimal(1), decimal(1)]
  for (const event of book.stock) {
    if (event.effective > day && event.effective <= today) {
      after = after.times(event.ratio.after)
      before = before.times(event.ratio.before)
    }
  }
  return [after, before]
}

/**
 * What `event` pays on `held` (the shares held at the end of its data com): × its `rawRate`, on the day's scale; else
 * × its `rate`, which is on the scale of the provider's adjusted prices, so the shares are first restated by the stock
 * events in effect after the data com. Gross and withheld (15 % of a JCP's exact gross) are each rounded to the cent
 * once, half away from zero; net = gross − withheld.
 */
function cashPaid (event: CashEvent, held: Decimal, book: EventBook, today: string): CashPaid {
  const [after, before] = event.rawRate === null ? ratiosAfter(book, event.dataCom, today) : [decimal(1), decimal(1)]
  const perShare = (event.rawRate ?? event.rate ?? decimal(0)).times(after)
  const exact = held.times(perShare)
  const gross = quotient(exact, before, 2)
  const withheld = event.type === 'JCP' ? quotient(exact.times(JCP_WITHHELD), before, 2) : decimal(0)
  const paid = event.paymentDate !== null && event.paymentDate <= today
  return {
    event,
    rate: quotient(perShare, before, UNIT_DECIMALS),
    gross,
    withheld,
    net: gross.minus(withheld),
    status: paid ? 'paid' : 'announced'
  }
}

/**
 * Every event `trades` were entitled to as of `events.today` — its data com ended, something held at its end — in
 * the order of their data coms (stock events before cash ones of one data com).
 */
export function entitlements (trades: readonly Trade[], events: ReplayedEvents): Entitlement[] {
  return entitlementsOf(replayedWith(trades, events))
}

/**
 * {@link entitlements} read off a replay already run: what each data com left held is set when the replay passes it,
 * and no data com is after `today`, so the trades after it change none.
 */
export function entitlementsOf ({ events: { book, today }, replay: replayed }: FollowedEvents): Entitlement[] {
  const found: Entitlement[] = []
  const byDataCom = (a: CorporateEvent, b: CorporateEvent): number =>
    a.dataCom < b.dataCom ? -1 : a.dataCom > b.dataCom ? 1 : 0
  for (const event of [...book.stock, ...book.cash].sort(byDataCom)) {
    const held = replayed.heldAt(event)
    if (held === undefined || !held.gt(0)) continue
    found.push({ event, held, cash: event.kind === 'cash' ? cashPaid(event, held, book, today) : undefined })
  }
  return found
}

function stockAnswer (event: StockEvent, held: Decimal): AssetEvent {
  const { after, before } = event.ratio
  return {
    type: event.type,
    dataCom: event.dataCom,
    exDate: event.effective,
    paymentDate: null,
    ratio: quotient(after, before, UNIT_DECIMALS).toNumber(),
    quantityBefore: held.toNumber(),
    quantityAfter: quotient(held.times(after), before, UNIT_DECIMALS).toNumber()
  }
}

/** An entitlement as `GET /portfolio-assets/:id/events` answers it. */
export function eventAnswer ({ event, held, cash }: Entitlement): AssetEvent {
  if (event.kind === 'stock') return stockAnswer(event, held)
  const { rate, gross, withheld, net, status } = cash as CashPaid
  return {
    type: event.type,
    dataCom: event.dataCom,
    exDate: event.effective,
    paymentDate: event.paymentDate,
    quantityBefore: held.toNumber(),
    rate: rate.toNumber(),
    gross: gross.toNumber(),
    withheld: withheld.toNumber(),
    net: net.toNumber(),
    status
  }
}

/** A close as the domain values a holding with: in reais, perhaps estimated, perhaps known to be the day's traded. */
interface BasisClose {
  close: number
  estimated?: boolean
  traded?: boolean
}

/**
 * `closes` (oldest first) on the share basis of each one's day (`dayOf`: a month's is its last), so that a quantity
 * held that day times its close is never a split's gain or loss (docs/api.md#corporate-events): a traded close as it
 * is; any other may be restated for the events after it (brapi's daily closes equal its adjusted ones), so it is
 * brought back by the ratios of the stock events in effect after its day, by `today`, to 8 decimals — and is
 * `estimated` when a cash event's ex-date falls after it, by `today`, whose adjustment the service cannot undo.
 */
export function onDayBasis<C extends BasisClose> (
  closes: readonly C[], dayOf: (close: C) => string, events: ReplayedEvents
): readonly C[] {
  const kept = restated.get(closes)
  if (kept !== undefined && kept.book === events.book && kept.today === events.today) return kept.closes as C[]
  const answer = restate(closes, dayOf, events)
  restated.set(closes, { ...events, closes: answer })
  return answer
}

/**
 * Closes on their days' basis, kept per list of closes (the same list to every asker: src/domain/reais.ts) with the
 * events they were made with: restating 20 symbols' closes with big.js on every request cost a dashboard with events
 * about 20 % more CPU when measured (bench/corporate-events.ts, 2026-12-06); kept, a dashboard or a performance
 * computed again restates none.
 */
const restated = new WeakMap<readonly BasisClose[], ReplayedEvents & { closes: readonly BasisClose[] }>()

function restate<C extends BasisClose> (
  closes: readonly C[], dayOf: (close: C) => string, { book, today }: ReplayedEvents
): readonly C[] {
  const stock = book.stock.filter(event => event.effective <= today)
  const lastCashEffect = book.cash.reduce((last, event) =>
    event.effective <= today && event.effective > last ? event.effective : last, '')
  if (stock.length === 0 && lastCashEffect === '') return closes
  // The products of the ratios from each stock event on: what a close before its effect is multiplied by.
  const after = stock.map(() => decimal(1))
  const before = stock.map(() => decimal(1))
  for (let index = stock.length - 1; index >= 0; index--) {
    const { ratio } = stock[index] as StockEvent
    after[index] = ratio.after.times(after[index + 1] ?? 1)
    before[index] = ratio.before.times(before[index + 1] ?? 1)
  }
  let next = 0
  return closes.map(close => {
    if (close.traded === true) return close
    const day = dayOf(close)
    while (next < stock.length && (stock[next] as StockEvent).effective <= day) next++
    const restated = next === stock.length
      ? close.close
      : quotient(decimal(close.close).times(after[next] as Decimal), before[next] as Decimal, UNIT_DECIMALS).toNumber()
    return { ...close, close: restated, estimated: close.estimated === true || lastCashEffect > day }
  })
}
