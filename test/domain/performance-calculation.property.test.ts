import t from 'tap'
import fc from 'fast-check'
import { deepStrictEqual } from 'node:assert'
import {
  buildPerformance, type PerformanceHolding, type PerformanceInput
} from '../../src/domain/performance-calculation.js'
import type { DayClose } from '../../src/domain/reais.js'
import type { Trade } from '../../src/schemas/average-cost.js'
import { expectedPerformance, tradingDays, valued } from '../fixtures/performance-oracle.js'
import { weekdays } from '../fixtures/performance-example.js'
import { Rational } from '../fixtures/rational.js'

/*
 * docs/api.md#performance over random portfolios: the whole answer — its dates, every point, the
 * result, the time-weighted return and the three benchmarks — is the recomputation of
 * test/fixtures/performance-oracle.ts from the generated inputs alone, `from` counted from the range
 * and today. The generators reach every range but 5y, fractional quantities, sales, trades of one
 * day, closes missing or marked estimated, histories that start late, symbols without closes,
 * IBOVESPA with holidays, starting late, ending before today or absent, SELIC targets and IPCA
 * months, or none. Two properties the documentation states are checked on their own too: a buy
 * split in two of the same day moves nothing; with nothing bought or sold, the return is the simple one.
 */

const TODAY = '2026-11-20'
const SINCE = '2025-11-03'
const WEEKDAYS = weekdays(SINCE, TODAY)
const LAST = WEEKDAYS.length - 1

const cents = (min: number, max: number): fc.Arbitrary<number> =>
  fc.integer({ min: min * 100, max: max * 100 }).map(value => value / 100)
const someDays = (most: number): fc.Arbitrary<number[]> => fc.uniqueArray(fc.nat(LAST), { maxLength: most })

/** Closes of the weekdays from `startsAt` to `LAST − endsBefore`, but the `missing` ones; `estimated` marked. */
const daily = (low: number, high: number, endsBefore: fc.Arbitrary<number>): fc.Arbitrary<DayClose[]> => fc.record({
  closes: fc.array(cents(low, high), { minLength: WEEKDAYS.length, maxLength: WEEKDAYS.length }),
  startsAt: fc.oneof(fc.constant(0), fc.nat(LAST)),
  endsBefore,
  missing: someDays(20),
  estimated: someDays(6)
}).map(({ closes, startsAt, endsBefore, missing, estimated }) => closes.flatMap((close, index) =>
  index < startsAt || index > LAST - endsBefore || missing.includes(index)
    ? []
    : [{ date: WEEKDAYS[index] as string, close, estimated: estimated.includes(index) }]))

/** IBOVESPA: holidays, a history that may start late and end a day or two before today, or none at all. */
const ibovespa = fc.oneof({ weight: 1, arbitrary: fc.constant([]) }, {
  weight: 6,
  arbitrary: daily(90_000, 140_000, fc.nat(2)).map(closes => closes.map(close => ({ ...close, estimated: false })))
})

/** Any day from `first` to `last`, weekends too: a transaction on a Saturday counts from Monday. */
const dayBetween = (first: string, last: string): fc.Arbitrary<string> =>
  fc.integer({ min: 0, max: (Date.parse(last) - Date.parse(first)) / 86_400_000 })
    .map(days => new Date(Date.parse(first) + days * 86_400_000).toISOString().slice(0, 10))

const draft = (first: string, last: string) => fc.record({
  date: dayBetween(first, last),
  /** Dated as the draft before it. */
  sameDay: fc.boolean(),
  buy: fc.boolean(),
  quantity: fc.oneof(fc.integer({ min: 1, max: 300 }), fc.integer({ min: 1, max: 3e10 }).map(units => units / 1e8)),
  /** The share of what is held a sale sells, in millionths. */
  share: fc.integer({ min: 1, max: 1_000_000 }),
  price: cents(1, 500),
  fee: cents(0, 10)
})
type Draft = typeof draft extends (...args: never[]) => fc.Arbitrary<infer T> ? T : never

