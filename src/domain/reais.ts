import {
  quotesOf,
  REAIS,
  type Close,
  type ExchangeRate,
  type HistoryQuery,
  type MonthKey,
  type PriceHistory,
  type ProviderQuote,
  type QuoteProvider
} from '../quotes/provider.js'
import { decimal, unitAmount } from '../schemas/money.js'
import type { Log } from './ports.js'

/**
 * A quote in reais (docs/api.md#currencies): the provider's price, converted with its currency's
 * rate when it is not in reais. What every valuation and dashboard sums or compares.
 */
export interface QuoteInReais {
  symbol: string
  /** Reais per unit, at most 8 decimals. */
  price: number
  /** When it was priced: the older of the quote's time and its rate's. */
  lastUpdate: string
}

/**
 * A month's close in reais; `estimated` when it is not that month's market close in reais (converted
 * with a rate of another month: docs/api.md#the-asset-dashboard).
 */
export interface MonthClose {
  month: MonthKey
  close: number
  estimated?: boolean
  /** The price traded then, on that day's share basis (src/schemas/quote.ts: `Close`). */
  traded?: boolean
}

/**
 * `price` (in a currency) × `rate` (reais per unit of it, exact decimal text), computed in exact
 * decimals and rounded half away from zero to 8 decimals, a unit price (docs/api.md#money).
 * @internal Test seam: its exact decimals are tested on prices no provider serves.
 */
export function inReais (price: number, rate: string): number {
  return unitAmount(decimal(price).times(rate))
}

function older (a: string, b: string): string {
  return Date.parse(a) <= Date.parse(b) ? a : b
}

/**
 * The provider's current rates of `currencies`; none for a provider without rates or failing (its
 * client logged why): the symbols priced in them are then unquoted, never summed as reais.
 * @internal Test seam: a provider without rates or failing is tested directly.
 */
export async function ratesOrNone (
  provider: QuoteProvider, currencies: readonly string[], log: Log
): Promise<Map<string, ExchangeRate>> {
  const found = new Map<string, ExchangeRate>()
  if (currencies.length === 0 || provider.rates === undefined) return found
  try {
    for (const [currency, rate] of await provider.rates(currencies, log)) {
      if (rate !== undefined) found.set(currency, rate)
    }
  } catch (error) {
    log.debug({ err: error, currencies }, 'no exchange rates: symbols priced in them are unquoted')
  }
  return found
}

/** `quotes` in reais: those in another currency converted with its rate (one provider request for all), or unquoted. */
export async function inReaisAll (
  provider: QuoteProvider, quotes: ReadonlyMap<string, ProviderQuote | undefined>, log: Log
): Promise<Map<string, QuoteInReais | undefined>> {
  const foreign = new Set<string>()
  for (const quote of quotes.values()) if (quote !== undefined && quote.currency !== REAIS) foreign.add(quote.currency)
  const rates = await ratesOrNone(provider, [...foreign], log)
  const converted = new Map<string, QuoteInReais | undefined>()
  for (const [symbol, quote] of quotes) {
    if (quote === undefined || quote.currency === REAIS) {
      converted.set(symbol, quote === undefined
        ? undefined
        : { symbol: quote.symbol, price: quote.price, lastUpdate: quote.lastUpdate })
      continue
    }
    const rate = rates.get(quote.currency)
    const lastUpdate = rate === undefined ? undefined : older(quote.lastUpdate, rate.lastUpdate)
    converted.set(symbol, rate === undefined || lastUpdate === undefined
      ? undefined
      : { symbol: quote.symbol, price: inReais(quote.price, rate.rate), lastUpdate })
  }
  return converted
}

/** Quotes of `tickers` in reais, in one provider batch (and one for their rates); provider failures propagate. */
export async function quotesInReais (
  provider: QuoteProvider, tickers: readonly string[], log: Log
): Promise<Map<string, QuoteInReais | undefined>> {
  if (tickers.length === 0) return new Map()
  return await inReaisAll(provider, await quotesOf(provider, tickers, log), log)
}

/**
 * Quotes of `tickers` in reais, through the cache the provider sits behind. A provider that fails
 * leaves every one of them unquoted: a valuation counts their assets at book value rather than
 * failing (the provider's client has logged the failure).
 */
export async function quotesInReaisOrNone (
  provider: QuoteProvider, tickers: readonly string[], log: Log
): Promise<Map<string, QuoteInReais | undefined>> {
  try {
    return await quotesInReais(provider, tickers, log)
  } catch (error) {
    log.debug({ err: error, tickers: tickers.length }, 'no quotes for a valuation: its assets count at book value')
    return new Map()
  }
}

/** A day's close in reais (`date`: `YYYY-MM-DD`); `estimated` when converted with another day's rate. */
export interface DayClose {
  date: string
  close: number
  estimated: boolean
  /** The price traded that day, on its share basis (src/schemas/quote.ts: `Close`). */
  traded?: boolean
}

/**
 * The closes of a history in reais, one per period of `query.interval` (a day, a month) from
 * `query.since` on, keyed by `periodOf` its date: the last close of each period, converted, when the
 * symbol is quoted in another currency, with that period's rate — the last of the provider's daily
 * rates in it. A period without its own rate takes the nearest one known (the last before it, else
 * the first after it, else today's) and is `estimated`; without any rate there are no closes.
 * Provider failures of the closes propagate; of the rates, they leave the periods estimated.
 */
