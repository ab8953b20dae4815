import type { FastifyBaseLogger } from 'fastify'
import { jsonObject, type JsonObject, type UpstreamClient } from '../upstream/client.js'
import { UpstreamUnavailableError } from '../errors.js'
import { unitAmount } from '../money.js'
import { monthKey, type MonthKey, type MonthlyClose, type ProviderQuote, type QuoteProvider } from './provider.js'

function isPrice (value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0
}

function unusable (log: FastifyBaseLogger, what: string): Error {
  log.warn({ upstream: 'brapi' }, `brapi answered ${what}`)
  return new UpstreamUnavailableError()
}

/** brapi's `range` that covers `since` (monthly interval), from UPSTREAMS §2's list. */
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
 * brapi.dev (UPSTREAMS §2): `GET /api/quote/{ticker}` with the token as a Bearer header (never
 * in the query, where it would end up in logs). A 404 means the ticker is unknown, a `null`
 * price that brapi has no quote for it; other failures are 502/504 like the relays, and so is
 * an answer the service cannot use (a 2xx without a result, a negative price): logged, never
 * served.
 */
export class BrapiQuotes implements QuoteProvider {
  readonly source = 'brapi.dev'

  constructor (private readonly client: UpstreamClient, private readonly token: string | undefined, private readonly now: () => Date = () => new Date()) {}

  private async result (symbol: string, log: FastifyBaseLogger, query?: Record<string, string>): Promise<JsonObject | undefined> {
    const response = await this.client.call({
      method: 'GET',
      // The ticker matched TICKER_PATTERN; encoding keeps `^` (and anything else) inside one segment.
      path: `api/quote/${encodeURIComponent(symbol)}`,
      query,
      headers: { accept: 'application/json', ...(this.token === undefined ? {} : { authorization: `Bearer ${this.token}` }) },
      log
    })
    if (response.status === 404 || response.status === 400) return undefined
    if (response.status < 200 || response.status >= 300) {
      log.warn({ upstream: 'brapi', status: response.status }, 'brapi refused the request')
      throw new UpstreamUnavailableError()
    }
    const results = jsonObject(response.body)?.results
    const result = jsonObject(Array.isArray(results) ? results[0] : undefined)
    if (result === undefined) throw unusable(log, 'a 2xx without a result')
    return result
  }

  async quote (symbol: string, log: FastifyBaseLogger): Promise<ProviderQuote | undefined> {
    const result = await this.result(symbol, log)
    const price = result?.regularMarketPrice
    // A null price is "no quote", never a price of 0.
    if (result === undefined || price === null || price === undefined) return undefined
    if (!isPrice(price)) throw unusable(log, 'a price that is not a non-negative number')
    const time = result.regularMarketTime
    return {
      symbol: typeof result.symbol === 'string' ? result.symbol : symbol,
      // A unit price keeps at most 8 decimals (CONTRACT §11).
      price: unitAmount(price),
      currency: typeof result.currency === 'string' ? result.currency : 'BRL',
      lastUpdate: typeof time === 'string' && !Number.isNaN(Date.parse(time)) ? new Date(time).toISOString() : this.now().toISOString()
    }
  }

  async monthlyCloses (symbol: string, since: MonthKey, log: FastifyBaseLogger): Promise<MonthlyClose[] | undefined> {
    const result = await this.result(symbol, log, { range: rangeCovering(since, this.now()), interval: '1mo' })
    const history = result?.historicalDataPrice
    if (!Array.isArray(history)) return undefined
    // The last close seen in each month wins.
    const byMonth = new Map<MonthKey, number>()
    for (const entry of history) {
      // A month without a close is a gap (the dashboard repeats the previous one); a bad close is garbage.
      if (entry === null || typeof entry !== 'object' || Array.isArray(entry) || typeof entry.date !== 'number' || entry.close === null) continue
      if (!isPrice(entry.close)) throw unusable(log, 'a close that is not a non-negative number')
      const month = monthKey(new Date(entry.date * 1000))
      if (month >= since) byMonth.set(month, unitAmount(entry.close))
    }
    return [...byMonth].sort(([a], [b]) => (a < b ? -1 : 1)).map(([month, close]) => ({ month, close }))
  }
}