/** Trades in the order they count, each sale a share of what is held by then. */
function tradesOf (drafts: readonly Draft[]): Trade[] {
  const dated = drafts.map((entry, index) =>
    ({ ...entry, date: entry.sameDay ? drafts[index - 1]?.date ?? entry.date : entry.date }))
  let held = Rational.of(0)
  const trades: Trade[] = []
  for (const { date, buy, quantity, share, price, fee } of dated.sort((a, b) => a.date.localeCompare(b.date))) {
    const amount = !buy && !held.isZero() ? held.times(share).div(1_000_000).truncatedTo(8) : Rational.of(quantity)
    if (amount.isZero()) continue
    const type = !buy && !held.isZero() ? 'SELL' : 'BUY'
    held = type === 'SELL' ? held.minus(amount) : held.plus(amount)
    trades.push({ type, date, quantity: amount.rounded(8), price, fee })
  }
  return trades
}

const holding = (first: string, last: string): fc.Arbitrary<PerformanceHolding> => fc.record({
  transactions: fc.array(draft(first, last), { minLength: 1, maxLength: 6 }).map(tradesOf),
  // A symbol the provider does not price has no closes.
  closes: fc.oneof({ weight: 1, arbitrary: fc.constant([]) }, { weight: 6, arbitrary: daily(1, 500, fc.constant(0)) }),
  storedPrice: cents(1, 500)
})

/** The SELIC target from the dates it was set (maybe only after `from`), or none. */
const selic = fc.option(fc.uniqueArray(fc.record({
  date: dayBetween('2025-10-01', TODAY), percent: fc.integer({ min: 200, max: 1500 }).map(bp => (bp / 100).toFixed(2))
}), { minLength: 1, maxLength: 4, selector: rate => rate.date })
  .map(rates => rates.sort((a, b) => a.date.localeCompare(b.date))), { nil: undefined })
/** The IPCA of October 2025 to October 2026, the last months perhaps not published yet; or none. */
const ipca = fc.option(fc.record({
  percents: fc.array(fc.integer({ min: -50, max: 150 }).map(hundredths => (hundredths / 100).toFixed(2)),
    { minLength: 13, maxLength: 13 }),
  unpublished: fc.nat(3)
}).map(({ percents, unpublished }) => percents.slice(0, 13 - unpublished).map((percent, index) => ({
  date: new Date(Date.UTC(2025, 9 + index, 1)).toISOString().slice(0, 10), percent
}))), { nil: undefined })

const portfolios = (first = '2025-11-04', last = TODAY) => fc.record({
  range: fc.constantFrom('1m', '3m', '6m', 'ytd', '1y', 'max') as fc.Arbitrary<PerformanceInput['range']>,
  holdings: fc.array(holding(first, last), { minLength: 1, maxLength: 3 }),
  ibov: ibovespa,
  selic,
  ipca
}).map((generated): PerformanceInput =>
  ({ ...generated, portfolioId: 'p', today: TODAY, since: SINCE, quoteSource: 'brapi.dev' }))

/** An answer as it is sent: JSON, where a −0 is 0. */
function sent<T> (answer: T): T {
  return JSON.parse(JSON.stringify(answer)) as T
}

/** What a generated input reached of what the generators aim at, by name. */
function reachedBy (input: PerformanceInput, answer: ReturnType<typeof expectedPerformance>): string[] {
  const days = tradingDays(input).filter(day => day >= answer.from && day <= answer.to)
  const trades = input.holdings.flatMap(entry => entry.transactions)
  const held = days.filter(day => trades.some(trade => trade.date <= day))
  const { ibov, selic, ipca } = answer.benchmarks
  const aims: Array<[string, boolean]> = [
    [`range ${input.range}`, true],
    ['a range starting before the first trade', answer.points[0]?.invested === 0 && answer.invested > 0],
    ['sales', trades.some(trade => trade.type === 'SELL')],
    ['fractional quantities', trades.some(trade => !Number.isInteger(trade.quantity))],
    ['trades of one day', input.holdings.some(({ transactions }) =>
      new Set(transactions.map(trade => trade.date)).size < transactions.length)],
    ['a close missing on a day held', input.holdings.some(({ closes }) => closes.length > 0 &&
      held.some(day => day > (closes[0] as DayClose).date && !closes.some(close => close.date === day)))],
    ['a close marked estimated', input.holdings.some(({ closes }) =>
      closes.some(close => close.estimated && days.includes(close.date)))],
    ['a history starting after the first trade', input.holdings.some(({ closes, transactions }) =>
      closes.length > 0 && (closes[0] as DayClose).date > (transactions[0] as Trade).date)],
    ['a symbol without closes', input.holdings.some(({ closes }) => closes.length === 0)],
    ['no IBOVESPA', input.ibov.length === 0],
    ['IBOVESPA not reaching from', input.ibov.length > 0 && ibov === null],
    ['IBOVESPA', ibov !== null],
    ['to before today', answer.to < TODAY],
    ['SELIC null', selic === null],
    ['SELIC counted', selic !== null],
    ['IPCA null', ipca === null],
    ['IPCA counted', ipca !== null]
  ]
  return aims.flatMap(([name, reached]) => reached ? [name] : [])
}

