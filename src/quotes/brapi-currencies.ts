import type { FastifyBaseLogger } from 'fastify'
import Big from 'big.js'
import { jsonObject, type JsonValue } from '../upstream/client.js'
import type { BrapiClient } from './brapi-client.js'
import { answerOf, currencyOf, timeOf, unusable } from './brapi-parse.js'
import { REAIS, type ExchangeRate, type HistoryQuery, type RateObservation } from './provider.js'
import { dayKey } from '../schemas/calendar.js'

/** A rate as brapi writes it (`"5.4321"`): a positive decimal. */
const DECIMAL = /^\d{1,9}(\.\d{1,12})?$/

function positiveDecimal (value: JsonValue | undefined): string | undefined {
  if (typeof value === 'number' && Number.isFinite(value) && value > 0) return new Big(value).toString()
  return typeof value === 'string' && DECIMAL.test(value) && new Big(value).gt(0) ? value : undefined
}

/**
 * `GET /api/v2/currency?currency=USD-BRL,EUR-BRL`: what one unit of each currency is worth in
 * reais now, brapi's `bidPrice` (text, kept as exact decimal text). A pair brapi does not answer
 * (or answers 400/404) has no rate; a `bidPrice` that is not a positive decimal is garbage.
 */
export async function exchangeRates (
  brapi: Pick<BrapiClient, 'get'>,
  currencies: readonly string[],
  log: FastifyBaseLogger,
  now: Date
): Promise<Map<string, ExchangeRate | undefined>> {
  const rates = new Map<string, ExchangeRate | undefined>(currencies.map(currency => [currency, undefined]))
  if (currencies.length === 0) return rates
  const pairs = currencies.map(currency => `${currency}-${REAIS}`).join(',')
  const answer = answerOf(await brapi.get('api/v2/currency', { currency: pairs }, log), log)
  if (typeof answer === 'string') return rates
  const list = jsonObject(answer.body)?.currency
  if (!Array.isArray(list)) throw unusable(log, 'a 2xx without a currency')
  for (const entry of list) {
    const pair = jsonObject(entry)
    const from = currencyOf(pair?.fromCurrency)
    if (pair === undefined || from === undefined || !rates.has(from) || currencyOf(pair.toCurrency) !== REAIS) continue
    const rate = positiveDecimal(pair.bidPrice)
    if (rate === undefined) throw unusable(log, 'a bidPrice that is not a positive decimal')
    rates.set(from, { currency: from, rate, lastUpdate: timeOf(pair.updatedAtTimestamp, now) })
  }
  return rates
}

const DAY_MS = 24 * 60 * 60 * 1000

/**
 * `GET /api/v2/currency/historical?currency=USD-BRL&startDate=…`: the Central Bank's closing PTAX
 * of each business day since `query.since`, oldest first (brapi's daily series whatever the
 * interval asked). `undefined` when brapi has none for the pair: a 400 or 404, or the pair among
 * the answer's `errors` (a pair outside the plan).
 */
export async function rateObservations (
  brapi: Pick<BrapiClient, 'get'>,
  currency: string,
  query: HistoryQuery,
  log: FastifyBaseLogger,
  now: Date
): Promise<RateObservation[] | undefined> {
  const pair = `${currency}-${REAIS}`
  const days = Math.max(1, Math.ceil((now.getTime() - Date.parse(query.since)) / DAY_MS) + 1)
  const answer = answerOf(await brapi.get('api/v2/currency/historical', {
    currency: pair, startDate: query.since, endDate: dayKey(now), sortOrder: 'asc', limit: days
  }, log), log)
  if (typeof answer === 'string') return undefined
  const results = jsonObject(answer.body)?.results
  const series = Array.isArray(results) ? results.map(jsonObject).find(result => result?.pair === pair) : undefined
  if (series === undefined || !Array.isArray(series.observations)) return undefined
  const observations: RateObservation[] = []
  for (const entry of series.observations) {
    const observation = jsonObject(entry)
    const date = typeof observation?.date === 'string' ? observation.date.slice(0, 10) : ''
    const rate = positiveDecimal(observation?.value)
    if (!/^\d{4}-\d{2}-\d{2}$/.test(date) || rate === undefined) throw unusable(log, 'a rate history it cannot read')
    observations.push({ date, rate })
  }
  return observations.sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0))
}
