import { averagePrice, type Position, type Trade } from '../schemas/average-cost.js'
import { decimal, money, quotient, sum, type Decimal } from '../schemas/money.js'
import type { PercentObservation } from '../quotes/provider.js'
import type { PerformancePoint, PerformanceRange, PortfolioPerformance } from '../schemas/performance.js'
import { ipcaChange, percentChange, selicChange } from './benchmarks.js'
import { addDays, isWeekday, lastAtOrBefore, monthsBefore, weekdaysBetween, weekOf } from '../schemas/calendar.js'
import { entitlementsOf, onDayBasis, replayedWith, type FollowedEvents } from './asset-events.js'
import { NO_EVENTS, type EventBook } from './corporate-events.js'
import type { DayClose } from './reais.js'
import { Replay } from './replay.js'

/**
 * One asset of the portfolio: its transactions, its symbol's corporate events, its daily closes in reais.
 * @internal Test seam: the property test generates them.
 */
export interface PerformanceHolding {
  /** In the order they count (by date, then as recorded). */
  transactions: readonly Trade[]
  /** Daily closes in reais, oldest first; none for a symbol the provider does not price. */
  closes: readonly DayClose[]
  /** The asset's own price: what a symbol without closes is worth on the last day. */
  storedPrice: number
  /** Its symbol's corporate events (docs/api.md#corporate-events); none when absent. */
  events?: EventBook
}

/** A holding as valued: its replay with the events it applies, its closes on each day's share basis. */
interface ValuedHolding extends PerformanceHolding {
  followed: FollowedEvents
}

export interface PerformanceInput {
  portfolioId: string
  range: PerformanceRange
  /** Today (`YYYY-MM-DD`, UTC): the last day a close may be of. */
  today: string
  /** The first day the closes were asked from: the calendar starts there. */
  since: string
  holdings: readonly PerformanceHolding[]
  /** IBOVESPA's daily closes (they make the calendar of trading days); none when the provider has none. */
  ibov: readonly DayClose[]
  /** The SELIC target in force each day, and each month's IPCA; `undefined` when the provider has none. */
  selic: readonly PercentObservation[] | undefined
  ipca: readonly PercentObservation[] | undefined
  /** Who gave the closes (the provider's `source`). */
  quoteSource: string
}

/** How many months back a range starts from its last day (`ytd` and `max` are dated otherwise). */
const RANGE_MONTHS: Readonly<Record<Exclude<PerformanceRange, 'ytd' | 'max'>, number>> = {
  '1m': 1, '3m': 3, '6m': 6, '1y': 12, '5y': 60
}

/** Where a range would start from `to`, before the first transaction moves it (docs/api.md#performance). */
export function nominalStart (range: PerformanceRange, to: string, firstTransaction: string | undefined): string {
  if (range === 'max') return firstTransaction === undefined ? to : addDays(firstTransaction, -1)
  if (range === 'ytd') return `${Number(to.slice(0, 4)) - 1}-12-31`
  return monthsBefore(to, RANGE_MONTHS[range])
}

/** Which days of the range are points: every one, the last of each week, or the last of each month. */
function spacingOf (range: PerformanceRange): ((day: string) => string) | undefined {
  if (range === 'ytd' || range === '1y') return weekOf
  if (range === '5y' || range === 'max') return day => day.slice(0, 7)
  return undefined
}

/**
 * The trading days: IBOVESPA's (B3's calendar), else the weekdays the held symbols closed on, and
 * weekdays where the data does not reach (before its first close, or all along without any).
 */
function calendarOf (input: PerformanceInput): string[] {
  const within = (day: string): boolean => day >= input.since && day <= input.today
  let traded = input.ibov.map(close => close.date).filter(within)
  if (traded.length === 0) {
    traded = [...new Set(input.holdings.flatMap(holding => holding.closes.map(close => close.date)))]
      .filter(day => within(day) && isWeekday(day)).sort()
  }
  const first = traded[0]
  if (first === undefined) return weekdaysBetween(input.since, input.today)
  return [...weekdaysBetween(input.since, addDays(first, -1)), ...traded]
}

