import type { FastifyBaseLogger } from 'fastify'
import { jsonObject, type JsonObject, type JsonValue, type UpstreamClient } from '../upstream/client.js'
import { UpstreamUnavailableError } from '../errors.js'
import { unitAmount } from '../schemas/money.js'
import { monthKey, type MonthKey, type MonthlyClose, type ProviderQuote, type QuoteProvider } from './provider.js'

function isPrice (value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0
}

function unusable (log: FastifyBaseLogger, what: string): Error {
  log.warn({ upstream: 'brapi' }, `brapi answered ${what}`)
  return new UpstreamUnavailableError()
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
 * brapi.dev: `GET /api/quote/{ticker}` with the token as a Bearer header (never
 * in the query, where it would end up in logs). A 404 means the ticker is unknown, a `null`
 * price that brapi has no quote for it; other failures are 502/504 like the relays, and so is
 * an answer the service cannot use (a 2xx without a result, a negative price): logged, never
 * served.
 */
export class BrapiQuotes implements QuoteProvider {
  readonly source = 'brapi.dev'

  constructor (
    private readonly client: UpstreamClient,
    private readonly token: string | undefined,
    /** brapi's plan limit (the free plan: 1). */
    private readonly tickersPerRequest = 20,
    private readonly now: () => Date = () => new Date()
  ) {}

  /** The answer to `GET api/quote/{tickers}`: `undefined` when brapi does not know them (404, 400). */
  private async results (
    tickers: string, log: FastifyBaseLogger, query?: Record<string, string>
  ): Promise<JsonValue[] | undefined> {
    const response = await this.client.call({
      method: 'GET',
      path: `api/quote/${tickers}`,
      query,
      headers: {
        accept: 'application/json',
        ...(this.token === undefined ? {} : { authorization: `Bearer ${this.token}` })
      },
      log
    })
    if (response.status === 404 || response.status === 400) return undefined
    if (response.status < 200 || response.status >= 300) {
      log.warn({ upstream: 'brapi', status: response.status }, 'brapi refused the request')
      throw new UpstreamUnavailableError()
    }
    const results = jsonObject(response.body)?.results
    if (!Array.isArray(results) || results.length === 0) throw unusable(log, 'a 2xx without a result')
    return results
  }

  private async result (
    symbol: string, log: FastifyBaseLogger, query?: Record<string, string>
  ): Promise<JsonObject | undefined> {
    // The ticker matched TICKER_PATTERN; encoding keeps `^` (and anything else) inside one segment.
    const results = await this.results(encodeURIComponent(symbol), log, query)
    if (results === undefined) return undefined
    const result = jsonObject(results[0])
    if (result === undefined) throw unusable(log, 'a 2xx without a result')
    return result
  }

  /** A result as a quote; a null price is "no quote", never a price of 0. */
  private quoteOf (result: JsonObject, symbol: string, log: FastifyBaseLogger): ProviderQuote | undefined {
    const price = result.regularMarketPrice
    if (price === null || price === undefined) return undefined
    if (!isPrice(price)) throw unusable(log, 'a price that is not a non-negative number')
    const time = result.regularMarketTime
    return {
      symbol: typeof result.symbol === 'string' ? result.symbol : symbol,
      // A unit price keeps at most 8 decimals (docs/api.md#money).
      price: unitAmount(price),
      currency: typeof result.currency === 'string' ? result.currency : 'BRL',
      lastUpdate:
        typeof time === 'string' && !Number.isNaN(Date.parse(time))
          ? new Date(time).toISOString()
          : this.now().toISOString()
    }
  }

  async quote (symbol: string, log: FastifyBaseLogger): Promise<ProviderQuote | undefined> {
    const result = await this.result(symbol, log)
    return result === undefined ? undefined : this.quoteOf(result, symbol, log)
  }

  /**
   * Several tickers per request, comma-separated (brapi's `/api/quote/A,B`), at most `tickersPerRequest`
   * each. A ticker missing from the answer has no quote. A plan that refuses several tickers
   * (a 4xx) gets one request per ticker instead, so the answer is the same on every plan.
   */
  async quoteMany (
    symbols: readonly string[], log: FastifyBaseLogger
  ): Promise<Map<string, ProviderQuote | undefined>> {
    const chunks: string[][] = []
    for (let start = 0; start < symbols.length; start += this.tickersPerRequest) {
      chunks.push(symbols.slice(start, start + this.tickersPerRequest))
    }
    const answers = await Promise.all(chunks.map(async chunk => await this.quoteChunk(chunk, log)))
    return new Map(answers.flatMap(answer => [...answer]))
  }

  private async quoteChunk (
    symbols: readonly string[], log: FastifyBaseLogger
  ): Promise<Array<[string, ProviderQuote | undefined]>> {
    const one = async (symbol: string): Promise<[string, ProviderQuote | undefined]> => [
      symbol,
      await this.quote(symbol, log)
    ]
    if (symbols.length === 1) return [await one(symbols[0] as string)]
    const results = await this.results(symbols.map(encodeURIComponent).join(','), log)
    if (results === undefined) {
      log.info(
        { upstream: 'brapi', tickers: symbols.length },
        'brapi refused several tickers at once: one request per ticker'
      )
      return await Promise.all(symbols.map(one))
    }
    const bySymbol = new Map<string, JsonObject>()
    for (const entry of results) {
      const result = jsonObject(entry)
      if (typeof result?.symbol === 'string') bySymbol.set(result.symbol.toUpperCase(), result)
    }
    return symbols.map(symbol => {
      const result = bySymbol.get(symbol.toUpperCase())
      return [symbol, result === undefined ? undefined : this.quoteOf(result, symbol, log)]
    })
  }

  async monthlyCloses (symbol: string, since: MonthKey, log: FastifyBaseLogger): Promise<MonthlyClose[] | undefined> {
    const result = await this.result(symbol, log, { range: rangeCovering(since, this.now()), interval: '1mo' })
    const history = result?.historicalDataPrice
    if (!Array.isArray(history)) return undefined
    // The last close seen in each month wins.
    const byMonth = new Map<MonthKey, number>()
    for (const entry of history) {
      // A month without a close is a gap (the dashboard repeats the previous one); a bad close is garbage.
      if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) continue
      if (typeof entry.date !== 'number' || entry.close === null) continue
      if (!isPrice(entry.close)) throw unusable(log, 'a close that is not a non-negative number')
      const month = monthKey(new Date(entry.date * 1000))
      if (month >= since) byMonth.set(month, unitAmount(entry.close))
    }
    return [...byMonth].sort(([a], [b]) => (a < b ? -1 : 1)).map(([month, close]) => ({ month, close }))
  }
}
