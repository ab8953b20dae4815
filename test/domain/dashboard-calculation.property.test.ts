import t from 'tap'
import fc from 'fast-check'
import Big from 'big.js'
import {
  buildDashboard,
  longLabel,
  shortLabel,
  type AssetPrices,
  type Dashboard,
  type DashboardTransaction
} from '../../src/domain/dashboard-calculation.js'
import { monthKey, monthsBetween, type MonthKey } from '../../src/quotes/provider.js'
import { inOrder, referencePosition } from '../fixtures/average-cost.js'

const NOW = new Date('2026-11-15T12:00:00Z')

/** Rounding half away from zero, written here with integers rather than taken from the service. */
function rounded (value: Big, decimals: number): Big {
  const scaled = value.times(new Big(10).pow(decimals))
  const whole = scaled.abs().plus(0.5).round(0, Big.roundDown)
  return (scaled.lt(0) ? whole.neg() : whole).div(new Big(10).pow(decimals))
}

/** The decimal places of a number as answered (its shortest decimal form). */
function places (value: number): number {
  const [, fraction = ''] = String(value).split('e')[0]?.split('.') ?? []
  const exponent = Number(String(value).split('e')[1] ?? 0)
  return Math.max(0, fraction.length - exponent)
}

const exact = (value: number): Big => new Big(value)
const sumOf = (values: number[]): Big => values.reduce((total, value) => total.plus(value), new Big(0))

function monthsAgo (count: number): MonthKey {
  return monthKey(new Date(Date.UTC(NOW.getUTCFullYear(), NOW.getUTCMonth() - count, 1)))
}

/** Decimals of at most 8 places, as the API accepts them (docs/api.md#money). */
const eightPlaces = (min: number, max: number): fc.Arbitrary<number> =>
  fc.integer({ min: min * 1e8, max: max * 1e8 }).map(units => units / 1e8)
const price = eightPlaces(0.01, 1e6)
const quantity = eightPlaces(0.0001, 1e6)
/**
 * Buys and sales of one asset: a sale sells a share of what is held at its date (none is made
 * while nothing is held), so that every sequence is one the service accepts.
 */
const trade = fc.record({
  monthsAgo: fc.integer({ min: 0, max: 35 }),
  day: fc.integer({ min: 1, max: 28 }),
  sale: fc.boolean(),
  quantity,
  /** The share of what is held a sale sells, in millionths: often all of it. */
  share: fc.oneof(fc.constant(1_000_000), fc.integer({ min: 1, max: 1_000_000 })),
  price,
  fee: fc.integer({ min: 0, max: 5000 }).map(cents => cents / 100)
})
const closes = fc.dictionary(fc.integer({ min: 0, max: 40 }).map(String), price, { maxKeys: 40 }).map(byMonth =>
  Object.entries(byMonth)
    .map(([ago, close]) => ({ month: monthsAgo(Number(ago)), close }))
    .sort((a, b) => (a.month < b.month ? -1 : 1))
)
const asset = fc.record({ trades: fc.array(trade, { minLength: 1, maxLength: 8 }), lastQuote: price, closes })
const portfolio = fc.record({
  assets: fc.array(asset, { minLength: 1, maxLength: 4 }),
  benchmark: fc.option(fc.record({ lastQuote: price, closes }), { nil: undefined })
})

type GeneratedTrade = typeof trade extends fc.Arbitrary<infer T> ? T : never

/** The generated trades as transactions in the order they count; a sale sells its share of what is held then. */
function transactionsOf (trades: GeneratedTrade[], index: number): DashboardTransaction[] {
  const dated = inOrder(trades.map(spec =>
    ({ ...spec, date: `${monthsAgo(spec.monthsAgo)}-${String(spec.day).padStart(2, '0')}` })))
  const transactions: DashboardTransaction[] = []
  let held = new Big(0)
  dated.forEach((spec, n) => {
    const selling = spec.sale && held.gt(0)
    const amount = selling ? held.times(spec.share).div(1_000_000).round(8, Big.roundDown) : new Big(spec.quantity)
    if (amount.eq(0)) return
    held = selling ? held.minus(amount) : held.plus(amount)
    transactions.push({
      id: `tx-${index}-${n}`,
      type: selling ? 'SELL' : 'BUY',
      date: spec.date,
      quantity: amount.toNumber(),
      price: spec.price,
      fee: spec.fee
    })
  })
  return transactions
}

