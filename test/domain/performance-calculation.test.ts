import t from 'tap'
import { ipcaChange, percentChange, selicChange } from '../../src/domain/benchmarks.js'
import { addDays, lastAtOrBefore, monthsBefore } from '../../src/schemas/calendar.js'
import {
  buildPerformance, type PerformanceHolding, type PerformanceInput
} from '../../src/domain/performance-calculation.js'
import { decimal } from '../../src/schemas/money.js'
import type { Trade } from '../../src/schemas/average-cost.js'
import { weekdays } from '../fixtures/performance-example.js'

/*
 * The performance's rules (docs/api.md#performance) case by case, on the pure computation: the
 * dates and points of each range, what is estimated, the sale of everything, the benchmarks.
 */

const TODAY = '2026-11-20'

const closesOn = (days: readonly string[], close: (day: string, index: number) => number) =>
  days.map((date, index) => ({ date, close: close(date, index), estimated: false }))

const buy = (date: string, quantity: number, price: number, fee = 0): Trade =>
  ({ type: 'BUY', date, quantity, price, fee })
const sell = (date: string, quantity: number, price: number, fee = 0): Trade =>
  ({ type: 'SELL', date, quantity, price, fee })

function input (overrides: Partial<PerformanceInput>): PerformanceInput {
  return {
    portfolioId: 'p',
    range: '1m',
    today: TODAY,
    since: '2020-01-01',
    holdings: [],
    ibov: closesOn(weekdays('2020-01-01', TODAY), () => 100_000),
    selic: undefined,
    ipca: undefined,
    quoteSource: 'brapi.dev',
    ...overrides
  }
}

t.test('the points of each range: every trading day, the last of each week or month; from and to always', async t => {
  const long: PerformanceHolding = {
    transactions: [buy('2019-06-03', 10, 10)],
    closes: closesOn(weekdays('2020-01-01', TODAY), () => 10),
    storedPrice: 10
  }
  // Friday 13 November is no trading day (a holiday): its week's point is Thursday.
  const ibov = closesOn(weekdays('2020-01-01', TODAY).filter(day => day !== '2026-11-13'), () => 100_000)
  const datesOf = (range: PerformanceInput['range']) =>
    buildPerformance(input({ range, holdings: [long], ibov })).points.map(point => point.date)

  const month = datesOf('1m')
  t.equal(month[0], '2026-10-20', '1m: from the same day a month before')
  t.equal(month.at(-1), TODAY)
  t.notOk(month.includes('2026-11-13'), 'a holiday is no point')
  t.equal(month.length, weekdays('2026-10-20', TODAY).length - 1)

  const year = datesOf('1y')
  t.equal(year[0], '2025-11-20')
  t.ok(year.includes('2026-11-12'), 'the holiday\'s week ends on Thursday')
  t.same(year.slice(1, 4), ['2025-11-21', '2025-11-28', '2025-12-05'], 'each week\'s last trading day')

  const ytd = datesOf('ytd')
  t.equal(ytd[0], '2025-12-31', 'ytd: the previous year\'s last trading day')

  const five = datesOf('5y')
  t.equal(five[0], '2021-11-19', '5y: 20 November 2021 was a Saturday: the Friday before')
  t.same(five.slice(1, 3), ['2021-11-30', '2021-12-31'], 'each month\'s last trading day')

  const max = datesOf('max')
  t.equal(max[0], '2020-01-01', 'max before the calendar\'s data: its first day')
  t.equal(max.at(-1), TODAY)
})

t.test('a range that would start before the first transaction starts the trading day before it, as max', async t => {
  const holding: PerformanceHolding = {
    transactions: [buy('2026-09-14', 10, 20)],
    closes: closesOn(weekdays('2026-09-01', TODAY), () => 22),
    storedPrice: 20
  }
  for (const range of ['6m', '1y', '5y', 'max'] as const) {
    const answer = buildPerformance(input({ range, holdings: [holding] }))
    t.equal(answer.from, '2026-09-11', `${range}: the Friday before Monday's buy`)
    t.same(answer.points[0], { date: '2026-09-11', invested: 0, value: 0, twr: 0, ibov: 0, estimated: false })
    t.equal(answer.twr, 10, 'bought at 20, worth 22 from the first day')
    t.equal(answer.result, 20)
  }
  const nothing = buildPerformance(input({ range: '1m', ibov: [] }))
  t.same([nothing.from, nothing.to, nothing.points.length], ['2026-10-20', TODAY, 24],
    'no data at all: the weekdays, up to today')
  const empty = buildPerformance(input({ range: 'max' }))
  t.same({ from: empty.from, points: empty.points.length, twr: empty.twr, result: empty.result },
    { from: TODAY, points: 1, twr: 0, result: 0 }, 'max without any transaction: one day, nothing')
  const none = buildPerformance(input({ range: '1m' }))
  t.same({ from: none.from, twr: none.twr, value: none.value, estimated: none.estimated },
    { from: '2026-10-20', twr: 0, value: 0, estimated: false })
})

