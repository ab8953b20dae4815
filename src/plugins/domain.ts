import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import {
  BACKGROUND_DEFAULTS, createDomain, type BackgroundOptions, type Domain, type LiveValuationOptions,
  type ReadCacheOptions
} from '../domain/index.js'
import { READ_CACHE_DEFAULTS } from '../domain/portfolio-read-cache.js'
import { LIVE_VALUATION_DEFAULTS } from '../domain/live-valuations.js'
import { PERFORMANCE_CACHE_DEFAULTS } from '../domain/performance-cache.js'
import { telemetryOf } from './metrics.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The domain's services (src/domain), one set per app: every REST route and GraphQL field calls them. */
    domain: Domain
  }
}

export interface DomainPluginOptions {
  /** The live valuations' settings: VALUATION_MIN_INTERVAL_MS, VALUATION_STREAMS_PER_CREDENTIAL, QUOTES_TTL. */
  liveValuations?: LiveValuationOptions
  /** The read cache's bounds, each defaulted; `PORTFOLIO_CACHE_TTL_MS` its time to live (0 turns it off). */
  readCache?: Partial<ReadCacheOptions>
  /** The queue of background work (JOB_*, AGGREGATOR_VERIFY_*, IMPORT_*: docs/deploy.md#background-work). */
  background?: BackgroundOptions
}

/**
 * The domain over the app's adapters (`store`, `quotes`, `aggregator`, `changeFeed`), decorated
 * once at the root. A module registered in a host that did not register this plugin registers
 * it within its own scope ({@link ensureDomain}), so a host may mount one module alone. Once the app is ready,
 * the corporate events' refresh starts (docs/api.md#corporate-events). When the app closes, its live valuation
 * streams end (before the listener closes: docs/deploy.md#shutdown), and the refresh stops.
 */
async function domain (app: FastifyInstance, options: DomainPluginOptions): Promise<void> {
  const telemetry = telemetryOf(app)
  const services = createDomain({
    get store () { return app.store },
    get quotes () { return app.quotes },
    get aggregator () { return app.aggregator },
    get changeFeed () { return app.changeFeed },
    telemetry,
    log: app.log
  }, options.liveValuations ?? LIVE_VALUATION_DEFAULTS, { ...READ_CACHE_DEFAULTS, ...options.readCache },
  PERFORMANCE_CACHE_DEFAULTS, options.background ?? BACKGROUND_DEFAULTS)
  app.decorate('domain', services)
  telemetry.watchStreams(() => services.liveValuations.streams)
  // With quotes, the stored positions follow their symbols' corporate events from the start on.
  app.addHook('onReady', async () => { if (app.hasDecorator('quotes')) services.eventsRefresh.start() })
  app.addHook('preClose', async () => { services.close() })
}

const domainPlugin = fp(domain, { name: 'bff-domain', fastify: '5.x' })
export default domainPlugin

/** The domains whose queue some module runs already: each runs once, whichever modules need it. */
const running = new WeakSet<Domain>()

/**
 * Runs the queue's jobs (src/domain/jobs.ts) on this instance from the moment the app is ready, when the aggregator
 * they call has credentials, until the app closes (its runs given back to the queue): for the modules whose work is
 * queued (the aggregator's webhook verifications, the portfolios' imports).
 */
export function runJobs (app: FastifyInstance): void {
  const { domain } = app
  if (running.has(domain)) return
  running.add(domain)
  app.addHook('onReady', async () => { if (app.aggregator.configured) domain.jobs.start() })
  app.addHook('onClose', async () => { await domain.jobs.close() })
}

/** Makes sure `app.domain` exists: the app's own, else one for the calling module's scope. */
export async function ensureDomain (app: FastifyInstance): Promise<void> {
  if (!app.hasDecorator('domain')) await app.register(domainPlugin)
}
