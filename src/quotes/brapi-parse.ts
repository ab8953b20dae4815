import type { FastifyBaseLogger } from 'fastify'
import { UpstreamUnavailableError } from '../errors.js'
import { unitAmount } from '../schemas/money.js'
import type { JsonObject, JsonValue, UpstreamResponse } from '../upstream/client.js'
import type { Close, ProviderQuote } from './provider.js'
import { dayKey } from '../schemas/calendar.js'

/** What brapi's answers must hold to be used: anything else is garbage, logged and answered 502. */
function isPrice (value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0
}

const CURRENCY = /^[A-Za-z]{3}$/
/**
 * A number whose shortest form has at most 8 decimals is a unit amount as it is: a daily history
 * holds thousands of closes, and this test takes a tenth of rounding each with big.js (about 1 µs).
 */
const EIGHT_PLACES = /^\d+(\.\d{1,8})?$/

export function unusable (log: FastifyBaseLogger, what: string): Error {
  log.warn({ upstream: 'brapi' }, `brapi answered ${what}`)
  return new UpstreamUnavailableError()
}

/**
 * What a status of brapi's means once its refusals are told apart (BrapiClient): 404 is an unknown
 * ticker or pair, 400 a refused request (a range or a batch the plan refuses, a coin brapi does not
 * have), a 2xx its body; any other status is 502, logged.
 */
export function answerOf (
  response: UpstreamResponse, log: FastifyBaseLogger
): 'unknown' | 'refused' | { body: JsonValue | undefined } {
  if (response.status === 404) return 'unknown'
  if (response.status === 400) return 'refused'
  if (response.status < 200 || response.status >= 300) {
    log.warn({ upstream: 'brapi', status: response.status }, 'brapi refused the request')
    throw new UpstreamUnavailableError()
  }
  return { body: response.body }
}

/** A time brapi gives as ISO 8601 text or Unix seconds, in ISO 8601; `fallback` when it gave none it could read. */
export function timeOf (value: JsonValue | undefined, fallback: Date): string {
  const seconds = typeof value === 'string' && /^\d{9,11}$/.test(value) ? Number(value) : value
  const at = typeof seconds === 'number' ? new Date(seconds * 1000) : new Date(typeof value === 'string' ? value : NaN)
  return (Number.isNaN(at.getTime()) ? fallback : at).toISOString()
}

/** A currency code as brapi gives it (`BRL`, `usd`), upper-cased; `undefined` for anything else. */
export function currencyOf (value: JsonValue | undefined): string | undefined {
  return typeof value === 'string' && CURRENCY.test(value) ? value.toUpperCase() : undefined
}

/**
 * A stock's result or a coin as a quote: a null price is "no quote", never a price of 0; a
 * negative or non-numeric price, or a quote without its currency (both SDKs require it: a sum
 * cannot tell what it would add), is garbage.
 */
export function quoteOf (
  result: JsonObject, symbol: string, log: FastifyBaseLogger, now: Date
): ProviderQuote | undefined {
  const price = result.regularMarketPrice
  if (price === null || price === undefined) return undefined
  if (!isPrice(price)) throw unusable(log, 'a price that is not a non-negative number')
  const currency = currencyOf(result.currency)
  if (currency === undefined) throw unusable(log, 'a price without its currency')
  // A unit price keeps at most 8 decimals (docs/api.md#money).
  return { symbol, price: unitAmount(price), currency, lastUpdate: timeOf(result.regularMarketTime, now) }
}

/** A close of brapi's as the service keeps it: a unit price. */
function unitPrice (close: number): number {
  return EIGHT_PLACES.test(String(close)) ? close : unitAmount(close)
}

/**
 * `historicalDataPrice` as closes from `since` (`YYYY-MM-DD`) on, oldest first: an entry without a
 * close (brapi's `null`: no trade, or no exchange rate that day for a coin) is a gap; a close that
 * is not a non-negative number is garbage. Several entries of one date: the last wins. A close is
 * `traded` (docs/api.md#corporate-events) when brapi gives its `rawClose` (`includeRaw=true`), which
 * is then the close, or when it differs from its `adjustedClose`: brapi's daily closes may come
 * restated for later events, equal to the adjusted ones.
 */
export function closesOf (history: JsonValue | undefined, since: string, log: FastifyBaseLogger): Close[] {
  if (!Array.isArray(history)) return []
  const closes: Close[] = []
  let ordered = true
  for (const entry of history) {
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) continue
    if (typeof entry.date !== 'number' || entry.close === null || entry.close === undefined) continue
    const at = new Date(entry.date * 1000)
    if (!isPrice(entry.close) || Number.isNaN(at.getTime())) throw unusable(log, 'a close it cannot read')
    const date = dayKey(at)
    if (date < since) continue
    const previous = closes.at(-1)
    if (previous !== undefined && previous.date >= date) ordered = false
    const raw = entry.rawClose
    if (raw !== null && raw !== undefined && !isPrice(raw)) throw unusable(log, 'a close it cannot read')
    if (isPrice(raw)) closes.push({ date, close: unitPrice(raw), traded: true })
    else if (isPrice(entry.adjustedClose) && entry.adjustedClose !== entry.close) {
      closes.push({ date, close: unitPrice(entry.close), traded: true })
    } else closes.push({ date, close: unitPrice(entry.close) })
  }
  // brapi answers in date order, a close a day: taken as they come; anything else sorted, the last of a date kept.
  if (ordered) return closes
  const byDate = new Map(closes.map(close => [close.date, close]))
  return [...byDate.values()].sort((a, b) => (a.date < b.date ? -1 : 1))
}
