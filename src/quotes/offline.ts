import { createHash } from 'node:crypto'
import {
  monthKey,
  monthsBetween,
  type MonthKey,
  type MonthlyClose,
  type ProviderQuote,
  type QuoteProvider
} from './provider.js'

/** The simulated series start here; months are generated forward, so past months never change. */
const FIRST_MONTH: MonthKey = '2000-01'

/** A small seeded PRNG (mulberry32): the same symbol always draws the same numbers. */
function random (seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function round2 (value: number): number {
  return Math.round(value * 100) / 100
}

/**
 * Typical price levels of the demo's tickers, so simulated quotes sit near their buy prices;
 * any other symbol gets a level derived from its hash.
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
  GOLD: 380
}

/**
 * Deterministic quotes for `npm start` without credentials: each symbol's monthly closes wander
 * around a level (its reference level, or one drawn from its SHA-256) as a mean-reverting walk
 * seeded by the same digest, from January 2000 to the current month; the current quote is the
 * current month's close. Nothing here is a market price, and `source` says so.
 */
export class OfflineQuotes implements QuoteProvider {
  readonly source = 'offline (cotações simuladas)'

  constructor (private readonly now: () => Date = () => new Date()) {}

  private series (symbol: string): MonthlyClose[] {
    const upper = symbol.toUpperCase()
    const digest = createHash('sha256').update(upper).digest()
    const next = random(digest.readUInt32BE(0))
    const drawn = next()
    const level = REFERENCE_LEVELS[upper] ?? (upper.startsWith('^') ? 50_000 + drawn * 100_000 : 5 + drawn * 195)
    // log(price / level) follows x ← 0.9·x + noise: monthly moves of a few percent, never far from the level.
    let deviation = 0
    return monthsBetween(FIRST_MONTH, monthKey(this.now())).map(month => {
      deviation = 0.9 * deviation + (next() - 0.5) * 0.12
      return { month, close: round2(level * Math.exp(deviation)) }
    })
  }

  async quote (symbol: string): Promise<ProviderQuote> {
    const series = this.series(symbol)
    const last = series[series.length - 1]
    /* c8 ignore next -- the series always reaches the current month */
    if (last === undefined) throw new Error('empty offline series')
    return { symbol: symbol.toUpperCase(), price: last.close, currency: 'BRL', lastUpdate: this.now().toISOString() }
  }

  async quoteMany (symbols: readonly string[]): Promise<Map<string, ProviderQuote>> {
    return new Map(await Promise.all(symbols.map(async symbol => [symbol, await this.quote(symbol)] as const)))
  }

  async monthlyCloses (symbol: string, since: MonthKey): Promise<MonthlyClose[]> {
    return this.series(symbol).filter(entry => entry.month >= since)
  }
}
