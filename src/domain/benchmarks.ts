import Big from 'big.js'
import type { PercentObservation } from '../quotes/provider.js'
import { decimal, money, percentage, type Decimal } from '../schemas/money.js'
import { lastAtOrBefore, monthEndOf } from '../schemas/calendar.js'

/*
 * What a portfolio's performance is compared with (docs/api.md#performance), each a percentage
 * over the performance's dates, 2 decimals, rounded half away from zero once from the exact value.
 */

/** big.js's rounding half away from zero. */
const HALF_AWAY_FROM_ZERO = 1
/** The Central Bank's daily SELIC factor has 8 decimals, the accumulated factor 16 (truncated). */
const FACTOR_SCALE = 10n ** 8n
const PRODUCT_SCALE = 10n ** 16n

/** `(to − from) / from × 100`, 2 decimals, rounded once from the exact quotient; 0 when `from` is 0. */
export function percentChange (from: Decimal, to: Decimal): number {
  return percentage(to.minus(from), from)
}

/** An accumulated factor (1.0512…) as the percentage it adds (5.12). */
function percentOfFactor (factor: Decimal): number {
  return money(factor.minus(1).times(100))
}

/**
 * The SELIC accumulated over `businessDays` (the days after the performance's `from`, up to its
 * `to`), as the Central Bank accumulates it: each business day's factor is (1 + the target in force
 * that day / 100)^(1/252), rounded to 8 decimals, and the product is truncated to 16 decimals after
 * each day. The target in force is the last one `rates` gives on or before the day. `null` without
 * a target in force on the first day (the provider gives no SELIC, or not that far back).
 */
export function selicChange (
  rates: readonly PercentObservation[] | undefined, businessDays: readonly string[]
): number | null {
  if (businessDays.length === 0) return 0
  if (rates === undefined) return null
  const dates = rates.map(rate => rate.date)
  if (lastAtOrBefore(dates, businessDays[0] as string) === -1) return null
  // Integers of 10⁻⁸ (the factors) and 10⁻¹⁶ (the product): each day's product truncated exactly, in a
  // tenth of big.js's time — 20 years of business days are 5 000 of them (bench/performance.ts).
  const factors = new Map<string, bigint>()
  let accumulated = PRODUCT_SCALE
  for (const day of businessDays) {
    const percent = (rates[lastAtOrBefore(dates, day)] as PercentObservation).percent
    let factor = factors.get(percent)
    if (factor === undefined) {
      // The 252nd root has no exact decimal: a double's 16 digits, rounded to the 8 the Central Bank keeps.
      const root = new Big((1 + Number(percent) / 100) ** (1 / 252)).round(8, HALF_AWAY_FROM_ZERO)
      factor = BigInt(root.times(FACTOR_SCALE.toString()).toFixed(0))
      factors.set(percent, factor)
    }
    accumulated = accumulated * factor / FACTOR_SCALE
  }
  return percentOfFactor(decimal(accumulated.toString()).div(PRODUCT_SCALE.toString()))
}

/**
 * The IPCA accumulated from `from` to `to`: the product of (1 + variation / 100) of each month that
 * ended after `from` and by `to` — the months IBGE measured within the dates — of those the provider
 * gives (a month not yet published is not counted). `null` when it gives none of them.
 */
export function ipcaChange (
  months: readonly PercentObservation[] | undefined, from: string, to: string
): number | null {
  if (from === to) return 0
  let accumulated: Decimal | undefined
  for (const { date, percent } of months ?? []) {
    const end = monthEndOf(date)
    if (end <= from || end > to) continue
    accumulated = (accumulated ?? decimal(1)).times(decimal(percent).div(100).plus(1))
  }
  return accumulated === undefined ? null : percentOfFactor(accumulated)
}
