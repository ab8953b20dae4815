import type { Server } from 'node:http'
import { http } from '../http/node-http.js'
import type { AddressInfo } from 'node:net'
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { NO_TELEMETRY, PrometheusTelemetry, type Telemetry } from '../observability/telemetry.js'
import { DependencyHealth, type DependencyName } from '../observability/dependencies.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * An answer that lasts (an event stream): once it started, its length is the client's, not
     * the service's, so it is left out of `http_request_duration_seconds` (its refusals are in
     * it; `bff_valuation_streams` counts the open ones).
     */
    longLived?: boolean
  }
  interface FastifyInstance {
    /** Where the service reports about itself; {@link NO_TELEMETRY} when metrics are off. */
    telemetry: Telemetry
    /** `http://host:port` of the metrics listener once ready, when one is open. */
    metricsAddress: () => string | undefined
  }
}

export interface MetricsPluginOptions {
  /** The port of the second listener serving `GET /metrics` (docs/deploy.md#metrics); metrics are off without one. */
  port?: number
  /** Its address; 127.0.0.1 by default, so the public port never exposes the metrics. */
  host?: string
}

/** The telemetry a plugin should report to: the app's, or nothing when the app has none (a host app). */
export function telemetryOf (app: FastifyInstance): Telemetry {
  return app.hasDecorator('telemetry') ? app.telemetry : NO_TELEMETRY
}

/** How a plugin's long-lived client reports its dependency: to the app's log and `bff_dependency_up`. */
export function dependencyHealth (app: FastifyInstance, name: DependencyName): DependencyHealth {
  return new DependencyHealth(name, app.log, telemetryOf(app))
}

async function metrics (app: FastifyInstance, options: MetricsPluginOptions): Promise<void> {
  if (options.port === undefined) {
    app.decorate('telemetry', NO_TELEMETRY)
    app.decorate('metricsAddress', () => undefined)
    return
  }
  const telemetry = new PrometheusTelemetry()
  app.decorate('telemetry', telemetry)
  // The route pattern, never the URL: ids would make a series per portfolio. A module's root
  // is `/portfolios/` to Fastify; it is `/portfolios` to everyone else (as in the OpenAPI document).
  const roots = new Map<string, string>()
  app.addHook('onResponse', (request, reply, done) => {
    // Fastify builds `routeOptions` afresh at each read: once here.
    const { config, url: pattern } = request.routeOptions
    if (config.longLived === true && reply.statusCode === 200) {
      done()
      return
    }
    let route = pattern ?? 'unmatched'
    if (route.length > 1 && route.endsWith('/')) {
      let root = roots.get(route)
      if (root === undefined) roots.set(route, root = route.slice(0, -1))
      route = root
    }
    telemetry.request(request.method, route, reply.statusCode, reply.elapsedTime / 1000)
    done()
  })

  let server: Server | undefined
  app.decorate('metricsAddress', () => {
    const address = server?.address() as AddressInfo | null | undefined
    return address == null
      ? undefined
      : `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`
  })
  app.addHook('onReady', async () => {
    server = http.createServer((request, response) => {
      if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
        response.writeHead(404, { 'content-type': 'text/plain' }).end('Not found\n')
        return
      }
      telemetry.registry.metrics().then(text => {
        response.writeHead(200, { 'content-type': telemetry.registry.contentType }).end(text)
      }, (error: unknown) => {
        app.log.error({ err: error }, 'metrics could not be collected')
        response.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable\n')
      })
    })
    const listening = server
    await new Promise<void>((resolve, reject) => {
      listening.once('error', reject)
      listening.listen(options.port, options.host ?? '127.0.0.1', () => { resolve() })
    })
    app.log.info({ address: app.metricsAddress() }, 'metrics listening')
  })
  app.addHook('onClose', async () => {
    const listening = server
    if (listening !== undefined) await new Promise<void>(resolve => { listening.close(() => { resolve() }) })
  })
}

/** Prometheus metrics (docs/deploy.md#metrics) on their own listener. Register first: other plugins report to it. */
export default fp(metrics, { name: 'bff-metrics', fastify: '5.x' })
