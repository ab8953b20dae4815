import { isDeepStrictEqual } from 'node:util'
import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify'
import { documentedRoute, OPENAPI_PLUGIN, SECURITY_SCHEMES, type SecurityScheme } from './openapi.js'

/**
 * The modules' routes in a host app's own OpenAPI document: a host with @fastify/swagger gets them
 * documented as the service documents them, with the security schemes they name.
 */

type SchemeObject = Record<string, unknown>

/** Swagger 2 has no `http` schemes: a bearer token is an API key in the Authorization header there. */
const SWAGGER_2_SCHEMES: Record<SecurityScheme, SchemeObject> = {
  ...SECURITY_SCHEMES,
  bearerAuth: {
    type: 'apiKey',
    in: 'header',
    name: 'Authorization',
    description: `Bearer <token>: ${SECURITY_SCHEMES.bearerAuth.description}`
  }
}

/**
 * The document's schemes with those `schema` names added: a host's own scheme of the same name
 * stays when it is the same; a different one would document the module's routes wrong, so the
 * document stops, naming it.
 */
function withSchemes (
  own: SchemeObject | undefined, ours: Record<SecurityScheme, SchemeObject>, schema: FastifySchema
): SchemeObject {
  const named = [schema.security ?? []].flat().flatMap(requirement => Object.keys(requirement)) as SecurityScheme[]
  const added: SchemeObject = { ...own }
  for (const name of named) {
    if (own?.[name] !== undefined && !isDeepStrictEqual(own[name], ours[name])) {
      throw new Error(`The app's OpenAPI security scheme ${name} differs from the one the bff-service plugins ` +
        `need (${JSON.stringify(ours[name])}): declare theirs (the exported securitySchemes) or rename yours`)
    }
    added[name] = ours[name]
  }
  return added
}

interface HostDocument { components?: { securitySchemes?: SchemeObject }, securityDefinitions?: SchemeObject }

/**
 * A module's route in a host's @fastify/swagger document (the route option `swaggerTransform`,
 * which @fastify/swagger applies instead of the host's `transform`): documented as the service
 * documents it, and the security schemes it names added to the document, never to the host's options.
 */
function documentInHost ({ schema, url, route, openapiObject, swaggerObject }: {
  schema: FastifySchema
  url: string
  route: RouteOptions
  openapiObject?: HostDocument
  swaggerObject?: HostDocument
}): { schema: FastifySchema, url: string } {
  if (swaggerObject !== undefined) {
    swaggerObject.securityDefinitions = withSchemes(swaggerObject.securityDefinitions, SWAGGER_2_SCHEMES, schema)
    return { schema, url }
  }
  const components = openapiObject?.components
  if (components !== undefined) {
    components.securitySchemes = withSchemes(components.securitySchemes, SECURITY_SCHEMES, schema)
  }
  return documentedRoute(schema, url, route.config?.shed !== false)
}

/**
 * Documents a module's routes in the app's own @fastify/swagger document, unless the app has the
 * service's OpenAPI plugin, which documents every route itself.
 */
export function ensureOpenApiEntries (app: FastifyInstance): void {
  if (app.hasPlugin(OPENAPI_PLUGIN)) return
  app.addHook('onRoute', route => { route.config = { ...route.config, swaggerTransform: documentInHost } })
}
