import { dailyBridge, monthlyWalk, rounded, simulatedIpca, simulatedSelic } from './offline-series.js'
import { OFFLINE_EVENT_SYMBOLS, offlineEvents, tradedFactors } from './offline-events.js'
import type { EventsRead } from '../schemas/corporate-events.js'
import {
  REAIS,
  type ExchangeRate,
  type HistoryQuery,
  type MonthKey,
  type PercentObservation,
  type Close,
  type PriceHistory,
  type ProviderQuote,
  type QuoteProvider,
  type RateObservation
} from './provider.js'
import { dayKey, monthEndOf } from '../schemas/calendar.js'

/**
 * Typical price levels of the demo's tickers, so simulated quotes sit near their buy prices;
 * any other symbol gets a level derived from its hash. Coins are priced in reais, as brapi
 * prices them when asked for BRL.
 */
const REFERENCE_LEVELS: Record<string, number> = {
  '^BVSP': 128_000,
  PETR4: 36,
  VALE3: 63,
  ITUB4: 31,
  BBAS3: 28,
  HGLG11: 160,
  BOVA11: 122,
  BTC: 330_000,
  ETH: 14_500,
  IPCA35: 2_200,
  SELIC29: 14_900,
  GOLD: 380,
  AAPL: 230
}

/** Symbols quoted in dollars (a US share), so `npm start` shows a price converted to reais. */
const DOLLAR_PRICED = new Set(['AAPL'])

/** The simulated USD-BRL rate: reais per dollar, around this level, 4 decimals as the Central Bank's PTAX. */
const DOLLAR_LEVEL = 5.3

/**
 * Deterministic quotes for `npm start` without credentials: each symbol's monthly closes wander
 * around a level (its reference level, or one drawn from its SHA-256) as a mean-reverting walk
 * seeded by the same digest, from January 2000 to the current month; the current quote is the
 * current month's close. Its daily closes (weekdays) run from each month's close to the next
 * (./offline-series.ts), so today's close is the quote. Dollar-priced symbols (`AAPL`) are quoted in
 * USD, and the dollar's rate in reais wanders the same way (its monthly history: one rate a month,
 * dated the month's last day, the current month's today; its daily one, each weekday). The SELIC
 * target and the IPCA are simulated too. Nothing here is a market price, and `source` says so.
 */
export class OfflineQuotes implements QuoteProvider {
  readonly source = 'offline (cotações simuladas)'

  constructor (private readonly now: () => Date = () => new Date()) {}

  private walk (key: string, fallbackLevel: (drawn: number) => number, decimals: number): Array<[MonthKey, number]> {
    return monthlyWalk(key, fallbackLevel, decimals, this.now())
  }

  private series (symbol: string): Array<[MonthKey, number]> {
    const upper = symbol.toUpperCase()
    const level = (drawn: number): number =>
      REFERENCE_LEVELS[upper] ?? (upper.startsWith('^') ? 50_000 + drawn * 100_000 : 5 + drawn * 195)
    return this.walk(upper, level, 2)
  }

  private currencyOf (symbol: string): string {
    return DOLLAR_PRICED.has(symbol.toUpperCase()) ? 'USD' : REAIS
  }

  async quote (symbol: string): Promise<ProviderQuote> {
    const last = this.series(symbol).at(-1)
    /* c8 ignore next -- the series always reaches the current month */
    if (last === undefined) throw new Error('empty offline series')
    const currency = this.currencyOf(symbol)
    return { symbol: symbol.toUpperCase(), price: last[1], currency, lastUpdate: this.now().toISOString() }
  }

  async quoteMany (symbols: readonly string[]): Promise<Map<string, ProviderQuote>> {
    return new Map(await Promise.all(symbols.map(async symbol => [symbol, await this.quote(symbol)] as const)))
  }

  async history (symbol: string, query: HistoryQuery): Promise<PriceHistory> {
    const series = this.series(symbol)
    const closes = query.interval === '1d'
      ? dailyBridge(symbol.toUpperCase(), series, 2, query.since, this.now()).map(([date, close]) => ({ date, close }))
      : series.map(([month, close]) => ({ date: `${month}-01`, close })).filter(entry => entry.date >= query.since)
    return { currency: this.currencyOf(symbol), closes: this.traded(symbol.toUpperCase(), closes, query) }
  }

  /**
   * The closes of a symbol with simulated corporate events (./offline-events.ts) on each day's share basis: the walk
   * is today's, so a close before a split is the walk's times its ratio. A month's close is its last day's.
   */
  private traded (symbol: string, closes: Close[], query: HistoryQuery): Close[] {
    if (!OFFLINE_EVENT_SYMBOLS.has(symbol)) return closes
    const factorOn = tradedFactors(symbol, this.now())
    const dayOf = query.interval === '1d' ? (date: string) => date : monthEndOf
    return closes.map(({ date, close }) => ({ date, close: rounded(close * factorOn(dayOf(date)), 2), traded: true }))
  }

  /** Simulated corporate events of ITUB4, BBAS3 and HGLG11 (./offline-events.ts), read now. */
  async events (symbols: readonly string[]): Promise<Map<string, EventsRead>> {
    const asOf = this.now().toISOString()
    return new Map(symbols.map(symbol => [symbol, { events: offlineEvents(symbol.toUpperCase(), this.now()), asOf }]))
  }

  /** The dollar's simulated rate (any other currency has none): `[month, reais per dollar]`. */
  private dollar (): Array<[MonthKey, number]> {
    return this.walk('USD-BRL', () => DOLLAR_LEVEL, 4)
  }

  async rates (currencies: readonly string[]): Promise<Map<string, ExchangeRate | undefined>> {
    const rate = this.dollar().at(-1)?.[1]
    const lastUpdate = this.now().toISOString()
    return new Map(currencies.map(currency => [
      currency,
      currency === 'USD' && rate !== undefined ? { currency, rate: String(rate), lastUpdate } : undefined
    ]))
  }

  async rateHistory (currency: string, query: HistoryQuery): Promise<RateObservation[] | undefined> {
    if (currency !== 'USD') return undefined
    if (query.interval === '1d') {
      return dailyBridge('USD-BRL', this.dollar(), 4, query.since, this.now()).map(([date, rate]) => ({
        date, rate: String(rate)
      }))
    }
    const today = dayKey(this.now())
    return this.dollar().map(([month, rate]) => {
      const [year, index] = month.split('-').map(Number) as [number, number]
      const lastDay = dayKey(new Date(Date.UTC(year, index, 0)))
      return { date: lastDay < today ? lastDay : today, rate: String(rate) }
    }).filter(observation => observation.date >= query.since)
  }

  async primeRate (since: string): Promise<PercentObservation[]> {
    return simulatedSelic(since, this.now()).map(([date, percent]) => ({ date, percent }))
  }

  async inflation (since: string): Promise<PercentObservation[]> {
    return simulatedIpca(since, this.now()).map(([date, percent]) => ({ date, percent }))
  }
}
