import type { FastifyBaseLogger } from 'fastify'
import {
  CHANGE_FEED_CHANNEL, heartbeatChannel, LocalDelivery, type ChangeFeed, type FeedHealth
} from './change-feed-core.js'
import { FeedProof, PROOF_DEFAULTS, type ProofOptions } from './feed-proof.js'

/**
 * Many instances through Redis pub/sub: every instance subscribes to one channel, and to its own
 * heartbeats' (feed-proof.ts), both on one connection. ioredis reconnects by itself (50 ms more per
 * attempt, up to 2 s) and subscribes again; while Redis is away a publish fails at once (this
 * instance's listeners were told; the others were not) and the feed is unproven within the bound.
 * Changes are published after their write commits: a change whose publish fails (or that a writer
 * dies before publishing) is not told, and other instances may answer the state before it for at
 * most the read cache's time to live (docs/api.md#caching).
 */
export async function redisChangeFeed (
  url: string, log: FastifyBaseLogger, health?: FeedHealth, proofOptions: ProofOptions = PROOF_DEFAULTS
): Promise<ChangeFeed> {
  const { Redis } = await import('ioredis')
  const local = new LocalDelivery(log)
  const heartbeats = heartbeatChannel(local.origin)
  const publisher = new Redis(url, { connectTimeout: 2000, maxRetriesPerRequest: 1, enableOfflineQueue: false })
  // The subscription waits for Redis however long it takes: an instance starts without it.
  const subscriber = new Redis(url, { connectTimeout: 2000, maxRetriesPerRequest: null })
  const proof = new FeedProof({
    ...proofOptions,
    send: async stamp => { await publisher.publish(heartbeats, stamp) },
    health,
    resync: () => { local.resync() },
    hint: 'is REDIS_URL\'s server delivering pub/sub messages (docs/deploy.md#failure-modes)?'
  })
  for (const connection of [publisher, subscriber]) {
    connection.on('error', (error: Error) => { proof.failed(error) })
  }
  subscriber.on('close', () => { proof.lost(new Error('change feed: Redis subscription connection closed')) })
  // 'ready' comes before ioredis subscribes again: messages are heard once Redis answers this subscribe.
  subscriber.on('ready', () => {
    /* c8 ignore next -- called only when the connection drops between 'ready' and Redis's answer */
    const lost = (error: unknown): void => { log.debug({ err: error }, 'change feed: not subscribed (lost)') }
    subscriber.subscribe(CHANGE_FEED_CHANNEL, heartbeats).then(() => { proof.listening() }, lost)
  })
  subscriber.on('message', (channel: string, message: string) => {
    if (channel === heartbeats) proof.returned(message)
    else local.received(message)
  })
  await proof.settled
  return local.feed(
    'redis',
    async text => { await publisher.publish(CHANGE_FEED_CHANNEL, text) },
    // Not `quit`: with Redis away it would wait in the queue for a connection that may never come.
    async () => { proof.stop(); publisher.disconnect(); subscriber.disconnect() },
    () => proof.proven()
  )
}
