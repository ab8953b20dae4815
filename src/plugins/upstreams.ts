import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { UpstreamClient } from '../upstream/client.js'
import { AggregatorApi, type AggregatorCredentials } from '../upstream/aggregator.js'
import { localBudget, redisBudget, type SharedBudget } from '../budget.js'
import { telemetryOf } from './metrics.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The Laravel backend API (`BACKEND_URL`). */
    backendClient: UpstreamClient
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
  app.decorate('backendClient', new UpstreamClient({ name: 'backend', ...options.backend, telemetry }))
  const aggregatorClient = new UpstreamClient({ name: 'aggregator', baseUrl: options.aggregator.baseUrl, timeoutMs: options.aggregator.timeoutMs, telemetry })
  app.decorate('aggregator', new AggregatorApi(aggregatorClient, options.aggregator.credentials, await aggregatorBudget(app, options.aggregator), telemetry))
}

/** got clients for the backend API and the aggregator (CONTRACT §4 maps their failures). */
export default fp(upstreams, { name: 'bff-upstreams', fastify: '5.x' })
