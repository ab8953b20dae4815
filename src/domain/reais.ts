import {
  quotesOf,
  REAIS,
  type ExchangeRate,
  type MonthKey,
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
}

/**
 * `price` (in a currency) × `rate` (reais per unit of it, exact decimal text), computed in exact
 * decimals and rounded half away from zero to 8 decimals, a unit price (docs/api.md#money).
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

/**
 * The monthly closes of `symbol` from `since` on, in reais (docs/api.md#the-asset-dashboard): the
 * last close of each month, converted, when the symbol is quoted in another currency, with that
 * month's rate — the last of the provider's daily rates in the month. A month without its own
 * rate takes the nearest one known (the last before it, else the first after it, else today's)
 * and is `estimated`; without any rate there are no closes. Provider failures of the closes
 * propagate; of the rates, they leave the months estimated.
 */
export async function monthlyClosesInReais (
  provider: QuoteProvider, symbol: string, since: MonthKey, log: Log
): Promise<MonthClose[]> {
  const history = await provider.history(symbol, { interval: '1mo', since: `${since}-01` }, log)
  if (history === undefined) return []
  const byMonth = new Map<MonthKey, number>()
  for (const { date, close } of history.closes) byMonth.set(date.slice(0, 7), close)
  const closes = [...byMonth].sort(([a], [b]) => (a < b ? -1 : 1))
  if (history.currency === REAIS) return closes.map(([month, close]) => ({ month, close, estimated: false }))
  const rates = await monthlyRates(provider, history.currency, since, log)
  // Without a history of the rate, today's stands for every month: each is estimated.
  const today = rates.size === 0
    ? (await ratesOrNone(provider, [history.currency], log)).get(history.currency)
    : undefined
  const known = [...rates]
  return closes.flatMap(([month, close]) => {
    const own = rates.get(month)
    const rate = own ?? known.findLast(([rateMonth]) => rateMonth < month)?.[1] ?? known[0]?.[1] ?? today?.rate
    return rate === undefined ? [] : [{ month, close: inReais(close, rate), estimated: own === undefined }]
  })
}

/** The rate of each month the provider has a history for (the month's last daily rate), oldest first. */
async function monthlyRates (
  provider: QuoteProvider, currency: string, since: MonthKey, log: Log
): Promise<Map<MonthKey, string>> {
  let observations
  try {
    observations = await provider.rateHistory?.(currency, { interval: '1mo', since: `${since}-01` }, log)
  } catch (error) {
    log.debug({ err: error, currency }, 'no rate history: past months of symbols priced in it are estimated')
  }
  const byMonth = new Map<MonthKey, string>()
  for (const { date, rate } of observations ?? []) byMonth.set(date.slice(0, 7), rate)
  return byMonth
}
