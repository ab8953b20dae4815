import type { FastifyBaseLogger } from 'fastify'
import { jsonObject, type JsonObject, type QueryValue, type UpstreamClient } from '../upstream/client.js'
import { BrapiClient } from './brapi-client.js'
import { CoinDirectory } from './brapi-coins.js'
import { exchangeRates, rateObservations } from './brapi-currencies.js'
import { INDICATOR_RETRY_MS, INDICATORS, indicatorSeries, type Indicator } from './brapi-indicators.js'
import { BrapiEvents } from './brapi-events.js'
import { answerOf, closesOf, currencyOf, quoteOf, unusable } from './brapi-parse.js'
import { RawFields } from './brapi-raw.js'
import { dayRangeCovering, monthsOf, RangeLimits, rangeCovering, shorterRange } from './brapi-ranges.js'
import { NO_PROVIDER_EVENTS, type EventsRead } from '../schemas/corporate-events.js'
import {
  REAIS,
  type ExchangeRate,
  type HistoryQuery,
  type PercentObservation,
  type PriceHistory,
  type ProviderQuote,
  type QuoteProvider,
  type RateObservation
} from './provider.js'

/** One of brapi's price endpoints: B3 tickers and indexes at `/api/quote`, coins at `/api/v2/crypto` (in reais). */
interface Endpoint {
  name: 'quote' | 'crypto'
  path: (tickers: readonly string[]) => string
  query: (tickers: readonly string[]) => Record<string, QueryValue>
  /** The answer's list of results and the field naming each one's ticker. */
  list: 'results' | 'coins'
  key: 'symbol' | 'coin'
}

const STOCKS: Endpoint = {
  name: 'quote',
  // The tickers matched TICKER_PATTERN; encoding keeps `^` (and anything else) inside one segment.
  path: tickers => `api/quote/${tickers.map(encodeURIComponent).join(',')}`,
  query: () => ({}),
  list: 'results',
  key: 'symbol'
}
const COINS: Endpoint = {
  name: 'crypto',
  path: () => 'api/v2/crypto',
  query: tickers => ({ coin: tickers.join(','), currency: REAIS }),
  list: 'coins',
  key: 'coin'
}

/** brapi's answer to one request: its results by upper-cased ticker, or "unknown" (404), or "refused" (400). */
type Answer = { results: Map<string, JsonObject> } | 'unknown' | 'refused'

/**
 * brapi.dev (docs/api.md#quotes): B3 tickers at `/api/quote/{tickers}`, coins at
 * `/api/v2/crypto?coin=…&currency=BRL`, rates at `/api/v2/currency`, each batched up to
 * `tickersPerRequest`. A 404 means the ticker is unknown, a `null` price that brapi has no quote
 * for it; refusals and quotas are the {@link BrapiClient}'s. An answer the service cannot use (a
 * 2xx without a result, a negative price) is 502, logged, never served. A plan that refuses
 * several tickers at once is asked ticker by ticker, from then on; a plan that refuses a history
 * range is asked shorter ones ({@link RangeLimits}).
 */
export class BrapiQuotes implements QuoteProvider {
  readonly source = 'brapi.dev'
  private readonly brapi: BrapiClient
  private readonly coins: CoinDirectory
  private readonly ranges: RangeLimits
  private readonly raw: RawFields
  private readonly dividends: BrapiEvents
  /** False once brapi refused several tickers in one request that it serves one by one (the plan's limit). */
  private batching = true
  /** Until when an indicator the plan refused is not asked again (ms since the epoch). */
  private readonly indicatorsRefusedUntil = new Map<Indicator, number>()

  constructor (
    client: UpstreamClient,
    token: string | undefined,
    /** brapi's plan limit (the free plan: 1). */
    private readonly tickersPerRequest = 20,
    private readonly now: () => Date = () => new Date()
  ) {
    this.brapi = new BrapiClient(client, token, () => this.now().getTime())
    this.coins = new CoinDirectory(this.brapi, () => this.now().getTime(), client.telemetry)
    this.ranges = new RangeLimits(now)
    this.raw = new RawFields(this.brapi)
    this.dividends = new BrapiEvents(this.raw, () => this.batching ? this.tickersPerRequest : 1)
  }