/** A day's value of one holding: its price that day, and whether that is the day's market close in reais. */
interface Priced {
  price: Decimal
  market: boolean
}

/**
 * What each holding held and was worth on each of `days` (sorted): quantity × price, exact. A price
 * is the holding's close that day; else its last close before (a gap: not market); before any
 * close, its average price then; a holding without closes at its average price, and on `last` at
 * its stored price.
 */
function valuesOn (holdings: readonly ValuedHolding[], days: readonly string[], last: string) {
  const value = days.map(() => decimal(0))
  const invested = days.map(() => decimal(0))
  const estimated = days.map(() => false)
  for (const holding of holdings) {
    const replay = new Replay(holding.transactions, holding.followed.events)
    let close = -1
    days.forEach((day, index) => {
      const position = replay.through(day)
      while (close + 1 < holding.closes.length && (holding.closes[close + 1] as DayClose).date <= day) close++
      if (position.quantity.eq(0)) return
      const priced = priceOf(holding, close, day, last, position)
      value[index] = (value[index] as Decimal).plus(position.quantity.times(priced.price))
      invested[index] = (invested[index] as Decimal).plus(position.cost)
      if (!priced.market) estimated[index] = true
    })
  }
  return { value, invested, estimated }
}

function priceOf (holding: PerformanceHolding, close: number, day: string, last: string, position: Position): Priced {
  const found = holding.closes[close]
  if (found !== undefined) return { price: decimal(found.close), market: found.date === day && !found.estimated }
  if (holding.closes.length === 0 && day === last) return { price: decimal(holding.storedPrice), market: false }
  return { price: averagePrice(position), market: false }
}

/**
 * Money bought (cost and fees) and sold (proceeds less fees) on a day of the calendar, and the net cash of the
 * corporate events paid that day: a distribution, counted in the return as money taken out is.
 */
interface Flow {
  bought: Decimal
  sold: Decimal
  income: Decimal
}

/**
 * Each holding with its replay run to its end with the events it applies — whose entitlements are read off it, the
 * choice and the entitlements of one replay — and its closes on each day's share basis.
 */
function valuedHoldings (input: PerformanceInput): ValuedHolding[] {
  return input.holdings.map(holding => {
    const followed = replayedWith(holding.transactions, { book: holding.events ?? NO_EVENTS, today: input.today })
    return { ...holding, followed, closes: onDayBasis(holding.closes, close => close.date, followed.events) }
  })
}

/** `a / b` to 30 decimals; 1 when `b` is 0 (no money at work: nothing to grow). */
function ratio (a: Decimal, b: Decimal): Decimal {
  return b.eq(0) ? decimal(1) : quotient(a, b, 30)
}

/** The time-weighted return from a start to a day, in percent: growth × value / base − 1. */
function cumulative (growth: Decimal, value: Decimal, base: Decimal): number {
  if (base.eq(0)) return money(growth.minus(1).times(100))
  return quotient(growth.times(value).minus(base).times(100), base, 2).toNumber()
}

/**
 * A portfolio's performance over a range (docs/api.md#performance), from its transactions and the
 * daily closes in reais, exact (docs/api.md#money): each amount and percentage is rounded once,
 * when answered.
 */
