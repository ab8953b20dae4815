import type { Redis } from 'ioredis'
import type { DependencyHealth } from '../observability/dependencies.js'

/**
 * A Redis connection for the counters every instance shares (the rate limit, the aggregator
 * budgets). While Redis is away every command fails at once, without waiting in a queue, so the
 * callers' fallbacks (the rate limit fails open, the budgets count in this instance) cost no
 * latency; ioredis reconnects by itself (50 ms more per attempt, up to 2 s), and each loss and
 * return is reported once. The first connection is waited for, at most its 500 ms timeout, so
 * that the first requests are counted; an instance starts without Redis all the same.
 */
export async function sharedCounterRedis (url: string, health?: DependencyHealth): Promise<Redis> {
  const { Redis } = await import('ioredis')
  const redis = new Redis(url, { connectTimeout: 500, maxRetriesPerRequest: 1, enableOfflineQueue: false })
  redis.on('error', (error: Error) => { health?.down(error) })
  redis.on('ready', () => { health?.up() })
  await new Promise<void>(resolve => {
    const settle = (): void => {
      redis.off('ready', settle)
      redis.off('error', settle)
      resolve()
    }
    redis.on('ready', settle)
    redis.on('error', settle)
  })
  return redis
}
