import t from 'tap'
import fc from 'fast-check'
import {
  buildPerformance, type PerformanceHolding, type PerformanceInput
} from '../../src/domain/performance-calculation.js'
import type { Trade } from '../../src/schemas/average-cost.js'
import { Rational } from '../fixtures/rational.js'
import { weekdays } from '../fixtures/performance-example.js'

/*
 * docs/api.md#performance's time-weighted return over random portfolios: random daily closes of
 * up to three assets and IBOVESPA on every weekday, random dated buys and sales with fees. It does
 * not move when a buy is split into two buys of the same day; it is the simple return when nothing
 * was bought or sold in the range; and it is always the day-by-day chain recomputed in exact
 * fractions, without src/ (test/fixtures/rational.ts).
 */

const TODAY = '2026-11-20'
const SINCE = '2026-05-01'
const DAYS = weekdays(SINCE, TODAY)
/** `3m` ends on TODAY (a Friday) and starts on the same day three months before, a Thursday. */
const FROM = '2026-08-20'

const cents = (min: number, max: number): fc.Arbitrary<number> =>
  fc.integer({ min: min * 100, max: max * 100 }).map(value => value / 100)
const closes = fc.array(cents(1, 500), { minLength: DAYS.length, maxLength: DAYS.length })
  .map(values => values.map((close, index) => ({ date: DAYS[index] as string, close, estimated: false })))

/** Any day of the window, weekends too: a transaction on a Saturday counts from Monday. */
const dayBetween = (first: string, last: string): fc.Arbitrary<string> => {
  const [start, end] = [Date.parse(first), Date.parse(last)]
  return fc.integer({ min: 0, max: (end - start) / 86_400_000 })
    .map(days => new Date(start + days * 86_400_000).toISOString().slice(0, 10))
}

interface Draft { date: string, buy: boolean, quantity: number, share: number, price: number, fee: number }
const draft = (first: string, last: string): fc.Arbitrary<Draft> => fc.record({
  date: dayBetween(first, last),
  buy: fc.boolean(),
  quantity: fc.integer({ min: 1, max: 300 }),
  share: fc.integer({ min: 1, max: 100 }),
  price: cents(1, 500),
  fee: cents(0, 10)
})

/** Trades in date order, each sale a share of what is held by then, the first a buy. */
function tradesOf (drafts: readonly Draft[]): Trade[] {
  let held = 0
  const trades: Trade[] = []
  for (const { date, buy, quantity, share, price, fee } of [...drafts].sort((a, b) => a.date.localeCompare(b.date))) {
    const selling = !buy && held > 0
    const amount = selling ? Math.max(1, Math.floor(held * share / 100)) : quantity
    held += selling ? -amount : amount
    trades.push({ type: selling ? 'SELL' : 'BUY', date, quantity: amount, price, fee })
  }
  return trades
}

const holding = (first: string, last: string): fc.Arbitrary<PerformanceHolding> => fc.record({
  transactions: fc.array(draft(first, last), { minLength: 1, maxLength: 6 }).map(tradesOf),
  closes,
  storedPrice: cents(1, 500)
})

function inputOf (holdings: PerformanceHolding[], ibov: PerformanceInput['ibov']): PerformanceInput {
  return {
    portfolioId: 'p',
    range: '3m',
    today: TODAY,
    since: SINCE,
    holdings,
    ibov,
    selic: undefined,
    ipca: undefined,
    quoteSource: 'brapi.dev'
  }
}

/** Σ quantity held at the end of `day` × that day's close, exact. */
function valueOn (holdings: readonly PerformanceHolding[], day: string): Rational {
  let value = Rational.of(0)
  for (const { transactions, closes } of holdings) {
    let quantity = 0
    for (const trade of transactions) {
      if (trade.date <= day) quantity += trade.type === 'BUY' ? trade.quantity : -trade.quantity
    }
    const close = closes.find(entry => entry.date === day)?.close ?? 0
    value = value.plus(Rational.of(quantity).times(close))
  }
  return value
}

