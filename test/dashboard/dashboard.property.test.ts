import t from 'tap'
import fc from 'fast-check'
import { buildDashboard, longLabel, shortLabel, type AssetPrices, type Dashboard, type Lot } from '../../src/dashboard/dashboard.js'
import { monthKey, monthsBetween, type MonthKey } from '../../src/quotes/provider.js'
import { Store } from '../../src/store/store.js'

const NOW = new Date('2026-11-15T12:00:00Z')
const RELATIVE = 1e-9

/**
 * Equal within 1e-9 relative error. A difference (result, a return) can be far smaller than
 * the numbers it comes from; `scale` names their size, so rounding in them is not a failure.
 */
function near (a: number, b: number, scale = 0): boolean {
  return a === b || Math.abs(a - b) <= RELATIVE * Math.max(Math.abs(a), Math.abs(b), scale)
}

function monthsAgo (count: number): MonthKey {
  return monthKey(new Date(Date.UTC(NOW.getUTCFullYear(), NOW.getUTCMonth() - count, 1)))
}

const price = fc.double({ min: 0.01, max: 1e6, noNaN: true, noDefaultInfinity: true })
const quantity = fc.double({ min: 0.0001, max: 1e6, noNaN: true, noDefaultInfinity: true })
const lot = fc.record({ monthsAgo: fc.integer({ min: 0, max: 35 }), day: fc.integer({ min: 1, max: 28 }), quantity, price })
const closes = fc.dictionary(fc.integer({ min: 0, max: 40 }).map(String), price, { maxKeys: 40 })
  .map(byMonth => Object.entries(byMonth).map(([ago, close]) => ({ month: monthsAgo(Number(ago)), close })).sort((a, b) => (a.month < b.month ? -1 : 1)))
const asset = fc.record({ lots: fc.array(lot, { minLength: 1, maxLength: 6 }), lastQuote: price, closes })
const portfolio = fc.record({ assets: fc.array(asset, { minLength: 1, maxLength: 4 }), benchmark: fc.option(fc.record({ lastQuote: price, closes }), { nil: undefined }) })

function toPrices (assets: Array<{ lots: Array<{ monthsAgo: number, day: number, quantity: number, price: number }>, lastQuote: number, closes: AssetPrices['closes'] }>): AssetPrices[] {
  return assets.map((entry, index) => ({
    assetId: `asset-${index}`,
    lastQuote: entry.lastQuote,
    closes: entry.closes,
    lots: entry.lots.map((l, n): Lot => ({ id: `lot-${index}-${n}`, date: `${monthsAgo(l.monthsAgo)}-${String(l.day).padStart(2, '0')}`, quantity: l.quantity, price: l.price }))
  }))
}

function dashboardOf (prices: AssetPrices[], index: number, benchmark: { lastQuote: number, closes: AssetPrices['closes'] } | undefined): Dashboard {
  const own = prices[index] as AssetPrices
  const quantityHeld = own.lots.reduce((sum, l) => sum + l.quantity, 0)
  return buildDashboard({ asset: { id: own.assetId, symbol: `SYM${index}`, name: `Asset ${index}`, quantity: quantityHeld, imageUrl: 'https://x/y.svg' }, portfolio: prices, benchmark, now: NOW })
}

