import { hostname } from 'node:os'
import pg from 'pg'
import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely'
import { BrokenCircuitError, ConsecutiveBreaker, ExponentialBackoff, circuitBreaker, handleWhen } from 'cockatiel'
import { storeUnavailable } from '../errors.js'
import type { DependencyHealth } from '../observability/dependencies.js'
import type { PoolState } from '../observability/telemetry.js'
import { isPoolWaitTimeout, isPostgresConnectionFailure } from './outage.js'
import { connectionSettings } from './postgres-settings.js'

/**
 * A statement unanswered this long is given up and its connection closed: a database host that
 * vanished without closing its connections (a failover, a partition) would otherwise hold them
 * for the kernel's TCP timeout, many minutes. The service's statements take milliseconds.
 */
const STATEMENT_TIMEOUT_MS = 10_000
/** After a failed connection, new ones are tried again after 100 ms, doubling (jittered) up to 2 s. */
const RECONNECT_BACKOFF = { initialDelay: 100, maxDelay: 2000 }
/** How long the connections of a server shutting down may still answer after the first was lost. */
const LOSS_SETTLES_MS = 1000

export interface GuardedPoolOptions {
  size: number
  health?: DependencyHealth
}

/**
 * The PostgreSQL pool the store's Kysely runs on, made to survive the database's restarts
 * (docs/deploy.md#failure-modes):
 *
 * - every connection has an `error` listener, idle or in use: a connection the server ends is
 *   removed from the pool and reported, never an unhandled `error` event that ends the process;
 * - a connection that cannot be made, and a statement whose connection was lost, are answered as
 *   `storeUnavailable` (503 with `Retry-After`) within the connect timeout (2 s) at most;
 * - a read (`select`) outside a transaction whose connection was ended under it runs once more on
 *   a fresh connection (idle ones the same event ended are passed over); a write is never
 *   repeated, since it may have committed;
 * - after a failed connection, new connections wait for a circuit breaker (cockatiel) with capped
 *   exponential backoff: requests meanwhile fail at once instead of each knocking at a database
 *   that is restarting, and idle connections still serve;
 * - while the store is not migrated yet (started with its database down) every request is refused.
 */
export class GuardedPool implements PostgresPool {
  private readonly pool: pg.Pool
  private readonly health: DependencyHealth | undefined
  private readonly size: number
  private readonly clients = new WeakMap<pg.PoolClient, GuardedClient>()
  private readonly breaker = circuitBreaker(handleWhen(error => !isPoolWaitTimeout(error)), {
    halfOpenAfter: new ExponentialBackoff(RECONNECT_BACKOFF),
    breaker: new ConsecutiveBreaker(1)
  })

  private lastConnectFailure: unknown
  private refusedBecause: unknown
  /** When a connection was last lost: only one made after it shows the database is back. */
  private lostAt = 0

  constructor (url: string, options: GuardedPoolOptions) {
    this.size = options.size
    this.health = options.health
    this.pool = new pg.Pool({ ...connectionSettings(url), max: options.size, query_timeout: STATEMENT_TIMEOUT_MS })
    // An idle connection ended by the server: pg-pool has removed it already.
    this.pool.on('error', error => { this.lost(error) })
    // A connection in use that fails emits on itself: without a listener that would end the process.
    this.pool.on('connect', client => { client.on('error', error => { this.lost(error) }) })
  }

  /** Every request is refused with `cause` until {@link accept}: the store is not migrated yet. */
  refuse (cause: unknown): void {
    this.refusedBecause = cause ?? new Error('store not ready')
  }

  accept (): void {
    this.refusedBecause = undefined
  }

  async connect (): Promise<GuardedClient> {
    if (this.refusedBecause !== undefined) throw storeUnavailable(this.refusedBecause)
    let client: pg.PoolClient
    try {
      // Only a new connection goes through the breaker: an idle one, or a wait for one, needs no server's welcome.
      const opensOne = this.pool.idleCount === 0 && this.pool.totalCount < this.size
      client = opensOne ? await this.breaker.execute(async () => await this.pool.connect()) : await this.pool.connect()
    } catch (error) {
      if (error instanceof BrokenCircuitError) throw storeUnavailable(this.lastConnectFailure)
      if (!isPoolWaitTimeout(error)) {
        this.lastConnectFailure = error
        this.lost(error)
      }
      throw storeUnavailable(error)
    }
    let guarded = this.clients.get(client)
    if (guarded === undefined) {
      guarded = new GuardedClient(client, this, Date.now())
      this.clients.set(client, guarded)
    }
    return guarded
  }

