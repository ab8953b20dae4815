import t from 'tap'
import fc from 'fast-check'
import { deepStrictEqual } from 'node:assert'
import {
  buildDashboard, type AssetPrices, type Dashboard, type DashboardTransaction
} from '../../src/domain/dashboard-calculation.js'
import type { MonthClose } from '../../src/domain/reais.js'
import { averagePriceOf, exactPosition, inOrder, referencePosition, referenceValue } from '../fixtures/average-cost.js'
import { Rational } from '../fixtures/rational.js'

/*
 * The asset dashboard (docs/api.md#the-asset-dashboard) over random portfolios: each figure of every
 * asset's dashboard recomputed from the generated trades, closes and quotes alone, in exact
 * fractions (test/fixtures/rational.ts, test/fixtures/average-cost.ts), with its own month list,
 * labels and rules for a month's price and for what is estimated — no code of src/ but the
 * function under test. The generators reach fractional quantities, sales of a share of what is
 * held, trades of one day, months without a close, closes marked estimated, an asset at its own
 * stored price, and no benchmark.
 */

const NOW = new Date('2026-11-15T12:00:00Z')
const CURRENT = '2026-11'
const MONTH_NAMES = ['Jan', 'Fev', 'Mar', 'Abr', 'Mai', 'Jun', 'Jul', 'Ago', 'Set', 'Out', 'Nov', 'Dez']

/** `YYYY-MM` of the month `count` months before the current one. */
function monthsAgo (count: number): string {
  const index = 2026 * 12 + 10 - count
  return `${Math.floor(index / 12)}-${String(index % 12 + 1).padStart(2, '0')}`
}

/** Every month from `first` to the current one. */
function monthsFrom (first: string): string[] {
  const months = []
  for (let ago = 40; ago >= 0; ago--) if (monthsAgo(ago) >= first) months.push(monthsAgo(ago))
  return months
}

const labels = (month: string): { long: string, short: string } => {
  const name = MONTH_NAMES[Number(month.slice(5)) - 1] ?? ''
  return { long: `${name}.${month.slice(0, 4)}`, short: `${name}/${month.slice(2, 4)}` }
}

/** Decimals of at most 8 places, as the API accepts them (docs/api.md#money). */
const eightPlaces = (min: number, max: number): fc.Arbitrary<number> =>
  fc.integer({ min: min * 1e8, max: max * 1e8 }).map(units => units / 1e8)
const price = eightPlaces(0.01, 1e6)
const quantity = eightPlaces(0.0001, 1e6)
/** A buy, or a sale of a share of what is held at its date (none is made while nothing is held). */
const trade = fc.record({
  monthsAgo: fc.integer({ min: 0, max: 35 }),
  day: fc.integer({ min: 1, max: 28 }),
  /** Dated as the trade generated before it: trades of one day count in the order recorded. */
  sameDay: fc.boolean(),
  sale: fc.boolean(),
  quantity,
  /** The share of what is held a sale sells, in millionths: often all of it. */
  share: fc.oneof(fc.constant(1_000_000), fc.integer({ min: 1, max: 1_000_000 })),
  price,
  fee: fc.integer({ min: 0, max: 5000 }).map(cents => cents / 100)
})
/** Monthly closes with months missing, some not that month's market close (converted with another month's rate). */
const closes = fc.dictionary(fc.integer({ min: 0, max: 40 }).map(String), fc.tuple(price, fc.boolean()), {
  maxKeys: 40
}).map(byMonth => Object.entries(byMonth)
  .map(([ago, [close, estimated]]): MonthClose => ({ month: monthsAgo(Number(ago)), close, estimated }))
  .sort((a, b) => (a.month < b.month ? -1 : 1)))
const asset = fc.record({
  trades: fc.array(trade, { minLength: 1, maxLength: 8 }),
  lastQuote: price,
  closes,
  /** A symbol the provider does not know: valued at the asset's stored price, never market data. */
  storedPrice: fc.boolean()
})
const portfolio = fc.record({
  assets: fc.array(asset, { minLength: 1, maxLength: 4 }),
  benchmark: fc.option(fc.record({ lastQuote: price, closes }), { nil: undefined })
})
type GeneratedAsset = typeof asset extends fc.Arbitrary<infer T> ? T : never
type Benchmark = NonNullable<(typeof portfolio extends fc.Arbitrary<infer T> ? T : never)['benchmark']>

