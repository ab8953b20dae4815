import { monthKey, monthsBetween, type MonthKey } from '../quotes/provider.js'
import type { Lot } from '../schemas/asset.js'
import type { Dashboard } from '../schemas/dashboard.js'
import {
  decimal, money, percentage, positionValue, roundMoney, sum, unitAmount, type Decimal
} from '../schemas/money.js'
import type { MonthClose } from './reais.js'

export type { Lot } from '../schemas/asset.js'
export type { Dashboard } from '../schemas/dashboard.js'

/** One asset of the portfolio, with what is known of its prices, all in reais. */
export interface AssetPrices {
  assetId: string
  lots: readonly Lot[]
  /** The current quote (the last month's price). */
  lastQuote: number
  /** Who gave `lastQuote`. */
  origin: QuoteOrigin
  closes: readonly MonthClose[]
}

/** Where a `lastQuote` came from: a provider's quote, or the asset's own stored price. */
export interface QuoteOrigin {
  /** The provider's name, as its quotes' `source` says it, or {@link STORED_PRICE_SOURCE}. */
  source: string
  /** When the provider last priced it; `null` for a stored price. */
  lastUpdate: string | null
}

/** The `quoteSource` of an asset the provider does not know, valued at its own stored price. */
export const STORED_PRICE_SOURCE = 'asset'

export interface DashboardInput {
  asset: { id: string, symbol: string, name: string, quantity: number, imageUrl: string }
  /** Every asset of the asset's portfolio, this one included. */
  portfolio: readonly AssetPrices[]
  benchmark: { lastQuote: number, closes: readonly MonthClose[] } | undefined
  now: Date
}

const MONTHS = ['Jan', 'Fev', 'Mar', 'Abr', 'Mai', 'Jun', 'Jul', 'Ago', 'Set', 'Out', 'Nov', 'Dez']

/** `2026-03` → `Mar.2026` (`monthlyHistory` labels `Mon.YYYY`, Portuguese month names). */
export function longLabel (month: MonthKey): string {
  const [year, index] = month.split('-').map(Number) as [number, number]
  return `${MONTHS[index - 1] ?? ''}.${year}`
}

/** `2026-03` → `Mar/26` (`historicalChart` labels `Mon/YY`). */
export function shortLabel (month: MonthKey): string {
  const [year, index] = month.split('-').map(Number) as [number, number]
  return `${MONTHS[index - 1] ?? ''}/${String(year % 100).padStart(2, '0')}`
}

function byDate (a: Lot, b: Lot): number {
  return a.date < b.date ? -1 : a.date > b.date ? 1 : 0
}

/** A month's price, and whether it is market data: the month's own close, or a provider's current quote. */
interface MonthPrice {
  price: number
  market: boolean
}

/**
 * The price of a month: the current quote in the current month (market data when `quoted`, the
 * provider's); before that, the last close at or before the month (a gap repeats the previous
 * close, which is not that month's); before any close, `fallback` (never market data).
 */
function priceIn (
  month: MonthKey,
  current: MonthKey,
  lastQuote: number,
  closes: readonly MonthClose[],
  fallback: number,
  quoted: boolean
): MonthPrice {
  if (month === current) return { price: lastQuote, market: quoted }
  let found: MonthPrice = { price: fallback, market: false }
  for (const entry of closes) {
    if (entry.month > month) break
    found = { price: entry.close, market: entry.month === month && entry.estimated !== true }
  }
  return found
}

interface Holding {
  quantity: Decimal
  /** The sum of the lots' values as answered (each rounded to cents), so the figures add up. */
  invested: Decimal
}

/** Quantity and invested value of the lots bought up to the end of `month`. */
function holdingAt (lots: readonly Lot[], month: MonthKey): Holding {
  const held = lots.filter(lot => lot.date.slice(0, 7) <= month)
  return {
    quantity: sum(held.map(lot => decimal(lot.quantity))),
    invested: sum(held.map(lot => positionValue(lot.quantity, lot.price)))
  }
}

/** `quantity × price`, exact and rounded to cents. */
function valueOf (quantity: Decimal, price: number): Decimal {
  return roundMoney(quantity.times(price))
}