async function closesInReais (
  provider: QuoteProvider, history: PriceHistory, query: HistoryQuery, periodOf: (date: string) => string, log: Log
): Promise<Array<{ period: string, close: number, estimated: boolean, traded: boolean }>> {
  const closes = lastOfEachPeriod(history.closes, periodOf)
  if (history.currency === REAIS) {
    return closes.map(([period, { close, traded }]) => ({ period, close, estimated: false, traded: traded === true }))
  }
  const rates = await ratesByPeriod(provider, history.currency, query, periodOf, log)
  // Without a history of the rate, today's stands for every period: each is estimated.
  const today = rates.size === 0
    ? (await ratesOrNone(provider, [history.currency], log)).get(history.currency)
    : undefined
  const known = [...rates].sort(([a], [b]) => (a < b ? -1 : 1))
  let before = -1
  return closes.flatMap(([period, { close, traded }]) => {
    while (before + 1 < known.length && (known[before + 1]?.[0] ?? '') < period) before++
    const own = rates.get(period)
    const rate = own ?? known[before]?.[1] ?? known[0]?.[1] ?? today?.rate
    if (rate === undefined) return []
    return [{ period, close: inReais(close, rate), estimated: own === undefined, traded: traded === true }]
  })
}

/**
 * The last close of each period, oldest first. Closes a day each, in order (what a provider's daily
 * history is), are taken as they are: thousands of them, where a map and a sort cost a recomputed
 * performance of 20 symbols over 20 years about 30 ms of CPU (bench/performance.ts).
 */
function lastOfEachPeriod (closes: readonly Close[], periodOf: (date: string) => string): Array<[string, Close]> {
  const periods = closes.map(close => [periodOf(close.date), close] as [string, Close])
  if (periods.every(([period], index) => index === 0 || (periods[index - 1] as [string, Close])[0] < period)) {
    return periods
  }
  const byPeriod = new Map<string, Close>()
  for (const [period, close] of periods) byPeriod.set(period, close)
  return [...byPeriod].sort(([a], [b]) => (a < b ? -1 : 1))
}

/**
 * The monthly closes of `symbol` from `since` on, in reais (docs/api.md#the-asset-dashboard), each
 * month's converted with that month's rate ({@link closesInReais}).
 */
export async function monthlyClosesInReais (
  provider: QuoteProvider, symbol: string, since: MonthKey, log: Log
): Promise<MonthClose[]> {
  const query: HistoryQuery = { interval: '1mo', since: `${since}-01` }
  const history = await provider.history(symbol, query, log)
  if (history === undefined) return []
  const kept = history.currency === REAIS ? monthlyInReais.get(history) : undefined
  if (kept !== undefined) return kept
  const closes = (await closesInReais(provider, history, query, monthOf, log))
    .map(({ period, close, estimated, traded }): MonthClose =>
      traded ? { month: period, close, estimated, traded } : { month: period, close, estimated })
  if (history.currency === REAIS) monthlyInReais.set(history, closes)
  return closes
}

/**
 * The daily closes of `symbol` from `since` (`YYYY-MM-DD`) on, in reais (docs/api.md#performance),
 * each day's converted with that day's rate ({@link closesInReais}).
 */
export async function dailyClosesInReais (
  provider: QuoteProvider, symbol: string, since: string, log: Log
): Promise<DayClose[]> {
  const query: HistoryQuery = { interval: '1d', since }
  const history = await provider.history(symbol, query, log)
  if (history === undefined) return []
  const kept = history.currency === REAIS ? dailyInReais.get(history) : undefined
  if (kept !== undefined) return kept
  const closes = (await closesInReais(provider, history, query, day => day, log))
    .map(({ period, close, estimated, traded }): DayClose =>
      traded ? { date: period, close, estimated, traded } : { date: period, close, estimated })
  if (history.currency === REAIS) dailyInReais.set(history, closes)
  return closes
}

/**
 * A daily history in reais as closes of days, made once per history the quote cache keeps (it hands
 * every asker the same one): a performance of 20 symbols over 20 years, computed again after a
 * change, spent 6 ms of its CPU making them again (bench/performance.ts). Shared: never changed.
 */
const dailyInReais = new WeakMap<PriceHistory, DayClose[]>()
/**
 * A monthly history in reais, likewise: the same list to every dashboard, so that its closes on each month's share
 * basis are made once (src/domain/asset-events.ts, onDayBasis; measured in BENCHMARKS.md, "Corporate events").
 */
const monthlyInReais = new WeakMap<PriceHistory, MonthClose[]>()

function monthOf (date: string): MonthKey {
  return date.slice(0, 7)
}

/** The rate of each period the provider has a history for (the period's last daily rate), oldest first. */
async function ratesByPeriod (
  provider: QuoteProvider, currency: string, query: HistoryQuery, periodOf: (date: string) => string, log: Log
): Promise<Map<string, string>> {
  let observations
  try {
    observations = await provider.rateHistory?.(currency, query, log)
  } catch (error) {
    log.debug({ err: error, currency }, 'no rate history: past closes of symbols priced in it are estimated')
  }
  const byPeriod = new Map<string, string>()
  for (const { date, rate } of observations ?? []) byPeriod.set(periodOf(date), rate)
  return byPeriod
}
