import fp from 'fastify-plugin'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance, RouteOptions } from 'fastify'

export const SECURITY_SCHEMES = {
  bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'A token of the Laravel backend API (tymon/jwt-auth, HS256)' },
  apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'One of API_KEYS' },
  webhookSecret: { type: 'apiKey', in: 'header', name: 'x-webhook-secret', description: 'AGGREGATOR_WEBHOOK_SECRET' }
} as const

export type SecurityScheme = keyof typeof SECURITY_SCHEMES

/**
 * An onRoute hook for a module: its tag, and the credential its routes need unless a route
 * says otherwise (`security: []` for an open one). It only fills the OpenAPI document.
 */
export function documentRoutes (tag: string, security: SecurityScheme | null) {
  return (route: RouteOptions): void => {
    const schema = route.schema ?? {}
    route.schema = {
      ...schema,
      tags: schema.tags ?? [tag],
      security: schema.security ?? (security === null ? [] : [{ [security]: [] }])
    }
  }
}

export interface RegisteredRoute {
  method: string
  url: string
}

const registered = new WeakMap<FastifyInstance, RegisteredRoute[]>()

/** Every route registered after the OpenAPI plugin (one entry per method), to check the document is whole. */
export function registeredRoutes (app: FastifyInstance): readonly RegisteredRoute[] {
  return registered.get(app) ?? []
}

export interface OpenApiPluginOptions {
  version: string
  /** Serves Swagger UI at /docs and the document at /docs/json. */
  routePrefix?: string
}

async function openapi (app: FastifyInstance, options: OpenApiPluginOptions): Promise<void> {
  const routes: RegisteredRoute[] = []
  registered.set(app, routes)
  app.addHook('onRoute', route => {
    for (const method of [route.method].flat()) routes.push({ method, url: route.url })
  })
  await app.register(swagger, {
    // A module's root route is `/portfolios/` to Fastify; frontends call `/portfolios`.
    transform: ({ schema, url }) => ({ schema, url: url.length > 1 ? url.replace(/\/$/, '') : url }),
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'BFF Service',
        version: options.version,
        description: 'Backend-for-Frontend between frontends, a Laravel API (tymon/jwt-auth tokens) and Pluggy. Every error has the body {statusCode, message, error, timestamp, path}.'
      },
      components: { securitySchemes: SECURITY_SCHEMES }
    }
  })
  await app.register(swaggerUi, {
    routePrefix: options.routePrefix ?? '/docs',
    // Swagger UI's own strict CSP, less `upgrade-insecure-requests`: over plain HTTP on any host
    // but localhost (a container, a staging box) it would make the browser fetch the page's
    // scripts over HTTPS and leave /docs blank.
    staticCSP: true,
    transformStaticCSP: header => header.replace(/\s*upgrade-insecure-requests;?/, '')
  })
}

/** OpenAPI 3 from the route schemas (@fastify/swagger), Swagger UI at /docs. Register before the routes. */
export default fp(openapi, { name: 'bff-openapi', fastify: '5.x' })
