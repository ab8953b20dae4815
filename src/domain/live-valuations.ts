import { DrainingError, NotFoundError, rateLimitedFor } from '../errors.js'
import type { QuoteProvider } from '../quotes/provider.js'
import type { Asset } from '../schemas/asset.js'
import type { PortfolioValuation } from '../schemas/valuation.js'
import type { ChangeFeed } from '../change-feed/change-feed-core.js'
import type { PortfolioChange, Unsubscribe } from '../change-feed/change-events.js'
import type { PortfolioReads } from './portfolio-read-cache.js'
import type { Access } from './access.js'
import { possibleId } from './common.js'
import { ifReached, streamUntil } from './ownership.js'
import type { Log } from './ports.js'
import { QuoteRefresher } from './quote-refresher.js'
import { coinsOf, marketTickers } from './quotes.js'
import { sameValuation, valuate } from './portfolio-valuation.js'
import { ValuationStream, type ValuationEvent } from './live-valuation-stream.js'

export type { ValuationEvent } from './live-valuation-stream.js'

/** The live valuations' settings (docs/deploy.md#every-variable). */
export interface LiveValuationOptions {
  /** VALUATION_MIN_INTERVAL_MS: the shortest time between two messages of one stream. */
  minIntervalMs: number
  /** VALUATION_STREAMS_PER_CREDENTIAL: open streams per API key (or principal) on an instance. */
  streamsPerCaller: number
  /** QUOTES_TTL (at least a second): how often the watched symbols' quotes are asked again. */
  refreshIntervalMs: number
  /**
   * While the change feed is unproven (other instances' changes may not be heard), how often each
   * watched portfolio is read again from the database instead: 2 s by default.
   */
  unprovenRereadMs?: number
}

export const LIVE_VALUATION_DEFAULTS: LiveValuationOptions = {
  minIntervalMs: 1000,
  streamsPerCaller: 100,
  refreshIntervalMs: 60_000
}

/**
 * Without a proven feed a stream still moves within this (plus its read and VALUATION_MIN_INTERVAL_MS):
 * one read per watched portfolio every 2 s, the bound of the feed's own heartbeats.
 */
const UNPROVEN_REREAD_MS = 2000

/** A stream over too many: try again once one of the caller's own streams has closed. */
const STREAM_LIMIT_RETRY_SECONDS = 5

const missing = (): Error => new NotFoundError('Portfolio')

/**
 * One portfolio watched by this instance's streams: its assets as last read, its valuation as
 * last computed, told to each stream when it changes (anything but `updatedAt`).
 */
class PortfolioWatch {
  readonly streams = new Set<ValuationStream>()
  /** Opens waiting for the first read. */
  joining = 0
  current: PortfolioValuation | undefined
  deleted = false
  readonly ready: Promise<void>
  private assets: readonly Asset[] = []
  private tickers: readonly string[] = []
  private loading: Promise<void> | undefined
  private again = false
  private closed = false

  constructor (
    readonly portfolioId: string,
    private readonly portfolios: Pick<PortfolioReads, 'portfolioAndAssets'>,
    private readonly quotes: QuoteRefresher
  ) {
    this.ready = this.reload()
  }

  holds (tickers: ReadonlySet<string>): boolean {
    return this.tickers.some(ticker => tickers.has(ticker))
  }

  /** Reads the portfolio again; concurrent calls share one read, followed by one more if any came during it. */
  async reload (): Promise<void> {
    if (this.loading !== undefined) {
      this.again = true
      return await this.loading
    }
    this.loading = (async () => {
      try {
        do {
          this.again = false
          await this.load()
        } while (this.again && !this.closed && !this.deleted)
      } finally {
        this.loading = undefined
      }
    })()
    return await this.loading
  }

  private async load (): Promise<void> {
    const read = await this.portfolios.portfolioAndAssets(this.portfolioId)
    if (this.closed || this.deleted) return
    if (read === undefined) {
      this.deleted = true
      for (const stream of this.streams) stream.deleted(this.portfolioId)
      return
    }
    const tickers = marketTickers(read.assets)
    this.quotes.knowCoins(coinsOf(read.assets))
    const added = tickers.filter(ticker => !this.tickers.includes(ticker))
    const removed = this.tickers.filter(ticker => !tickers.includes(ticker))
    this.tickers = tickers
    const arrived = this.quotes.acquire(added)
    this.quotes.release(removed)
    await arrived
    if (this.closed) return
    this.assets = read.assets
    this.revalue()
  }

  /** Values the assets with the quotes held now; streams hear of a change. */
  revalue (): void {
    const valuation = valuate(this.portfolioId, this.assets, this.quotes, new Date())
    if (sameValuation(this.current, valuation)) return
    this.current = valuation
    for (const stream of this.streams) stream.offer(valuation)
  }

  close (): void {
    this.closed = true
    this.quotes.release(this.tickers)
    this.tickers = []
  }
}

/**
 * Live valuations (docs/api.md#valuation): each stream's first message is the portfolio's current
 * valuation, then one each time a value changes — an asset or the portfolio changed on any
 * instance (the change feed; while the feed is unproven, each portfolio is read again every
 * {@link UNPROVEN_REREAD_MS} instead), or a quote of its symbols moved (the refresher) — at most one per
 * `minIntervalMs`, the latest winning; a deleted portfolio ends its streams. The streams of one
 * portfolio share one watch (one read per change); every watch of the instance shares one
 * refresher (one provider request per refresh). A stream that ends is forgotten at once: its
 * watch, its symbols and its place in its caller's count go with it.
 */