  knowCoins (symbols: readonly string[]): string[] {
    return this.coins.declare(symbols)
  }

  async quote (symbol: string, log: FastifyBaseLogger): Promise<ProviderQuote | undefined> {
    return (await this.quoteMany([symbol], log)).get(symbol)
  }

  /**
   * Coins and the other tickers, each kind in as few requests as the plan allows (one when it
   * takes them all). A ticker missing from brapi's answer has no quote.
   */
  async quoteMany (
    symbols: readonly string[], log: FastifyBaseLogger
  ): Promise<Map<string, ProviderQuote | undefined>> {
    const coins = await this.coins.among(symbols, log)
    const kinds = await Promise.all([
      this.quoteAll(STOCKS, symbols.filter(symbol => !coins.has(symbol)), log),
      this.quoteAll(COINS, [...coins], log)
    ])
    const answers = new Map(kinds.flat())
    return new Map(symbols.map(symbol => [symbol, answers.get(symbol)]))
  }

  async history (symbol: string, query: HistoryQuery, log: FastifyBaseLogger): Promise<PriceHistory | undefined> {
    const endpoint = (await this.coins.among([symbol], log)).has(symbol) ? COINS : STOCKS
    const covering = query.interval === '1d'
      ? dayRangeCovering(query.since, this.now())
      : rangeCovering(query.since.slice(0, 7), this.now())
    let range = this.ranges.within(endpoint.name, covering)
    let refused = false
    for (;;) {
      // A day's close on that day's share basis, where the plan gives it (docs/api.md#corporate-events).
      const answer = await this.request(endpoint, [symbol], log, { range, interval: query.interval },
        endpoint === STOCKS && query.interval === '1d')
      if (answer === 'unknown') return undefined
      if (answer === 'refused') {
        const shorter = shorterRange(range, this.now())
        if (shorter === undefined) return undefined
        range = shorter
        refused = true
        continue
      }
      const result = answer.results.get(symbol.toUpperCase())
      if (result === undefined) return undefined
      const used = typeof result.usedRange === 'string' ? result.usedRange : range
      const given = (monthsOf(used, this.now()) ?? Infinity) < (monthsOf(range, this.now()) ?? 0) ? used : range
      if (refused || given !== range) this.ranges.learn(endpoint.name, given, log)
      const currency = currencyOf(result.currency)
      if (currency === undefined) throw unusable(log, 'a history without its currency')
      return { currency, closes: closesOf(result.historicalDataPrice, query.since, log) }
    }
  }

  /** Corporate events of B3 tickers ({@link BrapiEvents}); a coin has none, and is not asked. */
  async events (symbols: readonly string[], log: FastifyBaseLogger): Promise<Map<string, EventsRead>> {
    const coins = await this.coins.among(symbols, log)
    const tickers = symbols.filter(symbol => !coins.has(symbol))
    const found = tickers.length === 0 ? new Map() : await this.dividends.of(tickers, log)
    const asOf = this.now().toISOString()
    return new Map(symbols.map(symbol => [symbol, { events: found.get(symbol) ?? NO_PROVIDER_EVENTS, asOf }]))
  }

  async rates (currencies: readonly string[], log: FastifyBaseLogger): Promise<Map<string, ExchangeRate | undefined>> {
    return await exchangeRates(this.brapi, currencies, log, this.now())
  }

  async rateHistory (
    currency: string, query: HistoryQuery, log: FastifyBaseLogger
  ): Promise<RateObservation[] | undefined> {
    return await rateObservations(this.brapi, currency, query, log, this.now())
  }

  async primeRate (since: string, log: FastifyBaseLogger): Promise<PercentObservation[] | undefined> {
    return await this.indicator('selic', since, log)
  }

  async inflation (since: string, log: FastifyBaseLogger): Promise<PercentObservation[] | undefined> {
    // Each month's IPCA is dated its first day: from the first of `since`'s month.
    return await this.indicator('ipca', `${since.slice(0, 7)}-01`, log)
  }