t.test('estimated: a gap, a day before the history, a symbol without closes (at its average price, on the last ' +
  'day at its stored price), a close converted with another day\'s rate', async t => {
  const days = weekdays('2026-10-01', TODAY)
  const gappy: PerformanceHolding = {
    transactions: [buy('2026-10-01', 10, 10)],
    closes: closesOn(days.filter(day => day !== '2026-11-18'), () => 11)
      .map(close => (close.date === '2026-11-19' ? { ...close, estimated: true } : close)),
    storedPrice: 10
  }
  const answer = buildPerformance(input({ holdings: [gappy] }))
  const flags = Object.fromEntries(answer.points.map(point => [point.date, point.estimated]))
  const around = ['2026-11-17', '2026-11-18', '2026-11-19', '2026-11-20'].map(day => flags[day])
  t.same(around, [false, true, true, false], 'a gap, then a close converted with another day\'s rate')
  t.equal(answer.points.find(point => point.date === '2026-11-18')?.value, 110, 'the gap repeats the last close')

  const late: PerformanceHolding = {
    transactions: [buy('2026-10-01', 10, 10)],
    closes: closesOn(weekdays('2026-11-02', TODAY), () => 12),
    storedPrice: 10
  }
  const lateAnswer = buildPerformance(input({ holdings: [late] }))
  t.same(lateAnswer.points.slice(0, 2).map(point => [point.value, point.estimated]), [[100, true], [100, true]],
    'before the history: at its average price')
  t.same(lateAnswer.points.at(-1), { date: TODAY, invested: 100, value: 120, twr: 20, ibov: 0, estimated: false })

  const bond: PerformanceHolding = { transactions: [buy('2026-10-01', 2, 1000)], closes: [], storedPrice: 1100 }
  const bondAnswer = buildPerformance(input({ holdings: [bond] }))
  t.same(bondAnswer.points.slice(-2).map(point => [point.value, point.estimated]), [[2000, true], [2200, true]],
    'a symbol without closes: its average price, its own price on the last day')
  t.ok(bondAnswer.estimated)
})

t.test('everything sold mid-range, bought again later: the days with nothing at work count as no change', async t => {
  const days = weekdays('2026-10-01', TODAY)
  const price = (day: string): number => (day < '2026-11-01' ? 10 : day < '2026-11-10' ? 20 : 40)
  const holding: PerformanceHolding = {
    transactions: [buy('2026-10-01', 10, 10), sell('2026-10-21', 10, 11, 1), buy('2026-11-11', 5, 40)],
    closes: closesOn(days, price),
    storedPrice: 40
  }
  const answer = buildPerformance(input({ holdings: [holding] }))
  // Tuesday 20th: 10 × 10 = 100; the sale on Wednesday brings 110 − 1 = 109: (0 + 109) / 100 = 1.09;
  // nothing held until the buy of the 11th at 40, worth 40: no change then; 9 %.
  t.equal(answer.twr, 9)
  t.equal(answer.result, 109 - 100 - 200 + 200, 'value 200 at to − 100 at from − 200 bought + 109 sold')
  t.same(answer.points.find(point => point.date === '2026-11-02'), {
    date: '2026-11-02', invested: 0, value: 0, twr: 9, ibov: 0, estimated: false
  })
})