function toPrices (
  assets: Array<{ trades: GeneratedTrade[], lastQuote: number, closes: AssetPrices['closes'] }>
): AssetPrices[] {
  return assets.map((entry, index) => ({
    assetId: `asset-${index}`,
    lastQuote: entry.lastQuote,
    origin: { source: 'brapi.dev', lastUpdate: '2026-11-21T20:07:46.000Z' },
    closes: entry.closes,
    transactions: transactionsOf(entry.trades, index)
  }))
}

function dashboardOf (
  prices: AssetPrices[], index: number, benchmark: { lastQuote: number, closes: AssetPrices['closes'] } | undefined
): Dashboard {
  const own = prices[index] as AssetPrices
  return buildDashboard({
    asset: {
      id: own.assetId,
      symbol: `SYM${index}`,
      name: `Asset ${index}`,
      quantity: referencePosition(own.transactions)?.quantity ?? 0,
      imageUrl: 'https://x/y.svg'
    },
    portfolio: prices,
    benchmark,
    now: NOW
  })
}

function check (condition: boolean, message: string): void {
  if (!condition) throw new Error(message)
}

/** A percentage as answered: 2 places, within half a cent of the exact ratio. */
function checkPercentage (answered: number, part: Big, whole: Big, name: string): void {
  check(places(answered) <= 2, `${name} has at most 2 decimals`)
  check(
    whole.eq(0) ? answered === 0 : exact(answered).eq(rounded(part.div(whole).times(100), 2)),
    `${name} = ${part.toString()} / ${whole.toString()} × 100, rounded`
  )
}