/**
 * The asset dashboard (docs/api.md#resources), computed from the stored lots and the provider's prices
 * (rules and a worked example: docs/api.md#the-asset-dashboard), in exact decimals (docs/api.md#money):
 * - invested = Σ lot quantity × lot price (each rounded to cents, as `transactions` shows it);
 *   averagePrice = invested / quantity (8 decimals); grossValue = quantity × lastQuote (cents);
 *   result = grossValue − invested; resultPercentage = result / invested × 100 (2 decimals).
 * - one history entry per month from the first lot's month to the current one, with the lots
 *   held at the end of that month valued at that month's price.
 */
export function buildDashboard (input: DashboardInput): Dashboard {
  // Lots in date order everywhere: sums then add up in one order, whoever computes them.
  const portfolio = input.portfolio.map(entry => ({ ...entry, lots: [...entry.lots].sort(byDate) }))
  const own = portfolio.find(entry => entry.assetId === input.asset.id)
  if (own === undefined) throw new Error('the asset must be part of its portfolio')
  const lots = own.lots
  const current = monthKey(input.now)
  const firstLot = lots[0]

  const { quantity, invested } = holdingAt(lots, current)
  const grossValue = valueOf(quantity, own.lastQuote)
  const result = grossValue.minus(invested)

  const months = firstLot === undefined ? [] : monthsBetween(firstLot.date.slice(0, 7), current)
  const benchmarkAt = (month: MonthKey): MonthPrice | undefined => {
    const benchmark = input.benchmark
    if (benchmark === undefined) return undefined
    return priceIn(
      month,
      current,
      benchmark.lastQuote,
      benchmark.closes,
      benchmark.closes[0]?.close ?? benchmark.lastQuote,
      true
    )
  }
  const benchmarkStart = months[0] === undefined ? undefined : benchmarkAt(months[0])

  const monthlyHistory: Dashboard['monthlyHistory'] = []
  const historicalChart: Dashboard['historicalChart'] = []
  for (const month of months) {
    let portfolioBalance = decimal(0)
    let balance = decimal(0)
    let held: Holding = { quantity: decimal(0), invested: decimal(0) }
    // A month is estimated when one of its figures rests on a price that is not market data.
    let estimated = false
    for (const entry of portfolio) {
      const holding = holdingAt(entry.lots, month)
      if (holding.quantity.eq(0)) continue
      const fallback = unitAmount(holding.invested.div(holding.quantity))
      const quoted = entry.origin.source !== STORED_PRICE_SOURCE
      const { price, market } = priceIn(month, current, entry.lastQuote, entry.closes, fallback, quoted)
      if (!market) estimated = true
      const value = valueOf(holding.quantity, price)
      portfolioBalance = portfolioBalance.plus(value)
      if (entry === own) {
        balance = value
        held = holding
      }
    }
    const benchmark = benchmarkAt(month)
    if (benchmark?.market !== true || benchmarkStart?.market !== true) estimated = true
    monthlyHistory.push({
      month: longLabel(month),
      currentBalance: balance.toNumber(),
      quantity: held.quantity.toNumber(),
      returnPercentage: percentage(balance.minus(held.invested), held.invested),
      portfolioPercentage: percentage(balance, portfolioBalance),
      ibovPercentage:
        benchmark === undefined || benchmarkStart === undefined
          ? 0
          : percentage(decimal(benchmark.price).minus(benchmarkStart.price), decimal(benchmarkStart.price)),
      estimated
    })
    historicalChart.push({
      month: shortLabel(month),
      appliedValue: held.invested.toNumber(),
      grossBalance: balance.toNumber()
    })
  }

  return {
    basicInfo: {
      ticker: input.asset.symbol,
      name: input.asset.name,
      imageUrl: input.asset.imageUrl,
      quantity: input.asset.quantity,
      averagePrice: quantity.eq(0) ? 0 : unitAmount(invested.div(quantity)),
      lastQuote: unitAmount(own.lastQuote),
      quoteSource: own.origin.source,
      quoteUpdatedAt: own.origin.lastUpdate,
      investedValue: invested.toNumber(),
      grossValue: grossValue.toNumber(),
      result: result.toNumber(),
      resultPercentage: percentage(result, invested)
    },
    monthlyHistory,
    historicalChart,
    transactions: lots.map(lot => ({
      id: lot.id,
      date: lot.date,
      type: 'BUY' as const,
      description: `Compra de ${lot.quantity} ${input.asset.symbol}`,
      quantity: lot.quantity,
      pricePerUnit: lot.price,
      totalValue: money(positionValue(lot.quantity, lot.price))
    }))
  }
}