/** The generated trades as transactions in the order they count; a sale sells its share of what is held then. */
function transactionsOf (trades: GeneratedAsset['trades'], index: number): DashboardTransaction[] {
  let date = ''
  const dated = inOrder(trades.map(spec => {
    if (!spec.sameDay || date === '') date = `${monthsAgo(spec.monthsAgo)}-${String(spec.day).padStart(2, '0')}`
    return { ...spec, date }
  }))
  const transactions: DashboardTransaction[] = []
  let held = Rational.of(0)
  dated.forEach((spec, n) => {
    const selling = spec.sale && !held.isZero()
    const amount = selling ? held.times(spec.share).div(1_000_000).truncatedTo(8) : Rational.of(spec.quantity)
    if (amount.isZero()) return
    held = selling ? held.minus(amount) : held.plus(amount)
    const type = selling ? 'SELL' : 'BUY'
    const { date, price, fee } = spec
    transactions.push({ id: `tx-${index}-${n}`, type, date, quantity: amount.rounded(8), price, fee })
  })
  return transactions
}

function pricesOf (assets: readonly GeneratedAsset[]): AssetPrices[] {
  return assets.map((entry, index) => ({
    assetId: `asset-${index}`,
    lastQuote: entry.lastQuote,
    origin: entry.storedPrice
      ? { source: 'asset', lastUpdate: null }
      : { source: 'brapi.dev', lastUpdate: '2026-11-21T20:07:46.000Z' },
    closes: entry.storedPrice ? [] : entry.closes,
    transactions: transactionsOf(entry.trades, index)
  }))
}

/** A month's price: the quote now, else the last close by then, else `before`; market data or not. */
function priceIn (
  month: string, lastQuote: number, quoted: boolean, closes: readonly MonthClose[], before: Rational
): { price: Rational, market: boolean } {
  if (month === CURRENT) return { price: Rational.of(lastQuote), market: quoted }
  const close = closes.filter(entry => entry.month <= month).at(-1)
  if (close === undefined) return { price: before, market: false }
  return { price: Rational.of(close.close), market: close.month === month && close.estimated !== true }
}

/** `part / whole × 100`, 2 decimals; 0 when the whole is 0. */
const percent = (part: Rational, whole: Rational): number => whole.isZero() ? 0 : part.div(whole).times(100).rounded(2)

/** One held asset's month: its position at the month's end, its price, its balance to the cent. */
function monthOf (entry: AssetPrices, month: string) {
  const position = exactPosition(inOrder(entry.transactions).filter(tx => tx.date.slice(0, 7) <= month))
  if (position === undefined) throw new Error('the generated sales never sell more than is held')
  const quoted = entry.origin.source !== 'asset'
  const { price, market } = priceIn(month, entry.lastQuote, quoted, entry.closes, averagePriceOf(position))
  return { position, market, balance: position.quantity.times(price).roundedTo(2) }
}

