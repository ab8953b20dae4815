import { isTicker } from '../quotes/provider.js'
import { dayKey } from '../schemas/calendar.js'
import { digestOf, type EventBook } from './corporate-events.js'
import type { EventBooks } from './event-books.js'
import { positionAt, positionColumns, positionWithEvents, reconciledTrades } from './holdings.js'
import type { DataStore, Log } from './ports.js'

/** How often an instance looks for events to apply: a day's events are asked once, at its first run of the day. */
const EVENTS_REFRESH_MS = 60 * 60 * 1000
/** After a run that failed (the store not ready, the provider failing on events never read), the next one. */
const EVENTS_RETRY_MS = 60 * 1000

/** What one run did: the symbols it read, the assets it computed again, the portfolios whose assets it marked read. */
export interface RefreshRun {
  symbols: number
  recomputed: number
  marked: number
}

/**
 * The stored positions kept with the corporate events of their symbols (docs/api.md#corporate-events): at start and
 * every hour, the events of every symbol held (and of those sold: their assets stay) are read through the quote
 * cache — so asked of the provider at most once a day per symbol and instance — and each asset whose position was
 * not computed with the events in effect today is computed again in a write of its own (its digest compared again
 * under its lock, so instances never write one change twice), which tells its portfolio's change: the read cache,
 * the performances and the live valuations follow. The assets computed with them are marked read (`eventsAsOf`) once
 * a day. A provider that fails keeps the events last known, and the assets their `eventsAsOf`.
 */
export class EventsRefresh {
  private timer: NodeJS.Timeout | undefined
  private running: Promise<RefreshRun> | undefined
  private queued: Promise<RefreshRun> | undefined
  private closed = false

  constructor (
    private readonly store: Pick<DataStore, 'assets' | 'write'>,
    private readonly books: Pick<EventBooks, 'read'>,
    private readonly log: Log,
    private readonly now: () => Date = () => new Date()
  ) {}

  /** Runs now, then every {@link EVENTS_REFRESH_MS} (a minute after a run that failed). */
  start (): void {
    if (this.closed || this.timer !== undefined) return
    const run = (): void => {
      this.refreshNow().then(() => EVENTS_REFRESH_MS, () => EVENTS_RETRY_MS).then(wait => {
        if (!this.closed) this.timer = setTimeout(run, wait).unref()
      }, () => {})
    }
    this.timer = setTimeout(run, 0).unref()
  }

  close (): void {
    this.closed = true
    clearTimeout(this.timer)
  }

  /**
   * One run now, for the timer, the demo data's reset and a test's explicit refresh; while one is on its way, one more
   * after it (shared by whoever asks meanwhile), so that it sees every write made before the call. Rejects when the
   * symbols' events cannot be read.
   */
  async refreshNow (): Promise<RefreshRun> {
    if (this.running === undefined) return await this.begin()
    this.queued ??= this.running.then(() => {}, () => {}).then(async () => {
      this.queued = undefined
      return await this.begin()
    })
    return await this.queued
  }

  private async begin (): Promise<RefreshRun> {
    this.running = this.run().finally(() => { this.running = undefined })
    return await this.running
  }

  private async run (): Promise<RefreshRun> {
    const symbols = (await this.store.assets.symbols()).filter(isTicker)
    const done: RefreshRun = { symbols: symbols.length, recomputed: 0, marked: 0 }
    if (symbols.length === 0) return done
    let books: Map<string, EventBook>
    try {
      books = await this.books.read(symbols, this.log)
    } catch (error) {
      this.log.warn({ err: error, symbols: symbols.length }, 'corporate events not read: positions kept as they are')
      throw error
    }
    const today = dayKey(this.now())
    for (const symbol of symbols) {
      const book = books.get(symbol) as EventBook
      const digest = digestOf(book, today)
      for (const id of await this.store.assets.staleForEvents(symbol, digest)) {
        if (await this.recompute(id, book, today, digest)) done.recomputed++
      }
      const asOf = book.asOf
      if (asOf !== null) done.marked += await this.markRead(symbol, digest, asOf)
    }
    return done
  }

  /** The asset's position with `book`'s events, unless it was computed with them meanwhile; whether it was written. */
  private async recompute (id: string, book: EventBook, today: string, digest: string): Promise<boolean> {
    try {
      return await this.store.write(async work => {
        const locked = await work.assets.lockForWrite(id)
        if (locked === undefined || (locked.eventsCurrent && locked.eventsDigest === digest)) return false
        const recorded = await reconciledTrades(work, locked)
        const held = positionWithEvents(recorded, recorded, { book, today })
        // A quantity the events leave as it was keeps the asset's price, its own if it has one (a PATCH's).
        const { quantity, price } = locked.value
        const same = held.position.quantity.eq(quantity)
        await work.assets.setPosition(id,
          same ? positionAt(quantity, price, held.events) : positionColumns(held.position, held.events))
        await work.portfolios.touch(locked.value.portfolioId)
        return true
      })
    } catch (error) {
      this.log.warn({ err: error, assetId: id }, 'asset not computed again with its corporate events')
      return false
    }
  }

  /** Marks the assets of `symbol` computed with its events read at `asOf`; how many portfolios it touched. */
  private async markRead (symbol: string, digest: string, asOf: string): Promise<number> {
    return await this.store.write(async work => {
      const portfolios = await work.assets.markEventsRead(symbol, digest, asOf)
      for (const id of portfolios) await work.portfolios.touch(id)
      return portfolios.length
    })
  }
}
