import { createHash } from 'node:crypto'
import { monthKey, monthsBetween, type MonthKey } from './provider.js'
import { dayKey, monthEndOf, weekdaysBetween } from '../schemas/calendar.js'

/*
 * The offline provider's simulated series (./offline.ts): deterministic walks seeded by SHA-256 of
 * their name, generated forward from January 2000, so past months never change.
 */

/** The simulated series start here. */
const FIRST_MONTH: MonthKey = '2000-01'

/** A small seeded PRNG (mulberry32): the same seed always draws the same numbers. */
function random (seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** The PRNG seeded by the SHA-256 of `key`. */
export function seeded (key: string): () => number {
  return random(createHash('sha256').update(key).digest().readUInt32BE(0))
}

export function rounded (value: number, decimals: number): number {
  const scale = 10 ** decimals
  return Math.round(value * scale) / scale
}

/**
 * Monthly closes of `key` from {@link FIRST_MONTH} to `now`'s month wandering around a level
 * (`fallbackLevel` of the first draw): log(price / level) follows x ← 0.9·x + noise, monthly moves
 * of a few percent, never far from the level.
 */
export function monthlyWalk (
  key: string, fallbackLevel: (drawn: number) => number, decimals: number, now: Date
): Array<[MonthKey, number]> {
  const next = seeded(key)
  const level = fallbackLevel(next())
  let deviation = 0
  return monthsBetween(FIRST_MONTH, monthKey(now)).map(month => {
    deviation = 0.9 * deviation + (next() - 0.5) * 0.12
    return [month, rounded(level * Math.exp(deviation), decimals)]
  })
}

/** The weekdays (Monday to Friday) of `month`, up to `until` (`YYYY-MM-DD`) when the month reaches it. */
function weekdaysOf (month: MonthKey, until: string): string[] {
  const monthEnd = monthEndOf(`${month}-01`)
  return weekdaysBetween(`${month}-01`, monthEnd < until ? monthEnd : until)
}

/**
 * Daily closes, on weekdays, of a monthly walk from the month of `since` on (only days from `since`):
 * within each month a path from the previous month's close to the month's own — a geometric line
 * with a seeded wobble that starts and ends at zero — so the month's last weekday (today, in the
 * current month) closes at the monthly close: the daily and monthly series agree, and today's
 * close is the current quote.
 */
export function dailyBridge (
  key: string, monthly: ReadonlyArray<[MonthKey, number]>, decimals: number, since: string, now: Date
): Array<[string, number]> {
  const today = dayKey(now)
  const days: Array<[string, number]> = []
  monthly.forEach(([month, close], index) => {
    if (month < since.slice(0, 7)) return
    const previous = monthly[index - 1]?.[1] ?? close
    const weekdays = weekdaysOf(month, today)
    const next = seeded(`${key} ${month}`)
    let wobble = 0
    const wobbles = weekdays.map(() => (wobble += (next() - 0.5) * 0.02))
    const last = wobbles.at(-1) ?? 0
    weekdays.forEach((day, position) => {
      const share = (position + 1) / weekdays.length
      const value = position === weekdays.length - 1
        ? close
        : rounded(previous * (close / previous) ** share * Math.exp((wobbles[position] ?? 0) - share * last), decimals)
      if (day >= since) days.push([day, value])
    })
  })
  return days
}

/** The COPOM decides every six weeks: the simulated SELIC target changes on these days. */
const MEETING_EVERY_DAYS = 42

/**
 * A simulated SELIC target (percent a year, two decimals) in force each weekday from `since` to
 * today: from 19 % in January 2000, each meeting moves it by −0.5 to +0.5 point, drawn towards
 * 10.5 % and kept within 2–20 %.
 */
export function simulatedSelic (since: string, now: Date): Array<[string, string]> {
  const next = seeded('SELIC')
  const [first, last] = [Date.parse(since), Date.parse(dayKey(now))]
  const days: Array<[string, string]> = []
  let target = 19
  const day = new Date(Date.UTC(2000, 0, 3))
  for (let untilMeeting = MEETING_EVERY_DAYS; day.getTime() <= last; day.setUTCDate(day.getUTCDate() + 1)) {
    if (--untilMeeting === 0) {
      untilMeeting = MEETING_EVERY_DAYS
      const step = Math.round((next() - 0.5 + (10.5 - target) / 40) * 4) / 4
      target = Math.min(20, Math.max(2, target + Math.max(-0.5, Math.min(0.5, step))))
    }
    if (day.getTime() >= first && day.getUTCDay() !== 0 && day.getUTCDay() !== 6) {
      days.push([dayKey(day), target.toFixed(2)])
    }
  }
  return days
}

/** IBGE publishes a month's IPCA about this many days after the month ends. */
const IPCA_PUBLISHED_AFTER_DAYS = 10

/**
 * A simulated IPCA: each month's variation (percent, two decimals, around 0.4 %, now and then
 * negative) from `since`'s month to the last month published by `now`, dated the month's first day.
 */
export function simulatedIpca (since: string, now: Date): Array<[string, string]> {
  const next = seeded('IPCA')
  const published = new Date(now.getTime() - IPCA_PUBLISHED_AFTER_DAYS * 24 * 60 * 60 * 1000)
  const lastMonth = monthKey(new Date(Date.UTC(published.getUTCFullYear(), published.getUTCMonth() - 1, 1)))
  return monthsBetween(FIRST_MONTH, lastMonth).flatMap(month => {
    const variation = rounded(0.4 + (next() - 0.5) * 0.8, 2)
    return month >= since.slice(0, 7) ? [[`${month}-01`, variation.toFixed(2)] as [string, string]] : []
  })
}
