import type { FastifyBaseLogger } from 'fastify'
import { jsonObject, type JsonValue } from '../upstream/client.js'
import type { BrapiClient } from './brapi-client.js'
import { answerOf, unusable } from './brapi-parse.js'
import type { PercentObservation } from './provider.js'
import { dayKey } from '../schemas/calendar.js'

/** brapi's economic indicators: each endpoint and the list its answer holds them in. */
export const INDICATORS = {
  selic: { path: 'api/v2/prime-rate', list: 'prime-rate', name: 'SELIC' },
  ipca: { path: 'api/v2/inflation', list: 'inflation', name: 'IPCA' }
} as const
export type Indicator = keyof typeof INDICATORS

/** A plan that refused an indicator (401/403) is asked again this much later (it may have been upgraded). */
export const INDICATOR_RETRY_MS = 60 * 60 * 1000

/** A percentage as brapi writes it (`"14.25"`, an IPCA month `"-0.02"`): a decimal, exact text. */
const PERCENT = /^-?\d{1,4}(\.\d{1,12})?$/

function percentOf (value: JsonValue | undefined): string | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value)
  return typeof value === 'string' && PERCENT.test(value) ? value : undefined
}

/** `DD/MM/YYYY`, the dates of brapi's indicators, as `YYYY-MM-DD`; `undefined` for anything else. */
function isoDayOf (value: JsonValue | undefined): string | undefined {
  const match = typeof value === 'string' ? /^(\d{2})\/(\d{2})\/(\d{4})$/.exec(value) : null
  return match === null ? undefined : `${match[3]}-${match[2]}-${match[1]}`
}

/** `YYYY-MM-DD` as brapi's query dates, `DD/MM/YYYY`. */
function brapiDayOf (day: string): string {
  const [year, month, date] = day.split('-')
  return `${date}/${month}/${year}`
}

/**
 * `GET /api/v2/prime-rate` (the SELIC target, percent a year, each day) or `/api/v2/inflation` (the
 * IPCA, percent, each month) from `since` to today, oldest first, as brapi's SDKs describe them
 * (`{"prime-rate": [{date: "DD/MM/YYYY", value: "14.25", epochDate}]}`). `'refused'` when the plan
 * has no such endpoint (401/403: brapi's cheaper plans); `undefined` when brapi has no series for
 * these dates (400, 404, an empty list); a value or date it cannot read is garbage (502).
 */
export async function indicatorSeries (
  brapi: Pick<BrapiClient, 'get'>,
  indicator: Indicator,
  since: string,
  log: FastifyBaseLogger,
  now: Date
): Promise<PercentObservation[] | undefined | 'refused'> {
  const { path, list } = INDICATORS[indicator]
  const query = { start: brapiDayOf(since), end: brapiDayOf(dayKey(now)), sortBy: 'date', sortOrder: 'asc' }
  const response = await brapi.get(path, query, log, { planRefusals: true })
  if (response.status === 401 || response.status === 403) return 'refused'
  const answer = answerOf(response, log)
  if (typeof answer === 'string') return undefined
  const entries = jsonObject(answer.body)?.[list]
  if (!Array.isArray(entries)) throw unusable(log, `a 2xx without its ${list}`)
  const observations: PercentObservation[] = []
  for (const entry of entries) {
    const observation = jsonObject(entry)
    const date = isoDayOf(observation?.date)
    const percent = percentOf(observation?.value)
    if (date === undefined || percent === undefined) throw unusable(log, `a ${list} entry it cannot read`)
    observations.push({ date, percent })
  }
  if (observations.length === 0) return undefined
  return observations.sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0))
}