  async end (): Promise<void> {
    await this.pool.end()
  }

  /** The pool's connections, for `bff_store_pool_connections`. */
  state (): PoolState {
    return { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount }
  }

  /**
   * A statement answered on a connection made at `connectedAt`. During a shutdown the old
   * connections still answer for a moment after the first is lost: the store is back once a
   * connection made since answers, or an older one a second after the loss (one connection ended
   * alone), so that an outage is one line, not one per such answer.
   */
  answered (connectedAt: number): void {
    if (connectedAt > this.lostAt || Date.now() - this.lostAt > LOSS_SETTLES_MS) this.health?.up()
  }

  lost (error: unknown): void {
    this.lostAt = Date.now()
    this.health?.down(error)
  }
}

/** `select …`: a statement that changes nothing, safe to send again. */
function isRead (text: string): boolean {
  return /^\s*select\s/i.test(text)
}

/** One pooled connection as Kysely sees it: errors translated, a lost read retried, a lost connection discarded. */
class GuardedClient implements PostgresPoolClient {
  private inTransaction = false
  private lostWith: Error | undefined

  constructor (
    private readonly client: pg.PoolClient, private readonly pool: GuardedPool, readonly connectedAt: number
  ) {}

  query<R> (sql: string, parameters: readonly unknown[]): Promise<PostgresQueryResult<R>>
  query<R> (cursor: PostgresCursor<R>): PostgresCursor<R>
  query<R> (
    sql: string | PostgresCursor<R>, parameters: readonly unknown[] = []
  ): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    /* c8 ignore next -- the store never streams (no cursor is configured), so Kysely never passes one */
    if (typeof sql !== 'string') throw new Error('cursors are not supported')
    return this.run<R>(sql, parameters, true)
  }

  private async run<R> (sql: string, parameters: readonly unknown[], retry: boolean): Promise<PostgresQueryResult<R>> {
    // Kysely's own words for a transaction's bounds.
    if (sql === 'begin' || sql.startsWith('start transaction')) this.inTransaction = true
    else if (sql === 'commit' || sql === 'rollback') this.inTransaction = false
    try {
      const result = await this.client.query(sql, parameters as unknown[])
      this.pool.answered(this.connectedAt)
      return result as unknown as PostgresQueryResult<R>
    } catch (error) {
      if (!isPostgresConnectionFailure(error)) throw error
      const failedAt = Date.now()
      this.lostWith = error as Error
      this.pool.lost(error)
      const timedOut = (error as Error).message.startsWith('Query read timeout')
      if (!retry || this.inTransaction || timedOut || !isRead(sql)) throw storeUnavailable(error)
      // Once more on another connection (this one is not back in the pool). An idle one the same
      // event ended may not be known dead yet: its failure does not count, a connection made since
      // gets the one try. At most one per connection of the pool.
      const next = await this.pool.connect()
      try {
        return await next.run<R>(sql, parameters, next.connectedAt <= failedAt)
      } finally {
        next.release()
      }
    }
  }

  release (): void {
    // pg-pool closes a connection released with an error instead of keeping it idle.
    const lost = this.lostWith
    this.lostWith = undefined
    this.inTransaction = false
    this.client.release(lost)
  }
}

/**
 * The name the migration connection gives itself (`pg_stat_activity.application_name`, which poolers pass
 * on), so that an instance waiting for another's migrations can say which one it waits for: the process
 * and its host (a container's name). An `application_name` in DATABASE_URL wins.
 */
const MIGRATION_APPLICATION_NAME = `bff-migrations ${process.pid}@${hostname()}`

/**
 * A pool of one connection for the migrations at start-up, ended after them: the service's pool
 * refuses requests until they are done, and their errors must reach the start-up as the driver
 * gave them (an unreachable server is waited for, a refused password is not).
 */
export function migrationPool (url: string, closing: AbortSignal): pg.Pool {
  const pool = new pg.Pool({ application_name: MIGRATION_APPLICATION_NAME, ...connectionSettings(url), max: 1 })
  // Its connection ended by the server while idle: the next migration attempt makes another.
  pool.on('error', () => {})
  pool.on('connect', client => {
    // Ended in use, between two statements of the migrations' transaction: without a listener that would
    // end the process; the next statement fails with the connection's error instead.
    client.on('error', () => {})
    // The store closed while its migrations wait for another instance's: the wait ends with the connection.
    const end = (): void => { client.end().catch(() => {}) }
    closing.addEventListener('abort', end, { once: true })
    client.once('end', () => { closing.removeEventListener('abort', end) })
  })
  return pool
}
