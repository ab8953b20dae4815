import type { PortfolioValuation } from '../schemas/valuation.js'
import { callAt } from './time.js'
import { sameValuation } from './portfolio-valuation.js'

/** What a valuation stream delivers: a valuation, or the end of its portfolio (then the stream is done). */
export type ValuationEvent =
  | { kind: 'valuation', valuation: PortfolioValuation }
  | { kind: 'deleted', portfolioId: string }

/**
 * One client's stream of valuations, read as an async iterator (an SSE response writes each event,
 * a GraphQL subscription sends it). It hands over at most one valuation per `minIntervalMs`, the
 * latest offered winning, and only one that differs from the last handed over (but for
 * `updatedAt`); it holds at most one event a slow reader has not read yet, replaced by a newer
 * one. `return()` (a client that went away) ends it at once and calls `onEnd`; so does `endsAt`
 * (epoch milliseconds), when the credential that opened it expires.
 */
export class ValuationStream implements AsyncIterableIterator<ValuationEvent> {
  private sent: PortfolioValuation
  private sentAt = Date.now()
  /** Offered while the interval ran, handed over when it ends. */
  private latest: PortfolioValuation | undefined
  private timer: NodeJS.Timeout | undefined
  /** Handed over, not read yet. */
  private unread: ValuationEvent | undefined
  private reader: ((result: IteratorResult<ValuationEvent>) => void) | undefined
  private last = false
  private done = false
  private readonly cancelEnd: (() => void) | undefined

  constructor (
    private readonly minIntervalMs: number,
    first: PortfolioValuation,
    private readonly onEnd: () => void,
    endsAt?: number
  ) {
    this.sent = first
    this.hand({ kind: 'valuation', valuation: first })
    if (endsAt !== undefined) this.cancelEnd = callAt(endsAt, () => { this.finish() })
  }

  /** A newer valuation of the portfolio. */
  offer (valuation: PortfolioValuation): void {
    if (this.last || this.done) return
    this.latest = valuation
    const wait = this.sentAt + this.minIntervalMs - Date.now()
    if (wait <= 0) this.flush()
    else this.timer ??= setTimeout(() => { this.timer = undefined; this.flush() }, wait)
  }

  /** The portfolio was deleted: that is the last event, at once. */
  deleted (portfolioId: string): void {
    if (this.last || this.done) return
    clearTimeout(this.timer)
    this.latest = undefined
    this.last = true
    this.hand({ kind: 'deleted', portfolioId })
  }

  /** Done now, whatever is unread (the instance shuts down). */
  end (): void {
    this.finish()
  }

  async next (): Promise<IteratorResult<ValuationEvent>> {
    const unread = this.unread
    if (unread !== undefined) {
      this.unread = undefined
      return { done: false, value: unread }
    }
    if (this.last || this.done) {
      this.finish()
      return { done: true, value: undefined }
    }
    return await new Promise(resolve => { this.reader = resolve })
  }

  async return (): Promise<IteratorResult<ValuationEvent>> {
    this.finish()
    return { done: true, value: undefined }
  }

  [Symbol.asyncIterator] (): this {
    return this
  }

  private flush (): void {
    const latest = this.latest
    this.latest = undefined
    if (latest === undefined || sameValuation(this.sent, latest)) return
    this.sent = latest
    this.sentAt = Date.now()
    this.hand({ kind: 'valuation', valuation: latest })
  }

  private hand (event: ValuationEvent): void {
    const reader = this.reader
    this.reader = undefined
    if (reader !== undefined) reader({ done: false, value: event })
    else this.unread = event
  }

  private finish (): void {
    if (this.done) return
    this.done = true
    clearTimeout(this.timer)
    this.cancelEnd?.()
    this.unread = undefined
    const reader = this.reader
    this.reader = undefined
    reader?.({ done: true, value: undefined })
    this.onEnd()
  }
}