/** Each trading day's return chained: (value + money out that day) ÷ (previous value + money in that day). */
function chained (holdings: readonly PerformanceHolding[], from: string, to: string): number {
  const days = DAYS.filter(day => day >= from && day <= to)
  let growth = Rational.of(1)
  days.slice(1).forEach((day, index) => {
    const previous = days[index] as string
    let [bought, sold] = [Rational.of(0), Rational.of(0)]
    for (const trade of holdings.flatMap(entry => entry.transactions)) {
      if (trade.date <= previous || trade.date > day) continue
      const amount = Rational.of(trade.quantity).times(trade.price)
      if (trade.type === 'BUY') bought = bought.plus(amount).plus(trade.fee)
      else sold = sold.plus(amount).minus(trade.fee)
    }
    const base = valueOn(holdings, previous).plus(bought)
    if (!base.isZero()) growth = growth.times(valueOn(holdings, day).plus(sold).div(base))
  })
  return growth.percentOfGrowth()
}

const portfolios = fc.record({
  holdings: fc.array(holding(SINCE, TODAY), { minLength: 1, maxLength: 3 }),
  ibov: closes
})

t.test('the time-weighted return is the day-by-day chain, recomputed in fractions', async t => {
  fc.assert(fc.property(portfolios, ({ holdings, ibov }) => {
    const answer = buildPerformance(inputOf(holdings, ibov))
    return answer.twr === chained(holdings, answer.from, answer.to)
  }), { numRuns: 150 })
  t.pass()
})

t.test('a buy split into two buys of the same day (the same money: quantities and fees split) moves nothing',
  async t => {
    const split = fc.record({
      at: fc.nat(), part: fc.integer({ min: 1, max: 99 }), feePart: fc.integer({ min: 0, max: 100 })
    })
    fc.assert(fc.property(portfolios, split, ({ holdings, ibov }, { at, part, feePart }) => {
      const buys = holdings.flatMap((entry, asset) => entry.transactions.flatMap((trade, index) =>
        trade.type === 'BUY' && trade.quantity >= 2 ? [{ asset, index }] : []))
      fc.pre(buys.length > 0)
      const { asset, index } = buys[at % buys.length] as { asset: number, index: number }
      const splitHoldings = holdings.map((entry, position) => {
        if (position !== asset) return entry
        const trade = entry.transactions[index] as Trade
        const first = Math.max(1, Math.min(trade.quantity - 1, Math.round(trade.quantity * part / 100)))
        const firstFee = Math.round(trade.fee * feePart) / 100
        const halves: Trade[] = [
          { ...trade, quantity: first, fee: firstFee },
          { ...trade, quantity: trade.quantity - first, fee: Rational.of(trade.fee).minus(firstFee).rounded(2) }
        ]
        const transactions = [...entry.transactions.slice(0, index), ...halves, ...entry.transactions.slice(index + 1)]
        return { ...entry, transactions }
      })
      const whole = buildPerformance(inputOf(holdings, ibov))
      const parts = buildPerformance(inputOf(splitHoldings, ibov))
      return parts.twr === whole.twr && JSON.stringify(parts.points) === JSON.stringify(whole.points) &&
      parts.result === whole.result
    }), { numRuns: 150 })
    t.pass()
  })

t.test('nothing bought or sold in the range: the time-weighted return is the simple return', async t => {
  const still = fc.record({
    holdings: fc.array(holding(SINCE, FROM), { minLength: 1, maxLength: 3 }),
    ibov: closes
  })
  fc.assert(fc.property(still, ({ holdings, ibov }) => {
    const answer = buildPerformance(inputOf(holdings, ibov))
    if (answer.from !== FROM || answer.to !== TODAY) return false
    const [start, end] = [valueOn(holdings, FROM), valueOn(holdings, TODAY)]
    const simple = start.isZero() ? 0 : end.minus(start).times(100).div(start).rounded(2)
    return answer.twr === simple && answer.result === end.minus(start).rounded(2)
  }), { numRuns: 200 })
  t.pass()
})
