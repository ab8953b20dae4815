import type { FastifyBaseLogger } from 'fastify'
import { leadingDay } from '../schemas/calendar.js'
import {
  labelOf, NO_PROVIDER_EVENTS, type ProviderCashEvent, type ProviderEvents, type ProviderStockEvent
} from '../schemas/corporate-events.js'
import { jsonObject, type JsonObject, type JsonValue } from '../upstream/client.js'
import { answerOf, unusable } from './brapi-parse.js'
import type { RawFields } from './brapi-raw.js'

/** brapi's dividends of stocks, several symbols a request (FIIs refused: 400). */
const DIVIDENDS_PATH = 'api/v2/stocks/dividends'

/**
 * A day as brapi writes it: ISO 8601 (`2024-04-15`, `2024-04-15T00:00:00.000Z`: the date as written, never moved
 * to another time zone) or `DD/MM/YYYY`; `null` for anything else.
 */
function eventDayOf (value: JsonValue | undefined): string | null {
  if (typeof value !== 'string') return null
  const brazilian = /^(\d{2})\/(\d{2})\/(\d{4})$/.exec(value)
  return leadingDay(brazilian === null ? value : `${brazilian[3]}-${brazilian[2]}-${brazilian[1]}`) ?? null
}

function numberOf (value: JsonValue | undefined): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null
}

function textOf (value: JsonValue | undefined): string | null {
  return typeof value === 'string' ? value : null
}

function objectsOf (list: JsonValue | undefined): JsonObject[] {
  if (!Array.isArray(list)) return []
  return list.flatMap(entry => {
    const object = jsonObject(entry)
    return object === undefined ? [] : [object]
  })
}

function stockEventOf (item: JsonObject): ProviderStockEvent {
  return {
    label: labelOf(textOf(item.label) ?? ''),
    factor: numberOf(item.factor),
    completeFactor: textOf(item.completeFactor),
    lastDatePrior: eventDayOf(item.lastDatePrior),
    exDate: eventDayOf(item.exDate),
    approvedOn: eventDayOf(item.approvedOn),
    isinCode: textOf(item.isinCode),
    assetIssued: textOf(item.assetIssued),
    remarks: textOf(item.remarks)
  }
}

function cashEventOf (item: JsonObject): ProviderCashEvent {
  return {
    label: labelOf(textOf(item.label) ?? ''),
    rate: numberOf(item.rate),
    rawRate: numberOf(item.rawRate),
    lastDatePrior: eventDayOf(item.lastDatePrior),
    exDate: eventDayOf(item.exDate),
    paymentDate: eventDayOf(item.paymentDate),
    approvedOn: eventDayOf(item.approvedOn),
    relatedTo: textOf(item.relatedTo),
    isinCode: textOf(item.isinCode),
    assetIssued: textOf(item.assetIssued),
    remarks: textOf(item.remarks)
  }
}

/**
 * brapi's `dividendsData` (its quote's, with `dividends=true`) or `data` (`/api/v2/stocks/dividends`): every field its
 * SDKs define, read as {@link ProviderStockEvent} and {@link ProviderCashEvent} say; whether an event can be applied
 * is the domain's to judge (src/domain/corporate-events.ts), so nothing is dropped here but what is no object.
 */
function providerEventsOf (data: JsonValue | undefined): ProviderEvents {
  const object = jsonObject(data)
  if (object === undefined) return NO_PROVIDER_EVENTS
  return {
    stock: objectsOf(object.stockDividends).map(stockEventOf),
    cash: objectsOf(object.cashDividends).map(cashEventOf)
  }
}

/** One answer's events by upper-cased ticker, as each result names it (its `requestedSymbol` too). */
function eventsByTicker (body: JsonValue | undefined, field: 'data' | 'dividendsData'): Map<string, ProviderEvents> {
  const results = jsonObject(body)?.results
  if (!Array.isArray(results)) return new Map()
  const byTicker = new Map<string, ProviderEvents>()
  for (const result of objectsOf(results)) {
    const events = providerEventsOf(result[field])
    for (const name of [result.symbol, result.requestedSymbol]) {
      if (typeof name === 'string') byTicker.set(name.toUpperCase(), events)
    }
  }
  return byTicker
}

/**
 * Corporate events of B3 tickers at brapi (docs/api.md#corporate-events): `/api/v2/stocks/dividends?symbols=A,B`, a
 * batch of up to `batchSize()` tickers, with `includeRaw=true` while the plan gives it ({@link RawFields}); a batch
 * refused (400: a FII among them, or a plan of one ticker a request) asked ticker by ticker; a ticker refused alone
 * (a FII) asked at `/api/quote/{ticker}?dividends=true`, as raw. A ticker brapi does not know (404, or left out of
 * the answer) has none. A refused token, a spent quota and brapi failing are the caller's errors (src/quotes/
 * brapi-client.ts).
 */
export class BrapiEvents {
  constructor (private readonly raw: RawFields, private readonly batchSize: () => number) {}

  async of (tickers: readonly string[], log: FastifyBaseLogger): Promise<Map<string, ProviderEvents>> {
    const size = this.batchSize()
    const chunks: string[][] = []
    for (let start = 0; start < tickers.length; start += size) chunks.push(tickers.slice(start, start + size))
    const answers = await Promise.all(chunks.map(async chunk => await this.chunk(chunk, log)))
    return new Map(answers.flatMap(answer => [...answer]))
  }

  private async chunk (tickers: readonly string[], log: FastifyBaseLogger): Promise<Map<string, ProviderEvents>> {
    const response = await this.raw.get(DIVIDENDS_PATH, { symbols: tickers.join(',') }, log)
    const answer = answerOf(response, log)
    if (answer === 'refused') {
      if (tickers.length > 1) {
        const alone = await Promise.all(tickers.map(async ticker => await this.chunk([ticker], log)))
        return new Map(alone.flatMap(answer => [...answer]))
      }
      return await this.fromQuote(tickers[0] as string, log)
    }
    if (answer !== 'unknown' && !Array.isArray(jsonObject(answer.body)?.results)) {
      throw unusable(log, 'dividends without their results')
    }
    const found = answer === 'unknown' ? new Map<string, ProviderEvents>() : eventsByTicker(answer.body, 'data')
    return new Map(tickers.map(ticker => [ticker, found.get(ticker.toUpperCase()) ?? NO_PROVIDER_EVENTS]))
  }

  /** A ticker the dividends of stocks refuse (a FII's): its quote's `dividendsData`. */
  private async fromQuote (ticker: string, log: FastifyBaseLogger): Promise<Map<string, ProviderEvents>> {
    const response = await this.raw.get(`api/quote/${encodeURIComponent(ticker)}`, { dividends: 'true' }, log)
    const answer = answerOf(response, log)
    if (typeof answer === 'string') return new Map([[ticker, NO_PROVIDER_EVENTS]])
    const results = jsonObject(answer.body)?.results
    const only = Array.isArray(results) && results.length === 1 ? jsonObject(results[0]) : undefined
    const events = eventsByTicker(answer.body, 'dividendsData').get(ticker.toUpperCase()) ??
      (only === undefined ? NO_PROVIDER_EVENTS : providerEventsOf(only.dividendsData))
    return new Map([[ticker, events]])
  }
}