t.test('a transaction on a weekend counts from Monday; one after `to` (today, without its close yet) not at all',
  async t => {
    const ibov = closesOn(weekdays('2020-01-01', '2026-11-19'), () => 100_000)
    const holding: PerformanceHolding = {
      transactions: [buy('2026-10-01', 10, 10), buy('2026-11-14', 10, 10), buy(TODAY, 10, 10)],
      closes: closesOn(weekdays('2026-10-01', TODAY), () => 10),
      storedPrice: 10
    }
    const answer = buildPerformance(input({ holdings: [holding], ibov }))
    t.equal(answer.to, '2026-11-19', 'the last day IBOVESPA closed')
    const invested = Object.fromEntries(answer.points.map(point => [point.date, point.invested]))
    t.same([invested['2026-11-13'], invested['2026-11-16'], answer.invested], [100, 200, 200])
    t.equal(answer.result, 0)
  })

t.test('without IBOVESPA: the held symbols\' weekdays make the calendar, ibov is null; a history that does not ' +
  'reach from makes it null too', async t => {
  const crypto: PerformanceHolding = {
    transactions: [buy('2026-01-05', 1, 100)],
    // A coin closes on weekends too: its weekdays are the trading days.
    closes: closesOn(weekdays('2026-01-01', TODAY).flatMap(day => [day, addDays(day, 1)]), () => 110),
    storedPrice: 100
  }
  const answer = buildPerformance(input({ holdings: [crypto], ibov: [] }))
  t.ok(answer.points.every(point => point.ibov === null && new Date(point.date).getUTCDay() % 6 !== 0))
  t.equal(answer.benchmarks.ibov, null)
  const short = buildPerformance(input({
    range: '1y', holdings: [crypto], ibov: closesOn(weekdays('2026-08-20', TODAY), () => 100_000)
  }))
  t.equal(short.from, '2026-01-02', 'the calendar\'s weekdays before IBOVESPA\'s history')
  t.equal(short.benchmarks.ibov, null, 'IBOVESPA does not reach from')
})

t.test('benchmarks: IBOVESPA\'s change, the SELIC accumulated as the Central Bank does, the IPCA of the months ' +
  'that ended within the dates', async t => {
  t.equal(percentChange(decimal(0), decimal(5)), 0)
  t.equal(percentChange(decimal(120_000), decimal(126_000)), 5)
  const days = ['2026-11-17', '2026-11-18', '2026-11-19', '2026-11-20']
  t.equal(selicChange(undefined, days), null)
  t.equal(selicChange([{ date: '2026-11-18', percent: '15' }], days), null, 'no target in force on the first day')
  t.equal(selicChange([], []), 0, 'no business day: nothing accrued')
  t.equal(selicChange([{ date: '2026-11-01', percent: '15.00' }], days), 0.22)
  // Two days at 15 % (1.00055476 each), two at 0 % (1): 1.00055476² truncated to 16 decimals.
  t.equal(selicChange([{ date: '2026-11-01', percent: '15.00' }, { date: '2026-11-19', percent: '0' }], days), 0.11)

  const ipca = [
    { date: '2026-08-01', percent: '0.5' },
    { date: '2026-09-01', percent: '-0.25' },
    { date: '2026-10-01', percent: '1' }
  ]
  // August ended after 20 August; October by 20 November: 1.005 × 0.9975 × 1.01 − 1 = 1.2497375 %.
  t.equal(ipcaChange(ipca, '2026-08-20', '2026-11-20'), 1.25)
  t.equal(ipcaChange(ipca, '2026-08-31', '2026-10-30'), -0.25, 'August ended on from: not within; October not yet')
  t.equal(ipcaChange(ipca, '2026-11-16', '2026-11-20'), null, 'no month ended within the dates')
  t.equal(ipcaChange(undefined, '2026-08-20', '2026-11-20'), null)
  t.equal(ipcaChange(ipca, TODAY, TODAY), 0, 'a range of one day')
})

t.test('calendar: months before a day that does not exist, the last of sorted days', async t => {
  t.equal(monthsBefore('2026-05-31', 3), '2026-02-28')
  t.equal(monthsBefore('2024-03-31', 1), '2024-02-29')
  t.equal(monthsBefore('2026-01-15', 12), '2025-01-15')
  t.equal(lastAtOrBefore(['2026-01-01', '2026-01-05'], '2025-12-31'), -1)
  t.equal(lastAtOrBefore(['2026-01-01', '2026-01-05'], '2026-01-04'), 0)
  t.equal(lastAtOrBefore(['2026-01-01', '2026-01-05'], '2026-02-01'), 1)
})
