/*
 * Days as `YYYY-MM-DD` text in UTC, as transactions and closes carry them: what a performance
 * (./performance-calculation.ts) counts with. Text compares in date order.
 */

const DAY_MS = 24 * 60 * 60 * 1000

function dateOf (day: string): Date {
  return new Date(`${day}T00:00:00.000Z`)
}

function keyOf (date: Date): string {
  return date.toISOString().slice(0, 10)
}

/** `day` moved by `days` (negative: before). */
export function addDays (day: string, days: number): string {
  return keyOf(new Date(dateOf(day).getTime() + days * DAY_MS))
}

/** The same day of the month `months` months before `day`, or that month's last day when it has no such day. */
export function monthsBefore (day: string, months: number): string {
  const [year, month, date] = day.split('-').map(Number) as [number, number, number]
  const lastDay = new Date(Date.UTC(year, month - 1 - months + 1, 0)).getUTCDate()
  return keyOf(new Date(Date.UTC(year, month - 1 - months, Math.min(date, lastDay))))
}

/** Monday to Friday. */
export function isWeekday (day: string): boolean {
  const weekday = dateOf(day).getUTCDay()
  return weekday !== 0 && weekday !== 6
}

/** Every weekday from `first` to `last`, both included. */
export function weekdaysBetween (first: string, last: string): string[] {
  const days: string[] = []
  for (let time = dateOf(first).getTime(), end = dateOf(last).getTime(); time <= end; time += DAY_MS) {
    const day = keyOf(new Date(time))
    if (isWeekday(day)) days.push(day)
  }
  return days
}

/** The Monday of `day`'s week (weeks run Monday to Sunday, as ISO 8601's). */
export function weekOf (day: string): string {
  return addDays(day, -((dateOf(day).getUTCDay() + 6) % 7))
}

/** The last day of `day`'s month. */
export function monthEndOf (day: string): string {
  const [year, month] = day.split('-').map(Number) as [number, number]
  return keyOf(new Date(Date.UTC(year, month, 0)))
}

/** The index of the last of `sorted` days at or before `day`; -1 when none is. */
export function lastAtOrBefore (sorted: readonly string[], day: string): number {
  let [low, high] = [0, sorted.length - 1]
  let found = -1
  while (low <= high) {
    const middle = (low + high) >> 1
    if ((sorted[middle] as string) <= day) {
      found = middle
      low = middle + 1
    } else {
      high = middle - 1
    }
  }
  return found
}
