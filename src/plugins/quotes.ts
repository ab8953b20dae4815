import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { UpstreamClient } from '../upstream/client.js'
import { BrapiQuotes } from '../quotes/brapi.js'
import { CachedQuotes } from '../quotes/cache.js'
import { OfflineQuotes } from '../quotes/offline.js'
import type { QuoteProvider } from '../quotes/provider.js'
import { telemetryOf } from './metrics.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Price quotes and monthly closes, cached (QUOTES_PROVIDER). */
    quotes: QuoteProvider
  }
}

export type QuotesPluginOptions =
  | { provider: 'offline', quoteTtlSeconds: number }
  | {
    provider: 'brapi'
    quoteTtlSeconds: number
    brapiUrl: string
    brapiToken?: string
    tickersPerRequest: number
    timeoutMs: number
  }

async function quotes (app: FastifyInstance, options: QuotesPluginOptions): Promise<void> {
  const provider = options.provider === 'brapi'
    ? new BrapiQuotes(new UpstreamClient({
      name: 'brapi',
      baseUrl: options.brapiUrl,
      timeoutMs: options.timeoutMs,
      telemetry: telemetryOf(app)
    }), options.brapiToken, options.tickersPerRequest)
    : new OfflineQuotes()
  app.decorate('quotes', new CachedQuotes(provider, options.quoteTtlSeconds * 1000, telemetryOf(app)))
}

/** The quote provider of QUOTES_PROVIDER behind an in-process cache. */
export default fp(quotes, { name: 'bff-quotes', fastify: '5.x' })
