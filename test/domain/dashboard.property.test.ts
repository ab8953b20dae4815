import t from 'tap'
import fc from 'fast-check'
import Big from 'big.js'
import {
  buildDashboard,
  longLabel,
  shortLabel,
  type AssetPrices,
  type Dashboard,
  type Lot
} from '../../src/domain/dashboard.js'
import { monthKey, monthsBetween, type MonthKey } from '../../src/quotes/provider.js'
import { Store } from '../../src/store/store.js'

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
const lot = fc.record({
  monthsAgo: fc.integer({ min: 0, max: 35 }),
  day: fc.integer({ min: 1, max: 28 }),
  quantity,
  price
})
const closes = fc.dictionary(fc.integer({ min: 0, max: 40 }).map(String), price, { maxKeys: 40 }).map(byMonth =>
  Object.entries(byMonth)
    .map(([ago, close]) => ({ month: monthsAgo(Number(ago)), close }))
    .sort((a, b) => (a.month < b.month ? -1 : 1))
)
const asset = fc.record({ lots: fc.array(lot, { minLength: 1, maxLength: 6 }), lastQuote: price, closes })
const portfolio = fc.record({
  assets: fc.array(asset, { minLength: 1, maxLength: 4 }),
  benchmark: fc.option(fc.record({ lastQuote: price, closes }), { nil: undefined })
})

function toPrices (
  assets: Array<{
    lots: Array<{ monthsAgo: number, day: number, quantity: number, price: number }>
    lastQuote: number
    closes: AssetPrices['closes']
  }>
): AssetPrices[] {
  return assets.map((entry, index) => ({
    assetId: `asset-${index}`,
    lastQuote: entry.lastQuote,
    origin: { source: 'brapi.dev', lastUpdate: '2026-11-21T20:07:46.000Z' },
    closes: entry.closes,
    lots: entry.lots.map((l, n): Lot => ({
      id: `lot-${index}-${n}`,
      date: `${monthsAgo(l.monthsAgo)}-${String(l.day).padStart(2, '0')}`,
      quantity: l.quantity,
      price: l.price
    }))
  }))
}

