import type {
  FastifyInstance, FastifyReply, FastifyRequest, FastifySchema, onRequestAsyncHookHandler, RouteOptions
} from 'fastify'
import { Answer, type Call, type Operation, type RestRoute, type Scope } from '../operations/operation.js'
import { ifMatchOf } from './conditional-requests.js'
import { errorSchemas } from './error-responses.js'
import { PORTFOLIO_SCHEMES, securityRequirements, type SecurityScheme } from './openapi.js'

/** A scope's guard (onRequest: the credential is checked before the body is read) and what it documents. */
interface Credential {
  guard: onRequestAsyncHookHandler
  schemes: readonly SecurityScheme[]
  /** A user's token may be refused with 403 (a client's token, another user's `userId`). */
  forbids: boolean
}

function credentialOf (app: FastifyInstance, scope: Scope): Credential {
  switch (scope) {
    case 'portfolio': {
      const access = app.portfolioAccess
      return { guard: app.verifyPortfolioAccess, schemes: PORTFOLIO_SCHEMES[access], forbids: access !== 'api-key' }
    }
    case 'api-key': return { guard: app.verifyApiKey, schemes: ['apiKey'], forbids: false }
    case 'principal': return { guard: app.verifyJwt, schemes: ['bearerAuth'], forbids: false }
  }
}

/** The route's handler: one domain call, its answer's status and ETag set, its value the body. */
function handlerOf (app: FastifyInstance, operation: Operation, rest: RestRoute, status: number) {
  const { domain } = app
  const run = operation.run as NonNullable<Operation['run']>
  const { ifMatch, preventCache } = rest
  return async (request: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    if (preventCache === true) reply.preventCache()
    // The request is the call (its `access`, its `log`), but for a write that honours If-Match.
    const call: Call = ifMatch === true
      ? { access: request.access, log: request.log, ifMatch: ifMatchOf(request) }
      : request
    const answer = await run(domain, call, request)
    if (status !== 200) reply.code(status)
    if (!(answer instanceof Answer)) return answer
    if (answer.etag !== undefined) reply.header('etag', answer.etag)
    if (answer.status !== undefined) reply.code(answer.status)
    return answer.value
  }
}

/** The Fastify route of a declared operation: its schemas, guard, OpenAPI entry and route options. */
function routeOf (app: FastifyInstance, operation: Operation, rest: RestRoute): RouteOptions {
  const { guard, schemes, forbids } = credentialOf(app, operation.scope)
  const [status, alternative] = typeof rest.status === 'object' ? rest.status : [rest.status ?? 200]
  const output = rest.output ?? operation.output
  const { params, query: querystring, body } = operation.input
  const schema: FastifySchema = {
    operationId: rest.operationId,
    summary: rest.summary,
    description: rest.description,
    ...(params === undefined ? {} : { params }),
    ...(querystring === undefined ? {} : { querystring }),
    ...(body === undefined ? {} : { body }),
    security: securityRequirements(schemes),
    response: {
      ...(forbids ? errorSchemas(403) : {}),
      [status]: output,
      ...(alternative === undefined ? {} : { [alternative]: output }),
      ...errorSchemas(...rest.errors)
    }
  }
  const { idempotent, entityTag, ifMatch } = rest
  const config = Object.fromEntries(Object.entries({ idempotent, entityTag, ifMatch }).filter(([, on]) => on === true))
  return {
    method: rest.method,
    url: rest.url,
    config,
    onRequest: guard,
    schema,
    handler: handlerOf(app, operation, rest, status)
  }
}

/**
 * Registers the REST routes of declared operations (src/operations), in their order, in the
 * module's scope. Each is a route as a module would write it: every hook of the app, the schemas
 * compiled on first use, the route options (`config`) the plugins read.
 */
export function operationRoutes (app: FastifyInstance, operations: readonly Operation[]): void {
  for (const operation of operations) {
    if (operation.rest !== undefined) app.route(routeOf(app, operation, operation.rest))
  }
}
