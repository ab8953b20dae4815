import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import type { Tracer } from '@opentelemetry/api'
import { UpstreamClient } from '../upstream/client.js'
import { RelayClient } from '../upstream/relay.js'
import { AggregatorApi, type AggregatorCredentials } from '../upstream/aggregator.js'
import {
  localBudget, localKeyedBudget, redisBudget, redisKeyedBudget, type KeyedBudget, type SharedBudget
} from '../upstream/budget.js'
import { dependencyHealth, telemetryOf } from './metrics.js'
import { sharedCounterRedis } from '../upstream/redis.js'

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
    /** Requests per minute to the aggregator (`AGGREGATOR_REQUESTS_PER_MINUTE`); unlimited when absent. */
    requestsPerMinute?: number
    /**
     * Each principal's share of it (`AGGREGATOR_REQUESTS_PER_PRINCIPAL_PER_MINUTE`), checked
     * first, so one caller cannot spend everyone's; unlimited when absent.
     */
    requestsPerPrincipalPerMinute?: number
    /** Shares both budgets among every instance (`RATE_LIMIT_REDIS_URL`). */
    redisUrl?: string
  }
  /** With span export on: a CLIENT span per relay call (got's calls get theirs from the HTTP instrumentation). */
  tracer?: Tracer
}

interface AggregatorBudgets {
  budget?: SharedBudget
  principalBudget?: KeyedBudget
}

/** The shared budget and the principals' shares: in this instance, or in Redis for every instance (one connection). */
async function aggregatorBudgets (
  app: FastifyInstance, options: UpstreamsPluginOptions['aggregator']
): Promise<AggregatorBudgets> {
  const { requestsPerMinute, requestsPerPrincipalPerMinute: perPrincipal, redisUrl } = options
  if (requestsPerMinute === undefined && perPrincipal === undefined) return {}
  if (redisUrl === undefined) {
    return {
      budget: requestsPerMinute === undefined ? undefined : localBudget(requestsPerMinute),
      principalBudget: perPrincipal === undefined ? undefined : localKeyedBudget(perPrincipal)
    }
  }
  const redis = await sharedCounterRedis(redisUrl, dependencyHealth(app, 'aggregator_budget_redis'))
  app.addHook('onClose', async () => { redis.disconnect() })
  return {
    budget: requestsPerMinute === undefined ? undefined : redisBudget(redis, 'aggregator', requestsPerMinute),
    principalBudget:
      perPrincipal === undefined ? undefined : redisKeyedBudget(redis, 'aggregator-principal', perPrincipal)
  }
}

async function upstreams (app: FastifyInstance, options: UpstreamsPluginOptions): Promise<void> {
  const telemetry = telemetryOf(app)
  const { tracer } = options
  const backend = { name: 'backend' as const, ...options.backend, telemetry }
  const { baseUrl, timeoutMs } = options.aggregator
  const aggregator = { name: 'aggregator' as const, baseUrl, timeoutMs, telemetry }
  const backendRelay = new RelayClient({ ...backend, tracer })
  const aggregatorRelay = new RelayClient({ ...aggregator, tracer })
  app.addHook('onClose', async () => { await Promise.all([backendRelay.close(), aggregatorRelay.close()]) })
  app.decorate('backendClient', new UpstreamClient(backend))
  app.decorate('backendRelay', backendRelay)
  app.decorate('aggregator', new AggregatorApi({
    client: new UpstreamClient(aggregator),
    relayClient: aggregatorRelay,
    credentials: options.aggregator.credentials,
    ...await aggregatorBudgets(app, options.aggregator),
    telemetry
  }))
}

/**
 * Clients for the backend API and the aggregator (docs/api.md#relays maps their failures): got for the
 * service's own calls, undici pools for the pass-through relays (closed with the app).
 */
export default fp(upstreams, { name: 'bff-upstreams', fastify: '5.x' })