function dashboardOf (
  prices: AssetPrices[], index: number, benchmark: { lastQuote: number, closes: AssetPrices['closes'] } | undefined
): Dashboard {
  const own = prices[index] as AssetPrices
  const quantityHeld = sumOf(own.lots.map(l => l.quantity)).toNumber()
  return buildDashboard({
    asset: {
      id: own.assetId,
      symbol: `SYM${index}`,
      name: `Asset ${index}`,
      quantity: quantityHeld,
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

t.test('dashboard figures are exact decimals that add up, for random lots and price series', async t => {
  fc.assert(fc.property(portfolio, ({ assets, benchmark }) => {
    const prices = toPrices(assets)
    const dashboards = prices.map((_, index) => dashboardOf(prices, index, benchmark))
    const balancesByMonth = new Map<string, { shares: number[], balances: number[] }>()
    dashboards.forEach((dashboard, index) => {
      const own = prices[index] as AssetPrices
      const lots = [...own.lots].sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0))
      const held = sumOf(lots.map(l => l.quantity))
      const info = dashboard.basicInfo
      // transactions: each total is the exact product rounded half away from zero to cents
      for (const tx of dashboard.transactions) {
        check(tx.type === 'BUY', 'buys only')
        check(
          exact(tx.totalValue).eq(rounded(exact(tx.quantity).times(tx.pricePerUnit), 2)),
          `transaction total ${tx.totalValue} = ${tx.quantity} × ${tx.pricePerUnit}, rounded`
        )
      }
      check(sumOf(dashboard.transactions.map(tx => tx.quantity)).eq(held), 'transactions add up to the quantity')
      check(
        dashboard.transactions.every((tx, n, all) => n === 0 || (all[n - 1]?.date ?? '') <= tx.date),
        'transactions in date order'
      )
      // basicInfo: money to the cent, unit prices to 8 places, and the figures add up as shown
      for (const name of ['investedValue', 'grossValue', 'result'] as const) {
        check(places(info[name]) <= 2, `${name} has at most 2 decimals`)
      }
      check(
        exact(info.investedValue).eq(sumOf(dashboard.transactions.map(tx => tx.totalValue))),
        'investedValue is the sum of the transactions shown'
      )
      check(
        exact(info.grossValue).eq(rounded(held.times(own.lastQuote), 2)),
        'grossValue = quantity × lastQuote, rounded'
      )
      check(
        exact(info.result).eq(exact(info.grossValue).minus(info.investedValue)),
        'result = gross − invested, exactly'
      )
      check(info.lastQuote === own.lastQuote, 'lastQuote comes from the provider')
      check(
        exact(info.averagePrice).eq(rounded(exact(info.investedValue).div(held), 8)),
        'averagePrice = invested / quantity, 8 places'
      )
      checkPercentage(info.resultPercentage, exact(info.result), exact(info.investedValue), 'resultPercentage')
      // one entry per month, first lot to now
      const months = monthsBetween((lots[0] as Lot).date.slice(0, 7), monthKey(NOW))
      check(
        dashboard.monthlyHistory.length === months.length && dashboard.historicalChart.length === months.length,
        'one entry per month'
      )
      months.forEach((month, m) => {
        const entry = dashboard.monthlyHistory[m]
        const chart = dashboard.historicalChart[m]
        if (entry === undefined || chart === undefined) throw new Error('missing month')
        check(entry.month === longLabel(month) && chart.month === shortLabel(month), 'labels')
        const upTo = dashboard.transactions.filter(tx => tx.date.slice(0, 7) <= month)
        check(exact(entry.quantity).eq(sumOf(upTo.map(tx => tx.quantity))), 'quantity held at the end of the month')
        check(
          exact(chart.appliedValue).eq(sumOf(upTo.map(tx => tx.totalValue))),
          'appliedValue is what was invested by then, as shown'
        )
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
  t.pass('300 random portfolios')
})

t.test('the benchmark return is measured from the first month', async t => {
  fc.assert(fc.property(asset, fc.record({ lastQuote: price, closes }), (entry, benchmark) => {
    const prices = toPrices([entry])
    const dashboard = dashboardOf(prices, 0, benchmark)
    const current = dashboard.monthlyHistory.at(-1)
    if (current === undefined) throw new Error('no history')
    const startMonth =
      [...(prices[0] as AssetPrices).lots].sort((a, b) => (a.date < b.date ? -1 : 1))[0]?.date.slice(0, 7) ?? ''
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

t.test('quantity changes up and down keep the lots equal to the quantity (FIFO)', async t => {
  const store = await Store.open('sqlite::memory:')
  t.teardown(() => store.close())
  const portfolio = await store.portfolios.create({ name: 'P', userId: 'u' })
  const steps = fc.array(fc.record({
    quantity,
    price: fc.option(price, { nil: undefined })
  }), { minLength: 1, maxLength: 8 })
  await fc.assert(fc.asyncProperty(quantity, price, steps, async (initialQuantity, initialPrice, changes) => {
    const asset = await store.assets.create({
      name: 'A',
      symbol: 'A',
      type: 'STOCK',
      quantity: initialQuantity,
      price: initialPrice,
      portfolioId: portfolio.id
    })
    if (asset === undefined) throw new Error('no asset')
    const buys: Array<{ quantity: number, price: number }> = [{ quantity: initialQuantity, price: initialPrice }]
    let current = { quantity: initialQuantity, price: initialPrice }
    for (const change of changes) {
      const updated = (await store.assets.update(asset.id, {
        quantity: change.quantity,
        ...(change.price === undefined ? {} : { price: change.price })
      }))?.value
      if (updated === undefined) throw new Error('asset vanished')
      if (change.quantity > current.quantity) {
        buys.push({ quantity: exact(change.quantity).minus(current.quantity).toNumber(), price: updated.price })
      }
      current = { quantity: updated.quantity, price: updated.price }
      const lots = await store.assets.lots(asset.id)
      const total = sumOf(lots.map(l => l.quantity))
      check(total.eq(updated.quantity), `lots ${total.toString()} = quantity ${updated.quantity}, exactly`)
      check(lots.every(l => places(l.quantity) <= 8), 'lots keep at most 8 decimals')
      if (lots.some(l => !(l.quantity > 0))) throw new Error('no empty or negative lot remains')
      // FIFO: what remains is the newest buys, the oldest of them possibly in part.
      const prices = lots.map(l => l.price)
      const tail = buys.slice(buys.length - lots.length).map(b => b.price)
      if (prices.join() !== tail.join()) throw new Error('the oldest lots go first')
    }
    await store.assets.delete(asset.id)
  }), { numRuns: 60 })
  t.pass('60 random sequences of quantity changes')
})