t.test('dashboard figures are exact decimals that add up, for random buys, sales and price series', async t => {
  fc.assert(fc.property(portfolio, ({ assets, benchmark }) => {
    const prices = toPrices(assets)
    const dashboards = prices.map((_, index) => dashboardOf(prices, index, benchmark))
    const balancesByMonth = new Map<string, { shares: number[], balances: number[] }>()
    dashboards.forEach((dashboard, index) => {
      const own = prices[index] as AssetPrices
      const transactions = own.transactions
      const position = referencePosition(transactions)
      if (position === undefined) throw new Error('the generated sales never sell more than is held')
      const held = exact(position.quantity)
      const info = dashboard.basicInfo
      // transactions: as recorded, each total the exact product rounded half away from zero to cents
      check(dashboard.transactions.map(tx => tx.id).join() === transactions.map(tx => tx.id).join(), 'all, in order')
      dashboard.transactions.forEach((tx, n) => {
        const recorded = transactions[n] as DashboardTransaction
        check(tx.type === recorded.type && tx.fee === recorded.fee, 'its type and fee')
        check(tx.description === `${tx.type === 'BUY' ? 'Compra' : 'Venda'} de ${tx.quantity} SYM${index}`, 'text')
        check(
          exact(tx.totalValue).eq(rounded(exact(tx.quantity).times(tx.pricePerUnit), 2)),
          `transaction total ${tx.totalValue} = ${tx.quantity} × ${tx.pricePerUnit}, rounded`
        )
      })
      // basicInfo: what is held and what was realized, as recomputed at average cost; the figures add up as shown
      check(info.quantity === position.quantity, 'the quantity held')
      check(info.averagePrice === position.averagePrice, `averagePrice ${info.averagePrice} = ${position.averagePrice}`)
      check(info.investedValue === position.investedValue, `invested ${info.investedValue} = ${position.investedValue}`)
      check(info.realizedResult === position.realizedResult,
        `realizedResult ${info.realizedResult} = ${position.realizedResult}`)
      check(info.fees === position.fees, `fees ${info.fees} = ${position.fees}`)
      for (const name of ['investedValue', 'grossValue', 'result', 'realizedResult', 'fees'] as const) {
        check(places(info[name]) <= 2, `${name} has at most 2 decimals`)
      }
      check(
        exact(info.grossValue).eq(rounded(held.times(own.lastQuote), 2)),
        'grossValue = quantity × lastQuote, rounded'
      )
      check(
        exact(info.result).eq(exact(info.grossValue).minus(info.investedValue)),
        'result = gross − invested, exactly'
      )
      check(info.lastQuote === own.lastQuote, 'lastQuote comes from the provider')
      checkPercentage(info.resultPercentage, exact(info.result), exact(info.investedValue), 'resultPercentage')
      // one entry per month, first transaction to now
      const months = monthsBetween((transactions[0] as DashboardTransaction).date.slice(0, 7), monthKey(NOW))
      check(
        dashboard.monthlyHistory.length === months.length && dashboard.historicalChart.length === months.length,
        'one entry per month'
      )
      months.forEach((month, m) => {
        const entry = dashboard.monthlyHistory[m]
        const chart = dashboard.historicalChart[m]
        if (entry === undefined || chart === undefined) throw new Error('missing month')
        check(entry.month === longLabel(month) && chart.month === shortLabel(month), 'labels')
        const then = referencePosition(transactions.filter(tx => tx.date.slice(0, 7) <= month))
        check(entry.quantity === then?.quantity, 'quantity held at the end of the month')
        check(chart.appliedValue === then?.investedValue, 'appliedValue is what was held cost, at average cost')
        check(places(entry.currentBalance) <= 2, 'currentBalance has at most 2 decimals')
        check(chart.grossBalance === entry.currentBalance, 'the chart shows the same balance')
        checkPercentage(
          entry.returnPercentage,
          exact(entry.currentBalance).minus(chart.appliedValue),
          exact(chart.appliedValue),
          'returnPercentage'
        )
        check(
          places(entry.portfolioPercentage) <= 2 && entry.portfolioPercentage >= 0 && entry.portfolioPercentage <= 100,
          'share within 0–100, 2 places'
        )
        check(places(entry.ibovPercentage) <= 2, 'ibovPercentage has at most 2 decimals')
        const byMonth = balancesByMonth.get(month) ?? { shares: [], balances: [] }
        byMonth.shares.push(entry.portfolioPercentage)
        byMonth.balances.push(entry.currentBalance)
        balancesByMonth.set(month, byMonth)
        if (m === 0) check(entry.ibovPercentage === 0, 'the benchmark starts at 0 %')
      })
      const last = dashboard.monthlyHistory.at(-1)
      check(last !== undefined && last.currentBalance === info.grossValue, 'the current month is the current position')
    })
    // Each asset's share is its balance over the portfolio's, rounded: together within rounding of 100.
    for (const [month, { shares, balances }] of balancesByMonth) {
      const portfolioBalance = sumOf(balances)
      if (portfolioBalance.eq(0)) continue
      shares.forEach((share, n) =>
        checkPercentage(share, exact(balances[n] ?? 0), portfolioBalance, `share of ${month}`)
      )
    }
  }), { numRuns: 300 })
  t.pass('300 random portfolios of buys and sales')
})

t.test('the benchmark return is measured from the first month', async t => {
  fc.assert(fc.property(asset, fc.record({ lastQuote: price, closes }), (entry, benchmark) => {
    const prices = toPrices([entry])
    const dashboard = dashboardOf(prices, 0, benchmark)
    const current = dashboard.monthlyHistory.at(-1)
    if (current === undefined) throw new Error('no history')
    const startMonth = (prices[0] as AssetPrices).transactions[0]?.date.slice(0, 7) ?? ''
    const before =
      benchmark.closes.filter(c => c.month <= startMonth).at(-1)?.close ??
      benchmark.closes[0]?.close ??
      benchmark.lastQuote
    const start = startMonth === monthKey(NOW) ? benchmark.lastQuote : before
    checkPercentage(
      current.ibovPercentage,
      exact(benchmark.lastQuote).minus(start),
      exact(start),
      'current benchmark return'
    )
  }), { numRuns: 300 })
  t.pass('300 random cases')
})
