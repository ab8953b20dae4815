import { monthKey, monthsBetween, type MonthKey } from '../quotes/provider.js'
import { averagePrice, NO_POSITION, type Position } from '../schemas/average-cost.js'
import { dayKey, monthEndOf } from '../schemas/calendar.js'
import type { Dashboard } from '../schemas/dashboard.js'
import {
  decimal, money, percentage, positionValue, roundMoney, sum, unitAmount, type Decimal
} from '../schemas/money.js'
import type { AssetTransaction } from '../schemas/transaction.js'
import { entitlementsOf, eventAnswer, onDayBasis, replayedWith } from './asset-events.js'
import { NO_EVENTS, type EventBook } from './corporate-events.js'
import type { MonthClose } from './reais.js'

export type { Dashboard } from '../schemas/dashboard.js'

/**
 * What the dashboard reads of a transaction.
 * @internal Test seam: the property test generates them.
 */
export type DashboardTransaction = Pick<AssetTransaction, 'id' | 'type' | 'date' | 'quantity' | 'price' | 'fee'>

/** One asset of the portfolio, with its transactions and what is known of its prices, all in reais. */
export interface AssetPrices {
  assetId: string
  /** In the order they count (by date, then as recorded). */
  transactions: readonly DashboardTransaction[]
  /** The current quote (the last month's price). */
  lastQuote: number
  /** Who gave `lastQuote`. */
  origin: QuoteOrigin
  closes: readonly MonthClose[]
  /** Its symbol's corporate events (docs/api.md#corporate-events); none when absent. */
  events?: EventBook
}