  /**
   * An indicator's series; none while the plan refuses it (brapi's cheaper plans lack both): logged
   * once, then not asked again for an hour. A spent quota or a failure is the caller's error.
   */
  private async indicator (
    indicator: Indicator, since: string, log: FastifyBaseLogger
  ): Promise<PercentObservation[] | undefined> {
    if ((this.indicatorsRefusedUntil.get(indicator) ?? 0) > this.now().getTime()) return undefined
    const series = await indicatorSeries(this.brapi, indicator, since, log, this.now())
    if (series !== 'refused') return series
    this.indicatorsRefusedUntil.set(indicator, this.now().getTime() + INDICATOR_RETRY_MS)
    log.info({ upstream: 'brapi', endpoint: INDICATORS[indicator].path },
      `brapi's plan gives no ${INDICATORS[indicator].name} series: performances answer it null ` +
      '(asked again in an hour)')
    return undefined
  }

  private async quoteAll (
    endpoint: Endpoint, symbols: readonly string[], log: FastifyBaseLogger
  ): Promise<Array<[string, ProviderQuote | undefined]>> {
    const size = this.batching ? this.tickersPerRequest : 1
    const chunks: string[][] = []
    for (let start = 0; start < symbols.length; start += size) chunks.push(symbols.slice(start, start + size))
    return (await Promise.all(chunks.map(async chunk => await this.quoteChunk(endpoint, chunk, log)))).flat()
  }

  private async quoteChunk (
    endpoint: Endpoint, symbols: readonly string[], log: FastifyBaseLogger
  ): Promise<Array<[string, ProviderQuote | undefined]>> {
    const answer = await this.request(endpoint, symbols, log)
    if (answer === 'refused' && symbols.length > 1) return await this.oneByOne(endpoint, symbols, log)
    const results = typeof answer === 'string' ? new Map<string, JsonObject>() : answer.results
    return symbols.map(symbol => {
      const result = results.get(symbol.toUpperCase())
      return [symbol, result === undefined ? undefined : quoteOf(result, symbol, log, this.now())]
    })
  }

  /**
   * Tickers brapi refused together (400), asked one by one. When none is refused alone, the
   * refusal was the plan's (one ticker per request): the instance stops batching. When one is
   * (a coin brapi does not have answers 400), that ticker explains the refusal.
   */
  private async oneByOne (
    endpoint: Endpoint, symbols: readonly string[], log: FastifyBaseLogger
  ): Promise<Array<[string, ProviderQuote | undefined]>> {
    const answers = await Promise.all(symbols.map(async symbol => await this.request(endpoint, [symbol], log)))
    if (this.batching && !answers.includes('refused')) {
      this.batching = false
      log.info({ upstream: 'brapi', tickers: symbols.length },
        'brapi refused several tickers at once: the plan allows one per request, asked one by one from now on')
    }
    return symbols.map((symbol, index) => {
      const answer = answers[index]
      const result = typeof answer === 'object' ? answer.results.get(symbol.toUpperCase()) : undefined
      return [symbol, result === undefined ? undefined : quoteOf(result, symbol, log, this.now())]
    })
  }

  /** One request to `endpoint` for `tickers` (`raw`: with the plan's unadjusted prices); a 2xx has a result. */
  private async request (
    endpoint: Endpoint, tickers: readonly string[], log: FastifyBaseLogger, query: Record<string, QueryValue> = {},
    raw = false
  ): Promise<Answer> {
    const params = { ...endpoint.query(tickers), ...query }
    const path = endpoint.path(tickers)
    const response = raw
      ? await this.raw.get(path, params, log)
      : await this.brapi.get(path, Object.keys(params).length > 0 ? params : undefined, log)
    const answer = answerOf(response, log)
    if (typeof answer === 'string') return answer
    const list = jsonObject(answer.body)?.[endpoint.list]
    if (!Array.isArray(list) || list.length === 0) throw unusable(log, 'a 2xx without a result')
    const results = new Map<string, JsonObject>()
    for (const entry of list) {
      const result = jsonObject(entry)
      const ticker = result?.[endpoint.key]
      if (result !== undefined && typeof ticker === 'string') results.set(ticker.toUpperCase(), result)
    }
    // One ticker asked, one result: it is that ticker's, whatever brapi spelled it.
    const only = jsonObject(list[0])
    const [ticker] = tickers
    if (ticker !== undefined && tickers.length === 1 && list.length === 1 && only !== undefined) {
      results.set(ticker.toUpperCase(), only)
    }
    return { results }
  }
}
