import type { FastifyBaseLogger } from 'fastify'
import type { ClientConfig as PostgresClientConfig } from 'pg'
import {
  CHANGE_FEED_CHANNEL, heartbeatChannel, LocalDelivery, type ChangeFeed, type FeedHealth
} from './change-feed-core.js'
import { FeedProof, PROOF_DEFAULTS, type ProofOptions } from './feed-proof.js'

/** The LISTEN connection comes back after 500 ms, doubling (jittered) up to 5 s, for as long as it takes. */
const RECONNECT_BACKOFF = { initialDelay: 500, maxDelay: 5000 }

/** The name the LISTEN connection gives itself (`pg_stat_activity.application_name`). */
const LISTEN_APPLICATION_NAME = 'bff-change-feed'

export interface PostgresChangeFeedOptions {
  /** pg's settings of the LISTEN connection: a direct one, never through a pooler in transaction mode. */
  listen: PostgresClientConfig
  /**
   * Sends a notification the way writes do (the store's pool, `pg_notify`), so that a heartbeat proves
   * the whole path: a write's announcement, the server, this instance's LISTEN.
   */
  notify: (channel: string, payload: string) => Promise<void>
  /** What to check when heartbeats are never heard: the warning's second half. */
  hint: string
  health?: FeedHealth
  proof?: ProofOptions
}

/**
 * Many instances through PostgreSQL `LISTEN/NOTIFY` on the service's own database: one connection per
 * instance listens, made again with capped backoff whenever it is lost (or not there at start: an
 * instance starts without it). Writes announce their changes inside their own transactions
 * ({@link ChangeFeed.announcement}), so a change is told if and only if it committed; other messages
 * (item statuses, heartbeats) are notified through the store too. Messages published while the
 * connection is down are not replayed: the feed is unproven until it listens and its heartbeat is back.
 */
export async function postgresChangeFeed (
  options: PostgresChangeFeedOptions, log: FastifyBaseLogger
): Promise<ChangeFeed> {
  const [{ default: pg }, { ExponentialBackoff, handleAll, retry }] = await Promise.all([
    import('pg'), import('cockatiel')
  ])
  const { health } = options
  const local = new LocalDelivery(log)
  const heartbeats = heartbeatChannel(local.origin)
  const closing = new AbortController()
  let client: InstanceType<typeof pg.Client> | undefined
  let connecting: InstanceType<typeof pg.Client> | undefined
  const proof = new FeedProof({
    ...options.proof ?? PROOF_DEFAULTS,
    send: async stamp => { await options.notify(heartbeats, stamp) },
    health,
    resync: () => { local.resync() },
    hint: options.hint
  })
  const reconnect = retry(handleAll, { backoff: new ExponentialBackoff(RECONNECT_BACKOFF) })
  reconnect.onRetry(event => { if ('error' in event) proof.failed(event.error) })

  async function listen (): Promise<void> {
    const next = new pg.Client({ application_name: LISTEN_APPLICATION_NAME, ...options.listen })
    next.on('notification', message => {
      if (message.channel === heartbeats) proof.returned(message.payload ?? '')
      else if (message.channel === CHANGE_FEED_CHANNEL) local.received(message.payload ?? '')
    })
    next.on('error', (error: Error) => {
      next.end().catch(() => {})
      if (client !== next) return
      client = undefined
      proof.lost(error)
      listenUntilDone()
    })
    connecting = next
    try {
      await next.connect()
      await next.query(`LISTEN ${CHANGE_FEED_CHANNEL}; LISTEN ${heartbeats}`)
    } catch (error) {
      await next.end().catch(() => {})
      throw error
    } finally {
      connecting = undefined
    }
    if (closing.signal.aborted) {
      await next.end().catch(() => {})
      return
    }
    client = next
    proof.listening()
  }

  function listenUntilDone (): void {
    reconnect.execute(listen, closing.signal).catch(() => { /* closed while reconnecting */ })
  }

  // The first attempt is waited for, then the first heartbeat (at most the bound), so a started
  // instance hears what is published next and says at start whether it is proven; a database that
  // is not there yet is waited for in the background.
  await listen().catch((error: unknown) => {
    proof.lost(error)
    listenUntilDone()
  })
  await proof.settled
  return {
    ...local.feed(
      'postgres',
      async text => { await options.notify(CHANGE_FEED_CHANNEL, text) },
      async () => {
        closing.abort()
        proof.stop()
        await Promise.all([client, connecting].map(async open => { await open?.end().catch(() => {}) }))
      },
      () => proof.proven()
    ),
    announcement: changes => ({
      sql: `select ${changes.map((_, index) => `pg_notify($1, $${index + 2})`).join(', ')}`,
      parameters: [CHANGE_FEED_CHANNEL, ...changes.map(change => local.portfolioMessage(change))]
    })
  }
}
