import { getHeapStatistics } from 'node:v8'
import fp from 'fastify-plugin'
import helmet from '@fastify/helmet'
import cors from '@fastify/cors'
import rateLimit from '@fastify/rate-limit'
import underPressure from '@fastify/under-pressure'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { OverloadedError, RateLimitedError } from '../errors.js'

export interface ProtectionPluginOptions {
  /** Origins allowed by CORS; empty: no cross-origin access. */
  corsOrigins: readonly string[]
  /** Requests per principal (or per IP when anonymous) per window. */
  rateLimitMax: number
  rateLimitWindowMs: number
  /** Event-loop delay (ms) above which requests get 503. */
  maxEventLoopDelayMs: number
}

/**
 * The rate limit counts per verified principal (`user:42`), else per client IP. It runs as a
 * preHandler, after the guards, so a forged token cannot pick its bucket.
 */
function rateLimitKey (request: FastifyRequest): string {
  const principal = request.principal
  return principal === null ? `ip:${request.ip}` : `${principal.type}:${principal.id}`
}

async function protection (app: FastifyInstance, options: ProtectionPluginOptions): Promise<void> {
  // An API of JSON: the default policies, with a CSP that lets the bundled Swagger UI render.
  await app.register(helmet, {
    contentSecurityPolicy: {
      directives: { 'default-src': ["'self'"], 'img-src': ["'self'", 'data:', 'https://icons.brapi.dev'], 'style-src': ["'self'", "'unsafe-inline'"], 'script-src': ["'self'"] }
    }
  })
  await app.register(cors, { origin: options.corsOrigins.length === 0 ? false : [...options.corsOrigins], credentials: false })
  await app.register(rateLimit, {
    global: true,
    hook: 'preHandler',
    max: options.rateLimitMax,
    timeWindow: options.rateLimitWindowMs,
    keyGenerator: rateLimitKey,
    errorResponseBuilder: (_request, context) => new RateLimitedError(context.after)
  })
  await app.register(underPressure, {
    maxEventLoopDelay: options.maxEventLoopDelayMs,
    // Refuse new work before V8 runs out of heap.
    maxHeapUsedBytes: Math.floor(getHeapStatistics().heap_size_limit * 0.9),
    retryAfter: 5,
    customError: OverloadedError
  })
}

/** helmet, CORS, rate limit and load shedding (issue 6; OWASP API4, API8). */
export default fp(protection, { name: 'bff-protection', fastify: '5.x', dependencies: ['bff-auth'] })