t.test('dashboard invariants hold for random lots and price series (1e-9 relative)', async t => {
  fc.assert(fc.property(portfolio, ({ assets, benchmark }) => {
    const prices = toPrices(assets)
    const dashboards = prices.map((_, index) => dashboardOf(prices, index, benchmark))
    const sharesByMonth = new Map<string, number>()
    dashboards.forEach((dashboard, index) => {
      const own = prices[index] as AssetPrices
      const lots = [...own.lots].sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0))
      const held = lots.reduce((sum, l) => sum + l.quantity, 0)
      const invested = lots.reduce((sum, l) => sum + l.quantity * l.price, 0)
      const info = dashboard.basicInfo
      // basicInfo
      if (!near(info.investedValue, invested)) throw new Error('investedValue is the sum of the lots')
      if (!near(info.averagePrice * info.quantity, info.investedValue)) throw new Error('averagePrice = investedValue / quantity')
      if (!near(info.grossValue, held * own.lastQuote)) throw new Error('grossValue = quantity × lastQuote')
      if (info.lastQuote !== own.lastQuote) throw new Error('lastQuote comes from the provider')
      const scale = info.grossValue + info.investedValue
      if (!near(info.result, info.grossValue - info.investedValue, scale)) throw new Error('result = gross − invested')
      if (!near(info.resultPercentage, info.result / info.investedValue * 100, scale / info.investedValue * 100)) throw new Error('resultPercentage = result / invested × 100')
      // one entry per month, first lot to now
      const months = monthsBetween((lots[0] as Lot).date.slice(0, 7), monthKey(NOW))
      if (dashboard.monthlyHistory.length !== months.length || dashboard.historicalChart.length !== months.length) throw new Error('one entry per month')
      let previousQuantity = 0
      months.forEach((month, m) => {
        const entry = dashboard.monthlyHistory[m]
        const chart = dashboard.historicalChart[m]
        if (entry === undefined || chart === undefined) throw new Error('missing month')
        if (entry.month !== longLabel(month) || chart.month !== shortLabel(month)) throw new Error('labels')
        const upTo = lots.filter(l => l.date.slice(0, 7) <= month)
        const q = upTo.reduce((sum, l) => sum + l.quantity, 0)
        const applied = upTo.reduce((sum, l) => sum + l.quantity * l.price, 0)
        if (!near(entry.quantity, q)) throw new Error('quantity held at the end of the month')
        if (entry.quantity < previousQuantity) throw new Error('buys only: quantity never falls')
        previousQuantity = entry.quantity
        if (!near(chart.appliedValue, applied)) throw new Error('appliedValue is what was invested by then')
        if (chart.grossBalance !== entry.currentBalance) throw new Error('the chart shows the same balance')
        if (!near(entry.returnPercentage, (entry.currentBalance - applied) / applied * 100, (entry.currentBalance + applied) / applied * 100)) throw new Error('returnPercentage')
        if (entry.portfolioPercentage < 0 || entry.portfolioPercentage > 100 + 1e-9) throw new Error('share within 0–100')
        sharesByMonth.set(month, (sharesByMonth.get(month) ?? 0) + entry.portfolioPercentage)
        if (m === 0 && entry.ibovPercentage !== 0) throw new Error('the benchmark starts at 0 %')
      })
      const last = dashboard.monthlyHistory.at(-1)
      if (last === undefined || !near(last.currentBalance, info.grossValue)) throw new Error('the current month is the current position')
      // transactions
      if (!near(dashboard.transactions.reduce((sum, tx) => sum + tx.quantity, 0), held)) throw new Error('transactions add up to the quantity')
      if (dashboard.transactions.some(tx => tx.type !== 'BUY' || !near(tx.totalValue, tx.quantity * tx.pricePerUnit))) throw new Error('transaction totals')
      if (dashboard.transactions.some((tx, n, all) => n > 0 && (all[n - 1]?.date ?? '') > tx.date)) throw new Error('transactions in date order')
    })
    for (const [month, total] of sharesByMonth) {
      if (Math.abs(total - 100) > 1e-9 * 100) throw new Error(`the shares of ${month} add up to ${total}, not 100`)
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
    const startMonth = [...(prices[0] as AssetPrices).lots].sort((a, b) => (a.date < b.date ? -1 : 1))[0]?.date.slice(0, 7) ?? ''
    const before = benchmark.closes.filter(c => c.month <= startMonth).at(-1)?.close ?? benchmark.closes[0]?.close ?? benchmark.lastQuote
    const start = startMonth === monthKey(NOW) ? benchmark.lastQuote : before
    if (!near(current.ibovPercentage, (benchmark.lastQuote - start) / start * 100, (benchmark.lastQuote + start) / start * 100)) throw new Error('current benchmark return')
  }), { numRuns: 300 })
  t.pass('300 random cases')
})

t.test('quantity changes up and down keep the lots equal to the quantity (FIFO)', async t => {
  const store = await Store.open('sqlite::memory:')
  t.teardown(() => store.close())
  const portfolio = await store.portfolios.create({ name: 'P', userId: 'u' })
  const steps = fc.array(fc.record({ quantity, price: fc.option(price, { nil: undefined }) }), { minLength: 1, maxLength: 8 })
  await fc.assert(fc.asyncProperty(quantity, price, steps, async (initialQuantity, initialPrice, changes) => {
    const asset = await store.assets.create({ name: 'A', symbol: 'A', type: 'STOCK', quantity: initialQuantity, price: initialPrice, portfolioId: portfolio.id })
    if (asset === undefined) throw new Error('no asset')
    const buys: Array<{ quantity: number, price: number }> = [{ quantity: initialQuantity, price: initialPrice }]
    let current = { quantity: initialQuantity, price: initialPrice }
    for (const change of changes) {
      const updated = await store.assets.update(asset.id, { quantity: change.quantity, ...(change.price === undefined ? {} : { price: change.price }) })
      if (updated === undefined) throw new Error('asset vanished')
      if (change.quantity > current.quantity) buys.push({ quantity: change.quantity - current.quantity, price: updated.price })
      current = { quantity: updated.quantity, price: updated.price }
      const lots = await store.assets.lots(asset.id)
      const total = lots.reduce((sum, l) => sum + l.quantity, 0)
      if (!near(total, updated.quantity) && Math.abs(total - updated.quantity) > 1e-9 * Math.max(...buys.map(b => b.quantity))) {
        throw new Error(`lots ${total} ≠ quantity ${updated.quantity}`)
      }
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
