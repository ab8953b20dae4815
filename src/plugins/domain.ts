import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { createDomain, type Domain } from '../domain/index.js'
import { telemetryOf } from './metrics.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The domain's services (src/domain), one set per app: every REST route and GraphQL field calls them. */
    domain: Domain
  }
}

/**
 * The domain over the app's adapters (`store`, `quotes`, `aggregator`, `itemStatus`), decorated
 * once at the root. A module registered in a host that did not register this plugin registers
 * it within its own scope ({@link ensureDomain}), so a host may mount one module alone.
 */
async function domain (app: FastifyInstance): Promise<void> {
  const telemetry = telemetryOf(app)
  app.decorate('domain', createDomain({
    get store () { return app.store },
    get quotes () { return app.quotes },
    get aggregator () { return app.aggregator },
    get itemStatus () { return app.itemStatus },
    telemetry
  }))
}

const domainPlugin = fp(domain, { name: 'bff-domain', fastify: '5.x' })
export default domainPlugin

/** Makes sure `app.domain` exists: the app's own, else one for the calling module's scope. */
export async function ensureDomain (app: FastifyInstance): Promise<void> {
  if (!app.hasDecorator('domain')) await app.register(domainPlugin)
}