export class LiveValuations {
  private readonly watches = new Map<string, PortfolioWatch>()
  private readonly perCaller = new Map<string, number>()
  private readonly refresher: QuoteRefresher
  private stopListening: Unsubscribe | undefined
  /** While portfolios are watched: reads them all again whenever the feed is unproven. */
  private rereads: NodeJS.Timeout | undefined
  private closed = false

  constructor (
    private readonly portfolios: Pick<PortfolioReads, 'portfolioAndAssets'>,
    quotes: QuoteProvider,
    private readonly feed: Pick<ChangeFeed, 'onPortfolioChange' | 'proven'>,
    private readonly log: Log,
    private readonly options: LiveValuationOptions = LIVE_VALUATION_DEFAULTS
  ) {
    this.refresher = new QuoteRefresher(quotes, Math.max(options.refreshIntervalMs, 1000), log)
    this.refresher.onMove(tickers => {
      for (const watch of this.watches.values()) if (watch.holds(tickers)) watch.revalue()
    })
  }

  /**
   * A stream of the portfolio's valuations for the caller, within its portfolio scope
   * (docs/api.md#whose-portfolios); `return()` ends it, and so does the end of the user token
   * that opened it. Refused before it starts: 401 without the credential, 429 past the caller's
   * streams, 404 for an unknown portfolio or another user's.
   */
  async open (access: Access, portfolioId: string): Promise<AsyncIterableIterator<ValuationEvent>> {
    const scope = await access.portfolioScope()
    if (!possibleId(portfolioId)) throw missing()
    if (scope.kind === 'owner' &&
      ifReached(scope, await this.portfolios.portfolioAndAssets(portfolioId),
        read => read.portfolio.userId) === undefined) {
      throw missing()
    }
    // Shutting down: a client retries elsewhere.
    if (this.closed) throw new DrainingError()
    const caller = access.caller()
    const open = this.perCaller.get(caller) ?? 0
    if (open >= this.options.streamsPerCaller) throw rateLimitedFor(STREAM_LIMIT_RETRY_SECONDS)
    this.perCaller.set(caller, open + 1)
    const watch = this.watch(portfolioId)
    watch.joining++
    try {
      await watch.ready
      const first = watch.current
      if (this.closed) throw new DrainingError()
      if (watch.deleted || first === undefined) throw missing()
      const stream = new ValuationStream(this.options.minIntervalMs, first, () => { this.left(watch, stream, caller) },
        streamUntil(scope))
      watch.streams.add(stream)
      return stream
    } catch (error) {
      this.leaveCount(caller)
      throw error
    } finally {
      watch.joining--
      this.disposeIfUnused(watch)
    }
  }

  /** Open streams of this instance. */
  get streams (): number {
    let count = 0
    for (const watch of this.watches.values()) count += watch.streams.size
    return count
  }

  /** Portfolios and symbols watched by this instance's streams. */
  get watched (): { portfolios: number, symbols: number } {
    return { portfolios: this.watches.size, symbols: this.refresher.size }
  }

  /** Ends every stream (the instance shuts down) and refuses new ones (503 `DRAINING`). */
  close (): void {
    this.closed = true
    for (const watch of [...this.watches.values()]) for (const stream of [...watch.streams]) stream.end()
    this.refresher.stop()
    clearInterval(this.rereads)
  }

  private watch (portfolioId: string): PortfolioWatch {
    let watch = this.watches.get(portfolioId)
    if (watch === undefined) {
      watch = new PortfolioWatch(portfolioId, this.portfolios, this.refresher)
      this.watches.set(portfolioId, watch)
      // Failures are the opener's (it awaits `ready`); later reloads are logged where they run.
      watch.ready.catch(() => {})
      this.stopListening ??= this.feed.onPortfolioChange(change => { this.changed(change) })
      if (this.rereads === undefined) {
        this.rereads = setInterval(() => {
          if (!this.feed.proven()) this.changed({ kind: 'all' })
        }, this.options.unprovenRereadMs ?? UNPROVEN_REREAD_MS)
        this.rereads.unref()
      }
    }
    return watch
  }

  private changed (change: PortfolioChange): void {
    const watches = change.kind === 'all' ? [...this.watches.values()] : [this.watches.get(change.portfolioId)]
    for (const watch of watches) {
      watch?.reload().catch((error: unknown) => {
        this.log.warn({ err: error, portfolioId: watch.portfolioId }, 'valuation not refreshed after a change')
      })
    }
  }

  private left (watch: PortfolioWatch, stream: ValuationStream, caller: string): void {
    this.leaveCount(caller)
    watch.streams.delete(stream)
    this.disposeIfUnused(watch)
  }

  private leaveCount (caller: string): void {
    const open = (this.perCaller.get(caller) ?? 1) - 1
    if (open > 0) this.perCaller.set(caller, open)
    else this.perCaller.delete(caller)
  }

  private disposeIfUnused (watch: PortfolioWatch): void {
    if (watch.streams.size > 0 || watch.joining > 0 || this.watches.get(watch.portfolioId) !== watch) return
    this.watches.delete(watch.portfolioId)
    watch.close()
    if (this.watches.size === 0) {
      this.stopListening?.()
      this.stopListening = undefined
      clearInterval(this.rereads)
      this.rereads = undefined
    }
  }
}
