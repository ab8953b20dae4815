import { isTicker, type QuoteProvider } from '../quotes/provider.js'
import type { EventsRead } from '../schemas/corporate-events.js'
import { eventBookOf, NO_EVENTS, type EventBook } from './corporate-events.js'
import type { Log } from './ports.js'
import type { ReplayedEvents } from './replay.js'

/** Thrown inside a write that found a symbol's events not at hand: they are read outside it, and it runs again. */
class EventsToRead extends Error {
  constructor (readonly symbol: string) {
    super(`the corporate events of ${symbol} are read before the write`)
  }
}

/** The events of a symbol as of a day (`YYYY-MM-DD`), for a write's replay; throws when they are not at hand. */
export type EventsOf = (symbol: string, today: string) => ReplayedEvents

/**
 * The corporate events of symbols as the domain applies them (src/domain/corporate-events.ts), through the quote
 * provider's cache (asked at most once a day per symbol, the last known answered when it fails:
 * docs/api.md#corporate-events). A symbol that is no ticker, or a provider without events, has none. Each read is
 * made a book once; an event that cannot be applied is logged once per symbol and event (`warn`).
 */
export class EventBooks {
  private readonly books = new WeakMap<EventsRead, EventBook>()
  private readonly warned = new Set<string>()

  constructor (private readonly quotes: QuoteProvider | undefined, private readonly log: Log) {}

  /** The events of `symbol` last read on this instance, without asking; undefined when never. */
  known (symbol: string): EventBook | undefined {
    if (this.quotes?.events === undefined || !isTicker(symbol)) return NO_EVENTS
    const read = this.quotes.eventsKnown?.(symbol)
    return read === undefined ? undefined : this.bookOf(symbol, read)
  }

  /** The events of `symbols`, read today, else asked of the provider (whose failure is the caller's). */
  async read (symbols: readonly string[], log: Log): Promise<Map<string, EventBook>> {
    return await this.readWith(symbols, async (tickers, quotes) => await quotes.events?.(tickers, log))
  }

  /**
   * `write` with the events of the symbols it names (`eventsOf`): those known on this instance; a symbol's never read
   * here stops the write (its transaction rolled back), is read, and the write runs again. No provider is asked while
   * a write holds the store. A provider that fails does not refuse the investor's write: it runs with none of the
   * symbol's events (its `eventsAsOf` null), which the refresh applies once they are read
   * (src/domain/events-refresh.ts).
   */
  async during<T> (write: (eventsOf: EventsOf) => Promise<T>): Promise<T> {
    const read = new Map<string, EventBook>()
    const eventsOf: EventsOf = (symbol, today) => {
      const book = read.get(symbol) ?? this.known(symbol)
      if (book === undefined) throw new EventsToRead(symbol)
      return { book, today }
    }
    try {
      return await write(eventsOf)
    } catch (error) {
      if (!(error instanceof EventsToRead)) throw error
      read.set(error.symbol, await this.readForWrite(error.symbol))
      return await write(eventsOf)
    }
  }

  /** The events of `symbol` for a write: none when the provider fails (logged). */
  private async readForWrite (symbol: string): Promise<EventBook> {
    try {
      return (await this.read([symbol], this.log)).get(symbol) ?? NO_EVENTS
    } catch (error) {
      this.log.warn({ err: error, symbol }, `corporate events of ${symbol} not read: the write counts none of them`)
      return NO_EVENTS
    }
  }

  private async readWith (
    symbols: readonly string[],
    ask: (tickers: string[], quotes: QuoteProvider) => Promise<Map<string, EventsRead> | undefined>
  ): Promise<Map<string, EventBook>> {
    const tickers = [...new Set(symbols.filter(isTicker))]
    const reads = this.quotes === undefined || tickers.length === 0 ? undefined : await ask(tickers, this.quotes)
    return new Map(symbols.map(symbol => {
      const read = reads?.get(symbol)
      return [symbol, read === undefined ? NO_EVENTS : this.bookOf(symbol, read)]
    }))
  }

  private bookOf (symbol: string, read: EventsRead): EventBook {
    const kept = this.books.get(read)
    if (kept !== undefined) return kept
    const book = eventBookOf(read)
    this.books.set(read, book)
    for (const event of book.unapplied) {
      const key = `${symbol} ${event.label} ${event.dataCom ?? ''} ${event.why}`
      if (this.warned.has(key)) continue
      this.warned.add(key)
      this.log.warn({ symbol, event: event.label, dataCom: event.dataCom, why: event.why },
        `corporate event of ${symbol} not applied: ${event.label} of ${event.dataCom ?? 'no data com'} (${event.why})`)
    }
    return book
  }
}