t.test('the whole answer is its recomputation from the inputs: dates, points, result, return, benchmarks', async t => {
  const reached = new Map<string, number>()
  fc.assert(fc.property(portfolios(), input => {
    const expected = expectedPerformance(input)
    deepStrictEqual(sent(buildPerformance(input)), expected)
    for (const what of reachedBy(input, expected)) reached.set(what, (reached.get(what) ?? 0) + 1)
  }), { numRuns: 200 })
  t.comment(JSON.stringify(Object.fromEntries(reached)))
  const aimed = [
    ...['1m', '3m', '6m', 'ytd', '1y', 'max'].map(range => `range ${range}`), 'a range starting before the first trade',
    'sales', 'fractional quantities', 'trades of one day', 'a close missing on a day held', 'a close marked estimated',
    'a history starting after the first trade', 'a symbol without closes', 'no IBOVESPA', 'IBOVESPA not reaching from',
    'IBOVESPA', 'to before today', 'SELIC null', 'SELIC counted', 'IPCA null', 'IPCA counted'
  ]
  for (const what of aimed) t.ok((reached.get(what) ?? 0) > 0, `reached: ${what}`)
})

t.test('a buy split into two buys of the same day (the same money: quantities and fees split) moves nothing',
  async t => {
    const split = fc.record({
      at: fc.nat(), part: fc.integer({ min: 1, max: 99 }), feePart: fc.integer({ min: 0, max: 100 })
    })
    fc.assert(fc.property(portfolios(), split, (input, { at, part, feePart }) => {
      const buys = input.holdings.flatMap((entry, asset) => entry.transactions.flatMap((trade, index) =>
        trade.type === 'BUY' && trade.quantity >= 2e-8 ? [{ asset, index }] : []))
      fc.pre(buys.length > 0)
      const { asset, index } = buys[at % buys.length] as { asset: number, index: number }
      const holdings = input.holdings.map((entry, position) => {
        if (position !== asset) return entry
        const trade = entry.transactions[index] as Trade
        const first = Rational.of(trade.quantity).times(part).div(100).truncatedTo(8)
        const firstQuantity = first.isZero() ? 1e-8 : first.rounded(8)
        const firstFee = Rational.of(trade.fee).times(feePart).div(100).rounded(2)
        const rest = {
          quantity: Rational.of(trade.quantity).minus(firstQuantity).rounded(8),
          fee: Rational.of(trade.fee).minus(firstFee).rounded(2)
        }
        const halves: Trade[] = [{ ...trade, quantity: firstQuantity, fee: firstFee }, { ...trade, ...rest }]
        const transactions = [...entry.transactions.slice(0, index), ...halves, ...entry.transactions.slice(index + 1)]
        return { ...entry, transactions }
      })
      const whole = buildPerformance(input)
      const parts = buildPerformance({ ...input, holdings })
      deepStrictEqual(sent({ points: parts.points, twr: parts.twr, result: parts.result }),
        sent({ points: whole.points, twr: whole.twr, result: whole.result }))
    }), { numRuns: 100 })
    t.pass('100 random portfolios')
  })

t.test('nothing bought or sold in the range: the time-weighted return is the simple return', async t => {
  // Every trade by 1 August 2026; the 3 months end on IBOVESPA's last close, at most two days before today.
  fc.assert(fc.property(portfolios('2025-11-04', '2026-08-01'), generated => {
    const input: PerformanceInput = { ...generated, range: '3m' }
    const answer = buildPerformance(input)
    const [start, end] = valued(input, [answer.from, answer.to], answer.to)
      .map(day => day.value) as [Rational, Rational]
    const simple = start.isZero() ? 0 : end.minus(start).times(100).div(start).rounded(2)
    const expected = { twr: simple, result: end.minus(start).rounded(2) }
    deepStrictEqual(sent({ twr: answer.twr, result: answer.result }), expected)
  }), { numRuns: 100 })
  t.pass('100 random portfolios')
})
