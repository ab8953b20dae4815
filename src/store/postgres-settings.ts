import type { PoolConfig } from 'pg'

/** A new connection that takes longer is given up: the request is answered 503 rather than left hanging. */
const CONNECT_TIMEOUT_MS = 2000

/**
 * pg's connection settings for every connection of the service (the store's pool, the migration
 * connection, the item-status `LISTEN`): a bounded connect, TCP keep-alive so that a dead peer is
 * noticed. Here, apart from the pool, so that using them does not load pg.
 */
export function connectionSettings (url: string): PoolConfig {
  return { connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, keepAlive: true }
}