/** Where a `lastQuote` came from: a provider's quote, or the asset's own stored price. */
interface QuoteOrigin {
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

/** A transaction's `description`: `Compra de 100 PETR4`, `Venda de 50 PETR4`. */
const DESCRIPTIONS = { BUY: 'Compra', SELL: 'Venda' } as const

const MONTHS = ['Jan', 'Fev', 'Mar', 'Abr', 'Mai', 'Jun', 'Jul', 'Ago', 'Set', 'Out', 'Nov', 'Dez']

/**
 * `2026-03` → `Mar.2026` (`monthlyHistory` labels `Mon.YYYY`, Portuguese month names).
 * @internal Test seam: every month's label is tested directly.
 */
export function longLabel (month: MonthKey): string {
  const [year, index] = month.split('-').map(Number) as [number, number]
  return `${MONTHS[index - 1] ?? ''}.${year}`
}

/**
 * `2026-03` → `Mar/26` (`historicalChart` labels `Mon/YY`).
 * @internal Test seam: every month's label is tested directly.
 */
export function shortLabel (month: MonthKey): string {
  const [year, index] = month.split('-').map(Number) as [number, number]
  return `${MONTHS[index - 1] ?? ''}/${String(year % 100).padStart(2, '0')}`
}

/** A month's price, and whether it is market data: the month's own close, or a provider's current quote. */
interface MonthPrice {
  price: number
  market: boolean
}

/**
 * The price of a month: the current quote in the current month (market data when `quoted`, the
 * provider's); before that, the last close at or before the month (a gap repeats the previous
 * close, which is not that month's); before any close, `fallback()` (never market data), asked
 * only then.
 */
function priceIn (
  month: MonthKey,
  current: MonthKey,
  lastQuote: number,
  closes: readonly MonthClose[],
  fallback: () => number,
  quoted: boolean
): MonthPrice {
  if (month === current) return { price: lastQuote, market: quoted }
  let found: MonthClose | undefined
  for (const entry of closes) {
    if (entry.month > month) break
    found = entry
  }
  if (found === undefined) return { price: fallback(), market: false }
  return { price: found.close, market: found.month === month && found.estimated !== true }
}

function byDate (a: DashboardTransaction, b: DashboardTransaction): number {
  return a.date < b.date ? -1 : a.date > b.date ? 1 : 0
}

/** A month's close is its last day's. */
function lastDayOf (close: MonthClose): string {
  return monthEndOf(`${close.month}-01`)
}

/** `quantity × price`, exact and rounded to cents. */
function valueOf (quantity: Decimal, price: number): Decimal {
  return roundMoney(quantity.times(price))
}

/**
 * The asset dashboard (docs/api.md#resources), computed from the stored transactions and the provider's
 * prices (rules and a worked example: docs/api.md#the-asset-dashboard), in exact decimals (docs/api.md#money):
 * - what is held is replayed from the transactions at average cost (docs/api.md#average-cost):
 *   investedValue = its cost (cents); averagePrice (8 decimals); grossValue = quantity × lastQuote
 *   (cents); result = grossValue − investedValue; resultPercentage = result / investedValue × 100
 *   (2 decimals); realizedResult = the sales' results less every fee; fees.
 * - one history entry per month from the first transaction's month to the current one, with what
 *   was held at the end of that month valued at that month's price.
 */
export function buildDashboard (input: DashboardInput): Dashboard {
  // Transactions in date order everywhere (of one date, as recorded): sums then add up in one order. Each asset
  // with the corporate events it follows, its closes on each month's share basis (docs/api.md#corporate-events).
  const today = dayKey(input.now)
  const sorted = input.portfolio.map(entry => ({ ...entry, transactions: [...entry.transactions].sort(byDate) }))
  const firstTransaction = sorted.find(entry => entry.assetId === input.asset.id)?.transactions[0]
  const current = monthKey(input.now)
  const months = firstTransaction === undefined ? [] : monthsBetween(firstTransaction.date.slice(0, 7), current)
  // What each asset of the portfolio held at the end of each month, the current one included, from one replay.
  const ends = [...months, current]
  const portfolio = sorted.map(entry => {
    const replayed = replayedWith(entry.transactions, { book: entry.events ?? NO_EVENTS, today }, ends)
    const positions = new Map(ends.map((month, index) => [month, replayed.positions[index] as Position]))
    return { ...entry, replayed, positions, closes: onDayBasis(entry.closes, lastDayOf, replayed.events) }
  })
  const own = portfolio.find(entry => entry.assetId === input.asset.id)
  if (own === undefined) throw new Error('the asset must be part of its portfolio')
  const transactions = own.transactions
  const holdingAt = (entry: typeof own, month: MonthKey): Position => entry.positions.get(month) ?? NO_POSITION
  const position = holdingAt(own, current)
  const invested = roundMoney(position.cost)
  const grossValue = valueOf(position.quantity, own.lastQuote)
  const result = grossValue.minus(invested)
  const entitled = entitlementsOf(own.replayed)
  const incomeOf = (status: string): Decimal =>
    sum(entitled.flatMap(({ cash }) => cash?.status === status ? [cash.net] : []))

  const benchmarkAt = (month: MonthKey): MonthPrice | undefined => {
    const benchmark = input.benchmark
    if (benchmark === undefined) return undefined
    return priceIn(
      month,
      current,
      benchmark.lastQuote,
      benchmark.closes,
      () => benchmark.closes[0]?.close ?? benchmark.lastQuote,
      true
    )
  }
  const benchmarkStart = months[0] === undefined ? undefined : benchmarkAt(months[0])

  // A position's average price, once: a division in big.js, asked of each asset's every month without a close (all
  // those before the range of history the provider gives: a third of a dashboard's CPU over 20 years), of a position
  // that changes only at a trade or an event (the replay answers the same object until then).
  const averages = new WeakMap<Position, number>()
  const averageOf = (holding: Position): number => {
    const kept = averages.get(holding)
    if (kept !== undefined) return kept
    const average = averagePrice(holding).toNumber()
    averages.set(holding, average)
    return average
  }

  const monthlyHistory: Dashboard['monthlyHistory'] = []
  const historicalChart: Dashboard['historicalChart'] = []
  for (const month of months) {
    let portfolioBalance = decimal(0)
    let balance = decimal(0)
    let held = NO_POSITION
    // A month is estimated when one of its figures rests on a price that is not market data.
    let estimated = false
    for (const entry of portfolio) {
      const holding = holdingAt(entry, month)
      if (holding.quantity.eq(0)) continue
      const fallback = (): number => averageOf(holding)
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
    const applied = roundMoney(held.cost)
    const benchmark = benchmarkAt(month)
    if (benchmark?.market !== true || benchmarkStart?.market !== true) estimated = true
    monthlyHistory.push({
      month: longLabel(month),
      currentBalance: balance.toNumber(),
      quantity: held.quantity.toNumber(),
      returnPercentage: percentage(balance.minus(applied), applied),
      portfolioPercentage: percentage(balance, portfolioBalance),
      ibovPercentage:
        benchmark === undefined || benchmarkStart === undefined
          ? 0
          : percentage(decimal(benchmark.price).minus(benchmarkStart.price), decimal(benchmarkStart.price)),
      estimated
    })
    historicalChart.push({
      month: shortLabel(month),
      appliedValue: applied.toNumber(),
      grossBalance: balance.toNumber()
    })
  }

  return {
    basicInfo: {
      ticker: input.asset.symbol,
      name: input.asset.name,
      imageUrl: input.asset.imageUrl,
      quantity: position.quantity.toNumber(),
      averagePrice: averagePrice(position).toNumber(),
      lastQuote: unitAmount(own.lastQuote),
      quoteSource: own.origin.source,
      quoteUpdatedAt: own.origin.lastUpdate,
      investedValue: invested.toNumber(),
      grossValue: grossValue.toNumber(),
      result: result.toNumber(),
      resultPercentage: percentage(result, invested),
      realizedResult: money(position.realized.minus(position.fees)),
      fees: money(position.fees),
      income: money(incomeOf('paid')),
      incomeAnnounced: money(incomeOf('announced'))
    },
    monthlyHistory,
    historicalChart,
    transactions: transactions.map(transaction => ({
      id: transaction.id,
      date: transaction.date,
      type: transaction.type,
      description: `${DESCRIPTIONS[transaction.type]} de ${transaction.quantity} ${input.asset.symbol}`,
      quantity: transaction.quantity,
      pricePerUnit: transaction.price,
      totalValue: money(positionValue(transaction.quantity, transaction.price)),
      fee: transaction.fee
    })),
    events: entitled.map(eventAnswer)
  }
}
