import fp from 'fastify-plugin'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify'
import { documentedResponseSchema, ErrorBodySchema, errorSchemas } from './error-responses.js'
import { finishOperations, isObject, withIntegerFormats, type OpenApiDocument } from './openapi-document.js'
import { addResponses } from './route-schema.js'
import type { PortfolioAccess } from '../schemas/auth.js'

export const SECURITY_SCHEMES = {
  bearerAuth: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'A token of the Laravel backend API (tymon/jwt-auth, HS256), verified as RFC8725 (JSON Web ' +
      'Token Best Current Practices) asks: only the configured algorithm (JWT_ALGORITHM), never `none` or a key ' +
      'the token names; exp, nbf and iat checked, iss, sub, jti and prv required (docs/api.md#tokens)'
  },
  apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'One of API_KEYS' },
  webhookSecret: { type: 'apiKey', in: 'header', name: 'x-webhook-secret', description: 'AGGREGATOR_WEBHOOK_SECRET' }
} as const

export type SecurityScheme = keyof typeof SECURITY_SCHEMES

/** A route's OpenAPI `security`: one scheme, or several (any one of them); `null` for an open route. */
export function securityRequirements (security: SecurityScheme | readonly SecurityScheme[] | null) {
  return security === null ? [] : [security].flat().map(scheme => ({ [scheme]: [] }))
}

/**
 * An onRoute hook for a module: its tag, and the credential its routes need unless a route
 * says otherwise (`security: []` for an open one; several schemes: any one of them). It only
 * fills the OpenAPI document. A module of declared operations names no credential: each route
 * documents its own (src/plugins/operation-routes.ts).
 */
export function documentRoutes (tag: string, security?: SecurityScheme | readonly SecurityScheme[] | null) {
  const requirements = security === undefined ? undefined : securityRequirements(security)
  return (route: RouteOptions): void => {
    const schema = route.schema ?? {}
    route.schema = { ...schema, tags: schema.tags ?? [tag], security: schema.security ?? requirements }
  }
}

/** The credentials of the portfolio routes under each PORTFOLIO_ACCESS; under `both` either one. */
export const PORTFOLIO_SCHEMES: Record<PortfolioAccess, readonly SecurityScheme[]> = {
  'api-key': ['apiKey'],
  user: ['bearerAuth'],
  both: ['apiKey', 'bearerAuth']
}

/**
 * {@link documentRoutes} for a portfolio module (docs/api.md#whose-portfolios): the credential
 * `access` names and, where a user token is taken, its 403 (a client's token, another user's `userId`).
 */
export function documentPortfolioRoutes (tag: string, access: PortfolioAccess) {
  const document = documentRoutes(tag, PORTFOLIO_SCHEMES[access])
  return (route: RouteOptions): void => {
    document(route)
    if (access !== 'api-key') addResponses(route, errorSchemas(403))
  }
}

/** @internal Test seam: what registeredRoutes answers. */
export interface RegisteredRoute {
  method: string
  url: string
}

const registered = new WeakMap<FastifyInstance, RegisteredRoute[]>()

/**
 * Every route registered after the OpenAPI plugin (one entry per method), to check the document is whole.
 * @internal Test seam: a test checks the document lists every route.
 */
export function registeredRoutes (app: FastifyInstance): readonly RegisteredRoute[] {
  return registered.get(app) ?? []
}

/** What any route can answer whatever it does: a bad query or body, the body limits, the rate limit, load shedding. */
const ANY_ROUTE_ERRORS = [400, 413, 415, 429, 500, 503] as const

/**
 * A route's schema as documented: the strict error body, and the errors any route can answer
 * (but 503 on a route that is never shed: the liveness check).
 */
function documentedSchema (schema: FastifySchema & { hide?: boolean }, shed: boolean): FastifySchema {
  if (schema.hide === true) return schema
  const own = Object.entries(schema.response ?? {}).map(([status, response]) => [
    status,
    documentedResponseSchema(status, response)
  ])
  return {
    ...schema,
    response: {
      ...Object.fromEntries(
        ANY_ROUTE_ERRORS.filter(status => shed || status !== 503).map(status => [status, ErrorBodySchema])
      ),
      ...Object.fromEntries(own)
    }
  }
}

/**
 * A route as documented: `/portfolios/` (a module's root to Fastify) as `/portfolios`, the wildcard
 * of `/backend-api/proxy/*` as a parameter named `path` (OpenAPI names must be words).
 */
export function documentedRoute (
  schema: FastifySchema, url: string, shed: boolean
): { schema: FastifySchema, url: string } {
  const documented = documentedSchema(schema, shed)
  if (url.endsWith('*') && isObject(documented.params) && isObject(documented.params.properties)) {
    const { '*': wildcard, ...properties } = documented.params.properties
    const params = {
      ...documented.params,
      properties: {
        ...properties,
        path: { ...(wildcard as JsonObject), description: 'The path on the upstream; it may hold `/`' }
      },
      required: ['path']
    }
    return { schema: { ...documented, params }, url: url.replace(/\*$/, ':path') }
  }
  return { schema: documented, url: url.length > 1 ? url.replace(/\/$/, '') : url }
}

type JsonObject = Record<string, unknown>

/**
 * A PATCH body's "at least one of these properties" (AtLeastOneOf), validated as an `anyOf` of
 * one-property `required` branches, is documented as `minProperties: 1` with the names in its
 * description: the same rule for a reader, and an object of optional properties that client
 * generators can type (they give up on such an `anyOf` and type the body as `unknown`).
 */
