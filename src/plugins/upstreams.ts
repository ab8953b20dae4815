import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { UpstreamClient } from '../upstream/client.js'
import { AggregatorApi, type AggregatorCredentials } from '../upstream/aggregator.js'

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
  aggregator: { baseUrl: string, timeoutMs: number, credentials?: AggregatorCredentials }
}

async function upstreams (app: FastifyInstance, options: UpstreamsPluginOptions): Promise<void> {
  app.decorate('backendClient', new UpstreamClient({ name: 'backend', ...options.backend }))
  const aggregatorClient = new UpstreamClient({ name: 'aggregator', baseUrl: options.aggregator.baseUrl, timeoutMs: options.aggregator.timeoutMs })
  app.decorate('aggregator', new AggregatorApi(aggregatorClient, options.aggregator.credentials))
}

/** got clients for the backend API and the aggregator (CONTRACT §4 maps their failures). */
export default fp(upstreams, { name: 'bff-upstreams', fastify: '5.x' })
