import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import type { Tracer } from '@opentelemetry/api'
import { UpstreamClient } from '../upstream/client.js'
import { RelayClient } from '../upstream/relay.js'
import { AggregatorApi, type AggregatorCredentials } from '../upstream/aggregator.js'
import { localBudget, redisBudget, type SharedBudget } from '../budget.js'
import { telemetryOf } from './metrics.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The Laravel backend API (`BACKEND_URL`), for the service's own calls (got). */
    backendClient: UpstreamClient
    /** The same upstream for the pass-through relays (undici). */
    backendRelay: RelayClient
    /** The aggregator (Pluggy) behind its cached API key. */
    aggregator: AggregatorApi
  }
}

export interface UpstreamsPluginOptions {
  backend: { baseUrl: string, timeoutMs: number }
  aggregator: {
    baseUrl: string
    timeoutMs: number
    credentials?: AggregatorCredentials
    /** Requests per minute to the aggregator (CONTRACT §1 `AGGREGATOR_REQUESTS_PER_MINUTE`); unlimited when absent. */
    requestsPerMinute?: number
    /** Shares that budget among every instance (`RATE_LIMIT_REDIS_URL`). */
    redisUrl?: string
  }
  /** With span export on: a CLIENT span per relay call (got's calls get theirs from the HTTP instrumentation). */
  tracer?: Tracer
}

async function aggregatorBudget (app: FastifyInstance, { requestsPerMinute, redisUrl }: UpstreamsPluginOptions['aggregator']): Promise<SharedBudget | undefined> {
  if (requestsPerMinute === undefined) return undefined
  if (redisUrl === undefined) return localBudget(requestsPerMinute)
  const { Redis } = await import('ioredis')
  const redis = new Redis(redisUrl, { connectTimeout: 500, maxRetriesPerRequest: 1 })
  app.addHook('onClose', async () => { await redis.quit() })
  return redisBudget(redis, 'aggregator', requestsPerMinute)
}

async function upstreams (app: FastifyInstance, options: UpstreamsPluginOptions): Promise<void> {
  const telemetry = telemetryOf(app)
  const { tracer } = options
  const backend = { name: 'backend' as const, ...options.backend, telemetry }
  const aggregator = { name: 'aggregator' as const, baseUrl: options.aggregator.baseUrl, timeoutMs: options.aggregator.timeoutMs, telemetry }
  const backendRelay = new RelayClient({ ...backend, tracer })
  const aggregatorRelay = new RelayClient({ ...aggregator, tracer })
  app.addHook('onClose', async () => { await Promise.all([backendRelay.close(), aggregatorRelay.close()]) })
  app.decorate('backendClient', new UpstreamClient(backend))
  app.decorate('backendRelay', backendRelay)
  app.decorate('aggregator', new AggregatorApi({
    client: new UpstreamClient(aggregator),
    relayClient: aggregatorRelay,
    credentials: options.aggregator.credentials,
    budget: await aggregatorBudget(app, options.aggregator),
    telemetry
  }))
}

/**
 * Clients for the backend API and the aggregator (CONTRACT §4 maps their failures): got for the
 * service's own calls, undici pools for the pass-through relays (closed with the app).
 */
export default fp(upstreams, { name: 'bff-upstreams', fastify: '5.x' })
