import type { FastifyBaseLogger } from 'fastify'
import type { Redis } from 'ioredis'

/** Keys remembered at most: a flood of distinct keys cannot grow memory without bound. */
const MAX_KEYS_PER_WINDOW = 100_000

/**
 * Counts events per key in one-minute windows, each starting at its key's first event (so a
 * burst is never split by a wall-clock minute), in this instance's memory: cheap enough to run
 * before any real work. When the map is full, ended windows are swept; a new key that still
 * finds no room is not counted, which only lets it through: memory stays bounded.
 */
export class WindowCounter {
  private readonly windows = new Map<string, { count: number, endsAtMs: number }>()

  constructor (private readonly limit: number, private readonly windowMs = 60_000) {}

  /** Counts one event of `key`: the seconds to wait when it is past the limit, else `undefined`. */
  hit (key: string, nowMs = Date.now()): number | undefined {
    let window = this.windows.get(key)
    if (window === undefined || window.endsAtMs <= nowMs) {
      if (window === undefined && this.windows.size >= MAX_KEYS_PER_WINDOW) this.sweep(nowMs)
      if (window === undefined && this.windows.size >= MAX_KEYS_PER_WINDOW) return undefined
      window = { count: 0, endsAtMs: nowMs + this.windowMs }
      this.windows.set(key, window)
    }
    window.count += 1
    return window.count > this.limit ? secondsUntil(window.endsAtMs, nowMs) : undefined
  }

  private sweep (nowMs: number): void {
    for (const [key, window] of this.windows) if (window.endsAtMs <= nowMs) this.windows.delete(key)
  }
}

function secondsUntil (endMs: number, nowMs: number): number {
  return Math.max(1, Math.ceil((endMs - nowMs) / 1000))
}

/** Calls per minute that many callers share: `take()` is the seconds to wait, or `undefined` to go ahead. */
export interface SharedBudget {
  take: (log: FastifyBaseLogger) => Promise<number | undefined>
}

/** Calls per minute for each key (a principal's share of a budget): `take(key)` as {@link SharedBudget.take}. */
export interface KeyedBudget {
  take: (key: string, log: FastifyBaseLogger) => Promise<number | undefined>
}

/** A budget per key, of this instance alone (keys bounded as in {@link WindowCounter}). */
export function localKeyedBudget (perMinute: number): KeyedBudget {
  const counter = new WindowCounter(perMinute)
  return { take: async key => counter.hit(key) }
}

/** A budget of this instance alone. */
export function localBudget (perMinute: number): SharedBudget {
  const counter = new WindowCounter(perMinute)
  return { take: async () => counter.hit('') }
}

/**
 * A budget per key that every instance shares through Redis: one counter per key that lives a
 * minute from its first call (`SET … PX 60000 NX`, then `INCR`, in one transaction), named
 * `bff-budget:<name>:<key>`. When Redis fails, this instance counts alone rather than stop
 * calling or call without limit.
 */
export function redisKeyedBudget (redis: Redis, name: string, perMinute: number): KeyedBudget {
  const fallback = localKeyedBudget(perMinute)
  return {
    take: async (key, log) => {
      const counter = key === '' ? `bff-budget:${name}` : `bff-budget:${name}:${key}`
      try {
        const results = await redis.multi().set(counter, 0, 'PX', 60_000, 'NX').incr(counter).pttl(counter).exec()
        const count = Number(results?.[1]?.[1])
        const remainingMs = Number(results?.[2]?.[1])
        if (!Number.isFinite(count) || !Number.isFinite(remainingMs)) throw new Error('no count from Redis')
        return count > perMinute ? Math.max(1, Math.ceil(remainingMs / 1000)) : undefined
      } catch (error) {
        // Redis's loss is logged once by its connection (bff_dependency_up), not once per call.
        log.debug({ err: error, budget: name }, 'shared budget unavailable; counting locally')
        return await fallback.take(key, log)
      }
    }
  }
}

/** One budget every instance shares through Redis (`bff-budget:<name>`), see {@link redisKeyedBudget}. */
export function redisBudget (redis: Redis, name: string, perMinute: number): SharedBudget {
  const keyed = redisKeyedBudget(redis, name, perMinute)
  return { take: async log => await keyed.take('', log) }
}
