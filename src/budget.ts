import type { FastifyReply } from 'fastify'
import { RateLimitedError } from './errors.js'

/** Keys one window remembers at most: a flood of distinct keys cannot grow memory without bound. */
const MAX_KEYS_PER_WINDOW = 100_000

/**
 * Counts events per key in fixed one-minute windows, in this instance's memory: cheap enough to
 * run before any real work (a map lookup). A key first seen while the window is full is not
 * counted, which only lets it through: memory is bounded, the budget is best effort then.
 */
export class WindowCounter {
  private window = -1
  private readonly counts = new Map<string, number>()

  constructor (private readonly limit: number, private readonly windowMs = 60_000) {}

  /** Counts one event of `key`: the seconds to wait when it is past the limit, else `undefined`. */
  hit (key: string, nowMs = Date.now()): number | undefined {
    const window = Math.floor(nowMs / this.windowMs)
    if (window !== this.window) {
      this.window = window
      this.counts.clear()
    }
    const count = (this.counts.get(key) ?? 0) + 1
    if (this.counts.has(key) || this.counts.size < MAX_KEYS_PER_WINDOW) this.counts.set(key, count)
    return count > this.limit ? secondsUntil((window + 1) * this.windowMs, nowMs) : undefined
  }
}

export function secondsUntil (endMs: number, nowMs: number): number {
  return Math.max(1, Math.ceil((endMs - nowMs) / 1000))
}

/** A 429 (CONTRACT §9 `RATE_LIMITED`) that says when to come back, in the body and in `Retry-After`. */
export function rateLimited (reply: FastifyReply, seconds: number): Error {
  reply.header('retry-after', String(seconds))
  return new RateLimitedError(`${seconds} seconds`)
}
