import type { ServerOptions } from 'node:http'

/** Fastify's timeout options and the Node server options behind them (buildApp passes `http` through). */
export interface HttpTimeoutOptions {
  keepAliveTimeout: number
  requestTimeout: number
  connectionTimeout: number
  http: ServerOptions
}

/** How often Node looks for requests past their deadline, at most. */
const MAX_CHECKING_INTERVAL_MS = 1000

/**
 * Timeouts for a service behind a load balancer:
 * - keep idle connections 72 s, longer than common balancer idle timeouts (60 s), so the balancer
 *   never reuses a connection the service is closing;
 * - 60 s of silence on a connection closes it (`connectionTimeout`, socket inactivity);
 * - a request must have arrived whole, headers and body, within `requestTimeoutMs`, however
 *   steadily it trickles (inactivity never fires for a client sending a byte a second).
 *
 * Node checks the request deadline only every `connectionsCheckingInterval` (30 s by default), and
 * derives `headersTimeout` (60 s) from its own default request timeout when the server is created;
 * Fastify sets `requestTimeout` only afterwards, and Node, finding the headers' timeout longer than
 * the request's, swaps them. A trickled body was so cut after 60 s plus up to 30 s of check
 * interval (78–86 s were measured). Both are given to Node here: the deadline holds to within a
 * second, or a quarter of it when shorter.
 */
export function httpTimeouts (requestTimeoutMs: number): HttpTimeoutOptions {
  return {
    keepAliveTimeout: 72_000,
    requestTimeout: requestTimeoutMs,
    connectionTimeout: 60_000,
    http: {
      requestTimeout: requestTimeoutMs,
      headersTimeout: requestTimeoutMs,
      connectionsCheckingInterval: Math.min(MAX_CHECKING_INTERVAL_MS, Math.ceil(requestTimeoutMs / 4))
    }
  }
}
