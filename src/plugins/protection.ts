import { getHeapStatistics } from 'node:v8'
import fp from 'fastify-plugin'
import cors from '@fastify/cors'
import rateLimit from '@fastify/rate-limit'
import underPressure from '@fastify/under-pressure'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Redis } from 'ioredis'
import { OverloadedError, RateLimitedError, withRetryAfter } from '../errors.js'
import { dependencyHealth, telemetryOf } from './metrics.js'
import { sharedCounterRedis } from '../upstream/redis.js'
import { principalKey } from '../domain/access.js'
import { NO_STORE } from '../http/cache-control.js'

export interface ProtectionPluginOptions {
  /** Origins allowed by CORS; empty: no cross-origin access. */
  corsOrigins: readonly string[]
  /** Requests per principal (or per IP when anonymous) per window. */
  rateLimitMax: number
  rateLimitWindowMs: number
  /** A Redis shared by every instance, so the limit holds across them; in memory per instance when absent. */
  rateLimitRedisUrl?: string
  /** Event-loop delay (ms) above which requests get 503. */
  maxEventLoopDelayMs: number
  /** `Strict-Transport-Security`'s max-age in seconds (HSTS_MAX_AGE); 0 sends none. Default one year. */
  hstsMaxAgeSeconds?: number
}

/**
 * The rate limit counts per verified principal (`user:42`), else per client IP. It runs as a
 * preHandler, after the guards, so a forged token cannot pick its bucket.
 */
function rateLimitKey (request: FastifyRequest): string {
  const principal = request.principal
  return principal === null ? `ip:${request.ip}` : principalKey(principal)
}

/** HSTS for a year unless the operator says otherwise (HSTS_MAX_AGE, docs/deploy.md#security-headers). */
const DEFAULT_HSTS_MAX_AGE_SECONDS = 31_536_000

/**
 * The security headers of a JSON API, as OWASP's REST Security Cheat Sheet lists them, each for a
 * reason that holds for every answer of this service:
 * - `X-Content-Type-Options: nosniff`: a browser takes an answer for what its `Content-Type` says,
 *   never for a script or a page it guessed;
 * - `Content-Security-Policy: frame-ancestors 'none'` and, for browsers older than CSP 2,
 *   `X-Frame-Options: DENY`: no page frames an answer (clickjacking). /docs, the one HTML page,
 *   sets its own CSP (openapi.ts);
 * - `Strict-Transport-Security` (`hstsMaxAgeSeconds`, 0: none): browsers reach this host over
 *   HTTPS only — the balancer in front, where TLS usually ends, passes it on.
 * `Cache-Control` is set beside them (addSecurityHeaders). Helmet's other defaults govern HTML
 * documents and are left out: `Referrer-Policy`, the `Cross-Origin-*` policies,
 * `Origin-Agent-Cluster`, `X-DNS-Prefetch-Control`, `X-Download-Options`,
 * `X-Permitted-Cross-Domain-Policies` and `X-XSS-Protection` act on pages that link, load,
 * open windows or embed — an answer of this API does none of that, and its credentials are
 * headers, never cookies a cross-origin embed could carry. Eleven headers were 3.5 µs a request
 * (BENCHMARKS.md).
 */
function securityHeaders (hstsMaxAgeSeconds = DEFAULT_HSTS_MAX_AGE_SECONDS): Record<string, string> {
  return {
    'x-content-type-options': 'nosniff',
    'content-security-policy': "frame-ancestors 'none'",
    'x-frame-options': 'DENY',
    ...(hstsMaxAgeSeconds > 0 ? { 'strict-transport-security': `max-age=${hstsMaxAgeSeconds}; includeSubDomains` } : {})
  }
}

/**
 * Layer 1: the security headers and the default `Cache-Control: no-store` (docs/api.md#caching) on
 * every answer, prepared once, set by a callback hook (no promise, no tick). A route that lets a
 * cache keep its answer says so itself.
 */
export function addSecurityHeaders (app: FastifyInstance, hstsMaxAgeSeconds?: number): void {
  const headers = { ...securityHeaders(hstsMaxAgeSeconds), 'cache-control': NO_STORE }
  app.addHook('onRequest', (_request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    reply.headers(headers)
    done()
  })
}

/**
 * Layer 2: CORS for the listed origins only (none: no grant; docs/api.md#cors): every method and
 * request header the API uses, the response headers a frontend reads, preflights cached 10
 * minutes, no credentials mode (the API uses headers, not cookies). A request from no listed
 * origin, or with no `Origin` at all (not a browser's cross-origin call), gets no CORS header but
 * `Vary: Origin`: with a list, @fastify/cors would add `Access-Control-Expose-Headers`, 240 bytes
 * no client reads, to every answer.
 */