/** The dashboard of `prices[index]`, from the generated inputs alone. */
function expectedDashboard (
  prices: readonly AssetPrices[], index: number, benchmark: Benchmark | undefined
): Dashboard {
  const own = prices[index] as AssetPrices
  const transactions = inOrder(own.transactions)
  const position = referencePosition(transactions)
  if (position === undefined) throw new Error('the generated sales never sell more than is held')
  const months = monthsFrom((transactions[0] as DashboardTransaction).date.slice(0, 7))
  // The benchmark before its first close: that close, else the quote (never market data).
  const benchmarkIn = (month: string): { price: Rational, market: boolean } | undefined => benchmark === undefined
    ? undefined
    : priceIn(month, benchmark.lastQuote, true, benchmark.closes,
      Rational.of(benchmark.closes[0]?.close ?? benchmark.lastQuote))
  const start = benchmarkIn(months[0] as string)
  const history = months.map(month => {
    const held = prices.map(entry => monthOf(entry, month)).filter(({ position }) => !position.quantity.isZero())
    const mine = monthOf(own, month)
    const applied = mine.position.cost.roundedTo(2)
    const total = held.reduce((sum, { balance }) => sum.plus(balance), Rational.of(0))
    const index = benchmarkIn(month)
    return {
      month,
      currentBalance: mine.balance.rounded(2),
      quantity: mine.position.quantity.rounded(8),
      appliedValue: applied.rounded(2),
      returnPercentage: percent(mine.balance.minus(applied), applied),
      portfolioPercentage: percent(mine.balance, total),
      ibovPercentage: index === undefined || start === undefined
        ? 0
        : percent(index.price.minus(start.price), start.price),
      estimated: held.some(({ market }) => !market) || index?.market !== true || start?.market !== true
    }
  })
  const grossValue = Rational.of(position.quantity).times(own.lastQuote).roundedTo(2)
  const result = grossValue.minus(position.investedValue)
  return {
    basicInfo: {
      ticker: `SYM${index}`,
      name: `Asset ${index}`,
      imageUrl: 'https://x/y.svg',
      quantity: position.quantity,
      averagePrice: position.averagePrice,
      lastQuote: own.lastQuote,
      quoteSource: own.origin.source,
      quoteUpdatedAt: own.origin.lastUpdate,
      investedValue: position.investedValue,
      grossValue: grossValue.rounded(2),
      result: result.rounded(2),
      resultPercentage: percent(result, Rational.of(position.investedValue)),
      realizedResult: position.realizedResult,
      fees: position.fees,
      income: 0,
      incomeAnnounced: 0
    },
    monthlyHistory: history.map(({ month, appliedValue, ...entry }) => ({ ...entry, month: labels(month).long })),
    historicalChart: history.map(({ month, appliedValue, currentBalance }) =>
      ({ month: labels(month).short, appliedValue, grossBalance: currentBalance })),
    transactions: transactions.map(tx => ({
      id: tx.id,
      date: tx.date,
      type: tx.type,
      description: `${tx.type === 'BUY' ? 'Compra' : 'Venda'} de ${tx.quantity} SYM${index}`,
      quantity: tx.quantity,
      pricePerUnit: tx.price,
      totalValue: referenceValue(tx.quantity, tx.price),
      fee: tx.fee
    })),
    events: []
  }
}

t.test('every figure of every asset\'s dashboard is its recomputation from the trades, closes and quotes', async t => {
  const reached = {
    sales: 0, sameDay: 0, monthsWithoutClose: 0, estimatedCloses: 0, storedPrices: 0, withoutBenchmark: 0
  }
  fc.assert(fc.property(portfolio, ({ assets, benchmark }) => {
    const prices = pricesOf(assets)
    prices.forEach((own, index) => {
      const answer = buildDashboard({
        asset: {
          id: own.assetId,
          symbol: `SYM${index}`,
          name: `Asset ${index}`,
          quantity: referencePosition(inOrder(own.transactions))?.quantity ?? 0,
          imageUrl: 'https://x/y.svg'
        },
        portfolio: prices,
        benchmark,
        now: NOW
      })
      // As it is sent (JSON: a −0 is 0).
      deepStrictEqual(JSON.parse(JSON.stringify(answer)), expectedDashboard(prices, index, benchmark))
      const dates = own.transactions.map(tx => tx.date)
      if (own.transactions.some(tx => tx.type === 'SELL')) reached.sales++
      if (new Set(dates).size < dates.length) reached.sameDay++
      const closed = new Set(own.closes.map(close => close.month))
      if (monthsFrom(inOrder(own.transactions)[0]?.date.slice(0, 7) ?? CURRENT)
        .some(month => month < CURRENT && !closed.has(month))) reached.monthsWithoutClose++
      if (own.closes.some(close => close.estimated === true)) reached.estimatedCloses++
      if (own.origin.source === 'asset') reached.storedPrices++
      if (benchmark === undefined) reached.withoutBenchmark++
    })
  }), { numRuns: 300 })
  t.comment(JSON.stringify(reached))
  for (const [what, count] of Object.entries(reached)) t.ok(count > 0, `reached: ${what} (${count} dashboards)`)
})
