import Big from 'big.js'

/**
 * Exact money (docs/api.md#money). Quantities and unit prices have at most 8 decimals; every other
 * amount has at most 2, rounded half away from zero from the exact decimal value — never from a
 * binary float. JSON numbers arrive as doubles: a double's shortest decimal form (what
 * `String(n)` prints, and what big.js reads) is the decimal the client wrote, for every value
 * of up to 15 significant digits, so the arithmetic starts from what was sent.
 */
export const UNIT_DECIMALS = 8
export const MONEY_DECIMALS = 2
/** big.js's ROUND_HALF_UP: to the nearest neighbour, away from zero when equidistant. */
const HALF_AWAY_FROM_ZERO = 1

export type Decimal = Big

export function decimal (value: number | string | Big): Big {
  return new Big(value)
}

/** Decimal places in the shortest decimal form of `value` (`0.1` → 1, `1e-9` → 9). */
export function decimalsOf (value: number): number {
  if (!Number.isFinite(value)) return Infinity
  const big = new Big(value)
  return Math.max(0, big.c.length - big.e - 1)
}

/** An exact amount rounded to cents, half away from zero. */
export function roundMoney (value: Big): Big {
  return value.round(MONEY_DECIMALS, HALF_AWAY_FROM_ZERO)
}

/** An amount of money as answered: 2 decimals, half away from zero. */
export function money (value: Big): number {
  return roundMoney(value).toNumber()
}

/** A quantity or a unit price as answered: 8 decimals, half away from zero. */
export function unitAmount (value: Big | number): number {
  return new Big(value).round(UNIT_DECIMALS, HALF_AWAY_FROM_ZERO).toNumber()
}

/** `quantity × price` of one position, exact and then rounded to cents. */
export function positionValue (quantity: number, price: number): Big {
  return roundMoney(new Big(quantity).times(price))
}

/** An amount already rounded to cents, as the integer cents the store keeps for exact sums. */
export function toCents (value: Big): number {
  return value.times(100).toNumber()
}

/** The same value in integer cents. */
export function positionCents (quantity: number, price: number): number {
  return toCents(positionValue(quantity, price))
}

/**
 * Integer cents (PostgreSQL answers a bigint or a sum as text) as an amount of money. Below 2^53
 * (about 90 trillion BRL) the integer is exact and one correctly rounded division gives the
 * double whose shortest form is the 2-decimal amount — no decimal library needed.
 */
export function fromCents (cents: number | string): number {
  return Number(cents) / 100
}

/** big.js constructors whose division rounds to a number of decimals, half away from zero: one per number. */
const dividers = new Map<number, typeof Big>()

/**
 * `dividend / divisor` to `decimals` places, rounded half away from zero from the exact quotient:
 * big.js divides to its constructor's `DP` places with its `RM`, looking at the remainder, so a
 * quotient such as 1/3 is rounded once, never from a longer rounded expansion.
 */
export function quotient (dividend: Big, divisor: Big | number, decimals: number): Big {
  let Divider = dividers.get(decimals)
  if (Divider === undefined) {
    Divider = Big()
    Divider.DP = decimals
    Divider.RM = HALF_AWAY_FROM_ZERO
    dividers.set(decimals, Divider)
  }
  return new Divider(dividend).div(divisor)
}

/** `part / whole × 100`, 2 decimals rounded once from the exact quotient ({@link quotient}); 0 for a zero whole. */
export function percentage (part: Big, whole: Big): number {
  return whole.eq(0) ? 0 : money(quotient(part.times(100), whole, 2))
}

export function sum (values: Iterable<Big>): Big {
  let total = new Big(0)
  for (const value of values) total = total.plus(value)
  return total
}