export function buildPerformance (input: PerformanceInput): PortfolioPerformance {
  const holdings = valuedHoldings(input)
  const calendar = calendarOf(input)
  const to = calendar.at(-1) ?? input.today
  const firstTransaction = input.holdings.flatMap(holding => holding.transactions.map(trade => trade.date)).sort()[0]
  let start = nominalStart(input.range, to, firstTransaction)
  if (firstTransaction !== undefined && addDays(firstTransaction, -1) > start) start = addDays(firstTransaction, -1)
  const from = start >= to ? to : calendar[Math.max(0, lastAtOrBefore(calendar, start))] ?? to
  const days = calendar.filter(day => day >= from && day <= to)
  const dayIndex = new Map(days.map((day, index) => [day, index]))

  // Each transaction after `from` moves money on the first trading day at or after its date, a cash event's net
  // on the first at or after its payment date.
  const flows = new Map<string, Flow>()
  const flowOn = (date: string): Flow => {
    const day = days[lastAtOrBefore(days, addDays(date, -1)) + 1] as string
    const flow = flows.get(day) ?? { bought: decimal(0), sold: decimal(0), income: decimal(0) }
    flows.set(day, flow)
    return flow
  }
  for (const trade of holdings.flatMap(holding => holding.transactions)) {
    if (trade.date <= from || trade.date > to) continue
    const flow = flowOn(trade.date)
    const amount = decimal(trade.quantity).times(trade.price)
    if (trade.type === 'BUY') flow.bought = flow.bought.plus(amount).plus(trade.fee)
    else flow.sold = flow.sold.plus(amount).minus(trade.fee)
  }
  for (const holding of holdings) {
    if (holding.followed.events.book.cash.length === 0) continue
    for (const { cash } of entitlementsOf(holding.followed)) {
      const paid = cash?.event.paymentDate
      if (cash === undefined || paid === null || paid === undefined || paid <= from || paid > to) continue
      const flow = flowOn(paid)
      flow.income = flow.income.plus(cash.net)
    }
  }

  const spacing = spacingOf(input.range)
  const periods = spacing === undefined ? undefined : days.map(spacing)
  const isPoint = (day: string, index: number): boolean =>
    index === 0 || day === to || periods === undefined || periods[index] !== periods[index + 1]
  // The days valued: the points, and each flow's day and the day before it.
  const valued = days.filter((day, index) => isPoint(day, index) || flows.has(day) || flows.has(days[index + 1] ?? ''))
  const { value, invested, estimated } = valuesOn(holdings, valued, to)
  const at = new Map(valued.map((day, index) => [day, index]))
  const valueAt = (day: string): Decimal => value[at.get(day) as number] as Decimal

  const ibovAt = new Map(input.ibov.map(close => [close.date, close.close]))
  const ibovFrom = ibovAt.get(from)
  const points: PerformancePoint[] = []
  let growth = decimal(1)
  let base = valueAt(from)
  valued.forEach((day, index) => {
    const flow = flows.get(day)
    if (flow !== undefined) {
      // Money bought works from the day's start, money sold until its end (docs/api.md#performance).
      const before = valueAt(days[(dayIndex.get(day) as number) - 1] as string)
      const ofDay = ratio((value[index] as Decimal).plus(flow.sold).plus(flow.income), before.plus(flow.bought))
      growth = growth.times(ratio(before, base)).times(ofDay).round(30)
      base = value[index] as Decimal
    }
    if (!isPoint(day, dayIndex.get(day) as number)) return
    const ibov = ibovAt.get(day)
    points.push({
      date: day,
      invested: money(invested[index] as Decimal),
      value: money(value[index] as Decimal),
      twr: cumulative(growth, value[index] as Decimal, base),
      ibov: ibov === undefined || ibovFrom === undefined ? null : percentChange(decimal(ibovFrom), decimal(ibov)),
      estimated: estimated[index] as boolean
    })
  })

  const moved = [...flows.values()]
  const income = sum(moved.map(flow => flow.income))
  const last = points.at(-1) as PerformancePoint
  return {
    portfolioId: input.portfolioId,
    currency: 'BRL',
    range: input.range,
    from,
    to,
    points,
    invested: last.invested,
    value: last.value,
    income: money(income),
    result: money(valueAt(to).minus(valueAt(from))
      .minus(sum(moved.map(flow => flow.bought))).plus(sum(moved.map(flow => flow.sold))).plus(income)),
    twr: last.twr,
    benchmarks: {
      ibov: last.ibov,
      selic: selicChange(input.selic, days.slice(1)),
      ipca: ipcaChange(input.ipca, from, to)
    },
    estimated: points.some(point => point.estimated),
    quoteSource: input.quoteSource
  }
}
