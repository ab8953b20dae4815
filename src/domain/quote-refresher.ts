import { quotesOf, type QuoteProvider } from '../quotes/provider.js'
import { Listeners, type Unsubscribe } from '../change-feed/change-events.js'
import type { Log } from './ports.js'
import { inReaisAll, quotesInReaisOrNone, type QuoteInReais } from './reais.js'
import type { QuoteBook } from './portfolio-valuation.js'

/** Whether a symbol's quote moved: it appeared, vanished, or changed its price (in reais) or its time. */
function moved (before: QuoteInReais | undefined, after: QuoteInReais | undefined): boolean {
  if (before === undefined || after === undefined) return before !== after
  return before.price !== after.price || before.lastUpdate !== after.lastUpdate
}

/**
 * The quotes of every symbol the live valuations of this instance watch, each held as long as one
 * portfolio watch holds it (counted), and asked again of the provider every `intervalMs`
 * (QUOTES_TTL) in one request for all of them, however many streams watch them — through the
 * quote cache, so REST and GraphQL reads in between are served from it. Quotes are held in reais
 * (a price in another currency converted with its rate, through the same cache: one request more
 * per refresh while such a symbol is watched). A symbol new to the set is read at once (the cache
 * may have it). A refresh the provider fails leaves every symbol unquoted until the next one. The
 * timer runs only while a symbol is watched.
 */
export class QuoteRefresher implements QuoteBook {
  private readonly holders = new Map<string, number>()
  private readonly quotes = new Map<string, QuoteInReais | undefined>()
  /** Symbols whose first quote is being read. */
  private readonly arriving = new Map<string, Promise<void>>()
  private readonly moves: Listeners<ReadonlySet<string>>
  private timer: NodeJS.Timeout | undefined
  private refreshing = false

  constructor (
    private readonly provider: QuoteProvider,
    private readonly intervalMs: number,
    private readonly log: Log
  ) {
    this.moves = new Listeners(error => { log.error({ err: error }, 'quote listener failed') })
  }

  /** Who prices the quotes held: the provider's `source`. */
  get source (): string {
    return this.provider.source
  }

  /** Holds each of `tickers` once more; resolves once every one has its first quote. */
  async acquire (tickers: readonly string[]): Promise<void> {
    const fresh: string[] = []
    for (const ticker of tickers) {
      const holders = this.holders.get(ticker) ?? 0
      this.holders.set(ticker, holders + 1)
      if (holders === 0) fresh.push(ticker)
    }
    if (fresh.length > 0) {
      const read = quotesInReaisOrNone(this.provider, fresh, this.log).then(quotes => {
        for (const ticker of fresh) {
          if (this.holders.has(ticker)) this.quotes.set(ticker, quotes.get(ticker))
          this.arriving.delete(ticker)
        }
      })
      for (const ticker of fresh) this.arriving.set(ticker, read)
      this.timer ??= setInterval(() => { this.refresh().catch(() => {}) }, this.intervalMs).unref()
    }
    await Promise.all(tickers.map(async ticker => { await this.arriving.get(ticker) }))
  }

  /** Lets go of each of `tickers` once; a symbol no one holds leaves the set (and the timer stops with the last). */
  release (tickers: readonly string[]): void {
    for (const ticker of tickers) {
      const holders = (this.holders.get(ticker) ?? 0) - 1
      if (holders > 0) {
        this.holders.set(ticker, holders)
        continue
      }
      this.holders.delete(ticker)
      this.quotes.delete(ticker)
    }
    if (this.holders.size === 0) this.stop()
  }

  /** Tells the provider which symbols are coins (held by assets of type CRYPTO), before they are acquired. */
  knowCoins (symbols: readonly string[]): void {
    if (symbols.length > 0) this.provider.knowCoins?.(symbols)
  }

  get (ticker: string): QuoteInReais | undefined {
    return this.quotes.get(ticker)
  }

  /** Symbols watched now. */
  get size (): number {
    return this.holders.size
  }

  /** Calls `listener` with the symbols whose quote moved, after each refresh that moved one. */
  onMove (listener: (tickers: ReadonlySet<string>) => void): Unsubscribe {
    return this.moves.add(listener)
  }

  /** One provider request for every watched symbol (skipped while the previous one is still out). */
  async refresh (): Promise<void> {
    if (this.refreshing || this.holders.size === 0) return
    this.refreshing = true
    const tickers = [...this.holders.keys()]
    let answers: Map<string, QuoteInReais | undefined>
    try {
      const quotes = await (this.provider.refresh?.(tickers, this.log) ?? quotesOf(this.provider, tickers, this.log))
      answers = await inReaisAll(this.provider, quotes, this.log)
    } catch (error) {
      this.log.warn({ err: error, tickers: tickers.length }, 'quote refresh failed: watched symbols unquoted')
      answers = new Map()
    } finally {
      this.refreshing = false
    }
    const movedTickers = new Set<string>()
    for (const ticker of tickers) {
      if (!this.holders.has(ticker) || this.arriving.has(ticker)) continue
      const quote = answers.get(ticker)
      if (moved(this.quotes.get(ticker), quote)) movedTickers.add(ticker)
      this.quotes.set(ticker, quote)
    }
    if (movedTickers.size > 0) this.moves.emit(movedTickers)
  }

  stop (): void {
    clearInterval(this.timer)
    this.timer = undefined
  }
}