export async function addCors (app: FastifyInstance, origins: readonly string[]): Promise<void> {
  // No origin listed, no grant to make: the plugin's hook (a copy of its options per request)
  // would only cost, and a preflight meets the not-found handler like any unknown route.
  if (origins.length === 0) return
  const listed = new Set(origins)
  await app.register(cors, {
    origin: (origin: string | undefined, grant: (error: null, allow: boolean) => void) => {
      grant(null, origin !== undefined && listed.has(origin))
    },
    methods: ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'],
    // Idempotency-Key and the conditional-request headers: safe retries and edits (docs/api.md, Safe retries).
    // Last-Event-ID: an EventSource reconnecting to a valuation stream (docs/api.md#valuation).
    allowedHeaders: ['Authorization', 'Content-Type', 'x-api-key', 'x-request-id',
      'Idempotency-Key', 'If-Match', 'If-None-Match', 'Last-Event-ID'],
    exposedHeaders: ['x-request-id', 'Retry-After', 'ETag', 'Idempotent-Replayed',
      'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset',
      'RateLimit', 'RateLimit-Policy', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'],
    maxAge: 600,
    credentials: false
  })
}

/** Layer 3: the rate limit, per principal or IP, in memory or shared through Redis. */
export async function addRateLimit (
  app: FastifyInstance,
  options: Pick<ProtectionPluginOptions, 'rateLimitMax' | 'rateLimitWindowMs' | 'rateLimitRedisUrl'>
): Promise<void> {
  let redis: Redis | undefined
  if (options.rateLimitRedisUrl !== undefined) {
    // Short timeouts, no queue: a slow or absent Redis must not hold requests (the plugin's own advice).
    redis = await sharedCounterRedis(options.rateLimitRedisUrl, dependencyHealth(app, 'rate_limit_redis'))
    const client = redis
    app.addHook('onClose', async () => { client.disconnect() })
  }
  await app.register(rateLimit, {
    global: true,
    ...(redis === undefined ? {} : { redis, nameSpace: 'bff-rate-limit-', skipOnError: true }),
    hook: 'preHandler',
    max: options.rateLimitMax,
    timeWindow: options.rateLimitWindowMs,
    keyGenerator: rateLimitKey,
    onExceeded: () => {
      telemetryOf(app).rateLimited('requests')
    },
    errorResponseBuilder: (_request, context) => new RateLimitedError(context.after)
  })
}

const SHED_RETRY_AFTER_SECONDS = 5

declare module 'fastify' {
  interface FastifyContextConfig {
    /** `false`: never shed — the liveness check, which must not get an instance restarted for being busy. */
    shed?: boolean
  }
}

/**
 * under-pressure reads the event loop's mean delay once a second: the sample after start-up work
 * (module loading, schema compilation, migrations, a host's synchronous set-up) holds those seconds
 * of blocking, which are not load. For two samples after `ready` and again after `listen` a slow
 * loop is not shed, so a fresh instance answers its first requests.
 */
const SETTLING_MS = 2000

/**
 * Layer 4: load shedding (@fastify/under-pressure) — 503 `OVERLOADED` with Retry-After while the
 * event loop lags or the heap nears its limit, on every route but those with `config.shed: false`
 * (`/auth/health`). `/ready` is shed too: an overloaded instance is not ready, and the balancer
 * sends elsewhere.
 */
export async function addShedding (app: FastifyInstance, maxEventLoopDelayMs: number): Promise<void> {
  let settlesAt = Infinity
  const settle = async (): Promise<void> => { settlesAt = Date.now() + SETTLING_MS }
  app.addHook('onReady', settle)
  app.addHook('onListen', settle)
  // Counted, then answered as 503 OVERLOADED with Retry-After; returning lets the request through.
  const pressureHandler = async (request: FastifyRequest, _reply: FastifyReply, type: string): Promise<void> => {
    if (request.routeOptions.config.shed === false) return
    if (type === underPressure.TYPE_EVENT_LOOP_DELAY && Date.now() < settlesAt) return
    telemetryOf(app).shed()
    throw withRetryAfter(new OverloadedError(), SHED_RETRY_AFTER_SECONDS)
  }
  // Refuse new work before V8 runs out of heap.
  const maxHeapUsedBytes = Math.floor(getHeapStatistics().heap_size_limit * 0.9)
  await app.register(underPressure, { maxHeapUsedBytes, maxEventLoopDelay: maxEventLoopDelayMs, pressureHandler })
}

async function protection (app: FastifyInstance, options: ProtectionPluginOptions): Promise<void> {
  addSecurityHeaders(app, options.hstsMaxAgeSeconds)
  await addCors(app, options.corsOrigins)
  await addRateLimit(app, options)
  await addShedding(app, options.maxEventLoopDelayMs)
}

/** Security headers, CORS, rate limit and load shedding (OWASP API4, API8). */
export default fp(protection, { name: 'bff-protection', fastify: '5.x', dependencies: ['bff-auth'] })
