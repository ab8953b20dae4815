import { addDays, dayKey, isWeekday, monthEndOf } from '../schemas/calendar.js'
import {
  NO_PROVIDER_EVENTS, type ProviderCashEvent, type ProviderEvents, type ProviderStockEvent
} from '../schemas/corporate-events.js'
import { monthKey, monthsBetween } from './provider.js'
import { rounded, seeded } from './offline-series.js'

/*
 * The offline provider's corporate events (docs/api.md#corporate-events), simulated and deterministic: each series
 * follows a calendar rule from its first year, so past events never change, and none of them is a market fact.
 *
 * - ITUB4: a bonus issue of 10 % (`BONIFICACAO`, factor 10, `11 para 10`) each March from 2021, and a JCP of
 *   R$ 0.01765 a share each month from 2020, paid on the first weekday of the month after the next;
 * - BBAS3: a 2 for 1 split (`DESDOBRAMENTO`) each April of odd years from 2021 and a 1 for 2 grouping (`GRUPAMENTO`)
 *   each April of even years from 2022; a dividend (February, August) or JCP (May, November) each quarter from 2020,
 *   paid on the last weekday of the next month;
 * - HGLG11: a rendimento each month from 2020, paid on the 14th of the next month (the next weekday).
 *
 * A month's data com is its last weekday, a stock event's the last weekday on or before the 15th, a quarter's the
 * last weekday on or before the 20th; the ex-date the next weekday. Rates are on the day's scale (`rawRate`), and
 * `rate` on the scale of today's shares, as brapi gives them; the closes of these symbols are each day's traded
 * prices (src/quotes/offline.ts).
 */

const FIRST_YEAR = 2020

/** The last weekday on or before `day`. */
function weekdayAtOrBefore (day: string): string {
  let found = day
  while (!isWeekday(found)) found = addDays(found, -1)
  return found
}

/** The first weekday on or after `day`. */
function weekdayOnOrAfter (day: string): string {
  let found = day
  while (!isWeekday(found)) found = addDays(found, 1)
  return found
}

/** The first weekday after `day`. */
function weekdayAfter (day: string): string {
  return weekdayOnOrAfter(addDays(day, 1))
}

/** The first of the month `months` after `month`'s. */
function monthAfter (month: string, months: number): string {
  const [year, index] = month.split('-').map(Number) as [number, number]
  return dayKey(new Date(Date.UTC(year, index - 1 + months, 1)))
}

function stockEvent (label: string, factor: number, completeFactor: string, dataCom: string): ProviderStockEvent {
  return {
    label,
    factor,
    completeFactor,
    lastDatePrior: dataCom,
    exDate: weekdayAfter(dataCom),
    approvedOn: addDays(dataCom, -30),
    isinCode: null,
    assetIssued: null,
    remarks: 'Simulado (offline)'
  }
}

/** The stock events of `symbol` from its first year to `now`'s year, whatever their dates. */
function stockEventsOf (symbol: string, now: Date): ProviderStockEvent[] {
  const years = Array.from({ length: now.getUTCFullYear() - FIRST_YEAR }, (_, index) => FIRST_YEAR + 1 + index)
  if (symbol === 'ITUB4') {
    return years.map(year => stockEvent('BONIFICACAO', 10, '11 para 10', weekdayAtOrBefore(`${year}-03-15`)))
  }
  if (symbol === 'BBAS3') {
    return years.map(year => year % 2 === 1
      ? stockEvent('DESDOBRAMENTO', 2, '2 para 1', weekdayAtOrBefore(`${year}-04-15`))
      : stockEvent('GRUPAMENTO', 0.5, '1 para 2', weekdayAtOrBefore(`${year}-04-15`)))
  }
  return []
}

/** Shares after ÷ before of the simulated stock events (a completeFactor `a para b`: a ÷ b). */
function ratioOf (event: ProviderStockEvent): number {
  const [after, before] = (event.completeFactor ?? '1 para 1').split(' para ').map(Number) as [number, number]
  return after / before
}

/**
 * What a price of a day is multiplied by to be on that day's share basis, from one on today's: the product of the
 * ratios of the simulated stock events of `symbol` that took effect after it, by `now`.
 */
export function tradedFactors (symbol: string, now: Date): (day: string) => number {
  const today = dayKey(now)
  const effects = stockEventsOf(symbol, now).filter(event => (event.exDate as string) <= today)
    .map(event => [event.exDate as string, ratioOf(event)] as const)
  return day => effects.reduce((factor, [effective, ratio]) => effective > day ? factor * ratio : factor, 1)
}

interface CashRule {
  label: string
  /** The data com of `month`'s event; undefined when the month has none. */
  dataCom: (month: string) => string | undefined
  payment: (month: string) => string
  rawRate: (month: string) => number
}

const CASH_RULES: Readonly<Record<string, readonly CashRule[]>> = {
  ITUB4: [{
    label: 'JCP',
    dataCom: month => weekdayAtOrBefore(monthEndOf(`${month}-01`)),
    payment: month => weekdayOnOrAfter(monthAfter(month, 2)),
    rawRate: () => 0.01765
  }],
  BBAS3: [
    { label: 'DIVIDENDO', months: [2, 8] }, { label: 'JCP', months: [5, 11] }
  ].map(({ label, months }): CashRule => ({
    label,
    dataCom: month => months.includes(Number(month.slice(5))) ? weekdayAtOrBefore(`${month}-20`) : undefined,
    payment: month => weekdayAtOrBefore(addDays(monthAfter(month, 2), -1)),
    rawRate: month => rounded(0.4 + seeded(`BBAS3 ${label} ${month}`)() * 0.2, 2)
  })),
  HGLG11: [{
    label: 'RENDIMENTO',
    dataCom: month => weekdayAtOrBefore(monthEndOf(`${month}-01`)),
    payment: month => weekdayOnOrAfter(addDays(monthAfter(month, 1), 13)),
    rawRate: month => rounded(1.02 + seeded(`HGLG11 ${month}`)() * 0.16, 2)
  }]
}

/** Symbols the offline provider gives events of: their closes are each day's traded prices. */
export const OFFLINE_EVENT_SYMBOLS: ReadonlySet<string> = new Set(Object.keys(CASH_RULES))

/** The simulated events of `symbol` (upper-cased) from 2020 to `now`'s month; none for any other symbol. */
export function offlineEvents (symbol: string, now: Date): ProviderEvents {
  const rules = CASH_RULES[symbol]
  if (rules === undefined) return NO_PROVIDER_EVENTS
  const factorOn = tradedFactors(symbol, now)
  const cash: ProviderCashEvent[] = []
  for (const month of monthsBetween(`${FIRST_YEAR}-01`, monthKey(now))) {
    for (const rule of rules) {
      const dataCom = rule.dataCom(month)
      if (dataCom === undefined) continue
      const rawRate = rule.rawRate(month)
      cash.push({
        label: rule.label,
        rate: rounded(rawRate / factorOn(dataCom), 8),
        rawRate,
        lastDatePrior: dataCom,
        exDate: weekdayAfter(dataCom),
        paymentDate: rule.payment(month),
        approvedOn: addDays(dataCom, -10),
        relatedTo: month,
        isinCode: null,
        assetIssued: null,
        remarks: 'Simulado (offline)'
      })
    }
  }
  return { stock: stockEventsOf(symbol, now), cash }
}
