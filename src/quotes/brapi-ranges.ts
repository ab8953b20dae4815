import type { FastifyBaseLogger } from 'fastify'
import type { MonthKey } from './provider.js'
import { dayKey, monthsBefore } from '../schemas/calendar.js'

/** The months each of brapi's `range` values spans (`ytd` is counted when met: see {@link monthsOf}). */
const RANGE_MONTHS: Readonly<Record<string, number>> = {
  '1d': 0,
  '2d': 0,
  '5d': 0,
  '7d': 0,
  '1mo': 1,
  '3mo': 3,
  '6mo': 6,
  '1y': 12,
  '2y': 24,
  '5y': 60,
  '10y': 120,
  max: Infinity
}

/** What the service asks when a longer range is refused, longest first (docs/api.md#history-the-plan-refuses). */
const LADDER = ['max', '10y', '5y', '2y', '1y', '3mo'] as const

/** The months a range spans, `undefined` for a text that is no brapi range. */
export function monthsOf (range: string, now: Date): number | undefined {
  if (range === 'ytd') return now.getUTCMonth() + 1
  return RANGE_MONTHS[range]
}

/** brapi's `range` that covers `since` (monthly interval): the shortest of `1y`, `2y`, `5y`, `10y`, `max`. */
export function rangeCovering (since: MonthKey, now: Date): string {
  const [year, month] = since.split('-').map(Number) as [number, number]
  const months = (now.getUTCFullYear() - year) * 12 + (now.getUTCMonth() + 1 - month) + 1
  if (months <= 12) return '1y'
  if (months <= 24) return '2y'
  if (months <= 60) return '5y'
  if (months <= 120) return '10y'
  return 'max'
}

/**
 * brapi's `range` that covers the day `since` (daily interval): `1mo`, `3mo` or `6mo` when it
 * reaches back that far from today (the same day of the month, or that month's last when it has no
 * such day), else as {@link rangeCovering}.
 */
export function dayRangeCovering (since: string, now: Date): string {
  for (const [range, months] of [['1mo', 1], ['3mo', 3], ['6mo', 6]] as const) {
    if (monthsBefore(dayKey(now), months) <= since) return range
  }
  return rangeCovering(since.slice(0, 7), now)
}

/** The next range to ask after brapi refused `range`: the longest of the ladder shorter than it. */
export function shorterRange (range: string, now: Date): string | undefined {
  const months = monthsOf(range, now) ?? 0
  return LADDER.find(candidate => (monthsOf(candidate, now) ?? 0) < months)
}

/**
 * The longest history range brapi's plan gives, per endpoint, as learnt from its answers — a
 * refused range followed by a shorter one it served, or a `usedRange` shorter than asked — and
 * kept for the instance's life, so that a refused range is asked once.
 */
export class RangeLimits {
  private readonly longest = new Map<string, string>()

  constructor (private readonly now: () => Date) {}

  /** `wanted`, or the longest range the plan gives at `endpoint` when that is shorter. */
  within (endpoint: string, wanted: string): string {
    const longest = this.longest.get(endpoint)
    if (longest === undefined) return wanted
    return (monthsOf(longest, this.now()) ?? 0) < (monthsOf(wanted, this.now()) ?? 0) ? longest : wanted
  }

  /** Remembers that `endpoint` gives at most `range`. */
  learn (endpoint: string, range: string, log: FastifyBaseLogger): void {
    if (this.within(endpoint, range) !== range || this.longest.get(endpoint) === range) return
    this.longest.set(endpoint, range)
    log.info({ upstream: 'brapi', endpoint, range },
      'brapi\'s plan gives history up to this range: longer ones are no longer asked (months before are estimated)')
  }
}
