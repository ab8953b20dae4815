import { reusableModule } from '../../plugins/reusable-module.js'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errorSchemas } from '../../plugins/error-responses.js'
import { documentRoutes } from '../../plugins/openapi.js'
import { DrainingError, isStoreUnavailable, storeUnavailable } from '../../errors.js'
import type { FastifyBaseLogger } from 'fastify'
import { ProviderConfigSchema } from '../../schemas/auth.js'
import { ensureDomain } from '../../plugins/domain.js'
import { operationRoutes } from '../../plugins/operation-routes.js'
import { systemOperations } from '../../operations/system.js'
import { ReadySchema, ResetSchema } from './schemas.js'
import { MemoryCache } from '../../cache/memory-cache.js'
import { telemetryOf } from '../../plugins/metrics.js'
import type { Static } from '@sinclair/typebox'

export interface SystemModuleOptions {
  /** Registers `POST /reset` (development only: docs/api.md#development-only-routes). */
  devRoutes: boolean
  /** The backend path `/ready` probes (BACKEND_HEALTH_PATH). */
  backendHealthPath: string
}

/** Balancers ask often; upstreams are probed at most this often per instance. */
const UPSTREAM_PROBE_TTL_MS = 10_000

/** Utility routes: provider hashes, readiness, statistics (src/operations/system.ts), the development reset. */
const systemModule: FastifyPluginAsyncTypebox<SystemModuleOptions> = async (app, options) => {
  app.addHook('onRoute', documentRoutes('system', null))
  await ensureDomain(app)
  app.get('/provider-config', {
    schema: {
      operationId: 'getProviderConfig',
      summary: 'Provider hashes that tell users from clients',
      description: 'The provider hashes (sha1 of the Laravel model class names) that tell a user token from a ' +
        'client token in the prv claim, and the model names they come from. Open: they hold no secret ' +
        '(docs/api.md#tokens).',
      response: { 200: ProviderConfigSchema }
    }
  }, async () => app.providerConfig)

  // The upstreams' reachability, a use of the one mechanism (src/cache/memory-cache.ts): one probe of both
  // however many balancers ask at once, kept UPSTREAM_PROBE_TTL_MS from when it began.
  const probes = new MemoryCache<Static<typeof ReadySchema>['upstreams']>({
    name: 'upstream_probe', maxEntries: 1, ttlMs: UPSTREAM_PROBE_TTL_MS, telemetry: telemetryOf(app)
  })
  const probeUpstreams = async (log: FastifyBaseLogger) => await probes.get('upstreams', async () => {
    const [backend, aggregator] = await Promise.all([
      app.backendClient.probe(options.backendHealthPath, log),
      app.aggregator.client.probe('', log)
    ])
    return {
      backend: { reachable: backend.reachable, responseTime: `${Math.round(backend.durationMs)}ms` },
      aggregator: {
        reachable: aggregator.reachable,
        responseTime: `${Math.round(aggregator.durationMs)}ms`,
        configured: app.aggregator.configured
      }
    }
  })

  app.get('/ready', {
    schema: {
      operationId: 'getReadiness',
      summary: 'Readiness for a load balancer: 503 while draining or without the store',
      description: 'Readiness for a load balancer: 200 while the store answers (the upstreams are reported, probed ' +
        'at most every 10 s, never fatal); 503 while the instance drains before shutting down, without ' +
        'its store, or shedding load. Open; logged at debug (docs/deploy.md#behind-the-load-balancer).',
      security: [],
      response: { 200: ReadySchema, ...errorSchemas(503) }
    },
    config: { probe: true }
  }, async request => {
    if (app.lifecycle.draining) throw new DrainingError()
    // The store logs its own outage once (docs/deploy.md#failure-modes): a balancer's every check is not a line.
    try {
      await app.store.ping()
    } catch (error) {
      throw isStoreUnavailable(error) ? error : storeUnavailable(error)
    }
    return {
      status: 'ready' as const,
      store: 'ok' as const,
      upstreams: await probeUpstreams(request.log),
      timestamp: new Date().toISOString()
    }
  })

  operationRoutes(app, systemOperations)

  if (!options.devRoutes) return

  app.post('/reset', {
    schema: {
      operationId: 'resetDemoData',
      summary: 'Reload the demo portfolios (development only)',
      description: 'Replaces the store\'s data with the demo portfolios. Development and test only ' +
        '(docs/api.md#development-only-routes).',
      security: [{ apiKey: [] }],
      response: { 200: ResetSchema, ...errorSchemas(401) }
    },
    onRequest: [app.verifyApiKey]
  }, async () => {
    await app.store.demo.reset()
    // The demo data's positions as the corporate events of its symbols leave them (a provider failure is logged:
    // the next run of the refresh applies them).
    await app.domain.eventsRefresh.refreshNow().catch(() => {})
    return { message: 'Dados resetados com sucesso' }
  })
}

export default reusableModule(systemModule, {
  name: 'bff-system',
  fastify: '5.x',
  dependencies: ['bff-auth', 'bff-store', 'bff-upstreams', 'bff-lifecycle'],
  decorators: { fastify: ['providerConfig', 'verifyApiKey', 'store', 'backendClient', 'aggregator', 'lifecycle'] }
})