function atLeastOneAsMinProperties (node: JsonObject): JsonObject {
  const { anyOf, ...rest } = node
  const names = Array.isArray(anyOf) && anyOf.length > 0 && isObject(node.properties)
    ? anyOf.map(branch => isObject(branch) && Object.keys(branch).length === 1 && Array.isArray(branch.required) &&
      branch.required.length === 1
      ? branch.required[0]
      : undefined)
    : []
  if (names.length === 0 || names.some(name => typeof name !== 'string')) return node
  const rule = `At least one of ${names.join(', ')} must be provided.`
  const description = typeof node.description === 'string' ? `${node.description} ${rule}` : rule
  return { ...rest, minProperties: 1, description }
}

/**
 * Every schema with a `title` becomes a named component referenced with `$ref`, so that client
 * generators give it a type of its own (docs/api.md#the-openapi-document). Titles are unique: a second, different
 * schema under a name already taken stops the document.
 */
function hoistNamedSchemas (node: unknown, components: JsonObject): unknown {
  if (Array.isArray(node)) return node.map(item => hoistNamedSchemas(item, components))
  if (!isObject(node)) return node
  const hoisted = Object.fromEntries(
    Object.entries(atLeastOneAsMinProperties(node)).map(([key, value]) => [key, hoistNamedSchemas(value, components)])
  )
  const name = node.title
  if (typeof name !== 'string') return hoisted
  const known = components[name]
  if (known !== undefined && JSON.stringify(known) !== JSON.stringify(hoisted)) {
    throw new Error(`Two different schemas are named ${name}`)
  }
  components[name] = hoisted
  return { $ref: `#/components/schemas/${name}` }
}

type WithSchema = Record<string, { schema?: unknown }>

const RELAYED_BODY = { $ref: '#/components/schemas/RelayedBody' }

/** A response whose body is ErrorBody or the upstream's (see relayedErrorSchemas). */
function relaysUpstream (response: { content?: WithSchema }): boolean {
  return Object.values(response.content ?? {}).some(({ schema }) => isObject(schema) && Array.isArray(schema.anyOf) &&
    schema.anyOf.some(branch => JSON.stringify(branch) === JSON.stringify(RELAYED_BODY)))
}

/** Hoists the schemas of media types or parameters, never their examples (which may hold a `title`). */
function hoistSchemasOf (holders: Iterable<{ schema?: unknown }>, components: JsonObject): void {
  for (const holder of holders) {
    if (holder.schema !== undefined) holder.schema = hoistNamedSchemas(holder.schema, components)
  }
}

/** Named components, then what every operation has whatever its route says (openapi-document.ts). */
function finishDocument (document: OpenApiDocument): OpenApiDocument {
  const components: JsonObject = {}
  for (const operation of Object.values(document.paths ?? {}).flatMap(path => Object.values(path))) {
    hoistSchemasOf(Object.values(operation.requestBody?.content ?? {}), components)
    hoistSchemasOf(operation.parameters ?? [], components)
    for (const response of Object.values(operation.responses ?? {})) {
      hoistSchemasOf(Object.values(response.content ?? {}), components)
    }
  }
  const schemas = isObject(document.components?.schemas) ? document.components.schemas : {}
  document.components = { ...document.components, schemas: { ...schemas, ...components } }
  finishOperations(document, relaysUpstream)
  return withIntegerFormats(document) as OpenApiDocument
}

interface OpenApiPluginOptions {
  version: string
  /** Where this instance runs (NODE_ENV), told in the document's `servers`. Default `production`. */
  environment?: string
  /** Serves Swagger UI at /docs and the document at /docs/json. */
  routePrefix?: string
}

/** `servers`' description names the environment in words inventory tools read (OWASP API9). */
function serverDescription (environment = 'production'): string {
  const named = environment === 'development' ? 'local development' : environment
  return `The service that serves this document: this instance, running in ${named}`
}

async function openapi (app: FastifyInstance, options: OpenApiPluginOptions): Promise<void> {
  const routes: RegisteredRoute[] = []
  registered.set(app, routes)
  app.addHook('onRoute', route => {
    for (const method of [route.method].flat()) routes.push({ method, url: route.url })
  })
  // Relative: the document is served by the service it describes, wherever that is. Its audience
  // is public: frontends call it (x-internal, OWASP API9).
  const server = { url: '/', description: serverDescription(options.environment), 'x-internal': false }
  await app.register(swagger, {
    // A module's root route is `/portfolios/` to Fastify; frontends call `/portfolios`.
    transform: ({ schema, url, route }) => documentedRoute(schema, url, route.config?.shed !== false),
    // Only OpenAPI is produced here, never Swagger 2.
    transformObject: document => {
      const produced = 'openapiObject' in document ? document.openapiObject : document.swaggerObject
      return finishDocument(produced as OpenApiDocument) as typeof produced
    },
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'BFF Service',
        version: options.version,
        description: 'Backend-for-Frontend between frontends, a Laravel API (tymon/jwt-auth tokens) and Pluggy. ' +
          'Every error has the body ErrorBody; programs branch on its `code`.'
      },
      servers: [server],
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

/** The plugin's name: an app that has it documents every route itself (see openapi-host.ts). */
export const OPENAPI_PLUGIN = 'bff-openapi'

/** OpenAPI 3 from the route schemas (@fastify/swagger), Swagger UI at /docs. Register before the routes. */
export default fp(openapi, { name: OPENAPI_PLUGIN, fastify: '5.x' })
