import { reusableModule } from '../../plugins/reusable-module.js'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { BadRequestError } from '../../errors.js'
import type { Principal } from '../../domain/access.js'
import { errorSchemas, relayedErrorSchemas } from '../../plugins/error-responses.js'
import { documentRoutes } from '../../plugins/openapi.js'
import { jsonObject, type JsonValue, type QueryValue, type UpstreamRequest } from '../../upstream/client.js'
import { relayResponse } from '../../upstream/relay.js'
import { relativeEndpoint } from '../../upstream/endpoint.js'
import { formatDuration } from '../../domain/time.js'
import {
  BackendHealthSchema,
  PROXY_HEADER_ALLOWLIST,
  ProxyBodySchema,
  ProxyParamsSchema,
  ValidateTokenResultSchema
} from './schemas.js'
import { UpstreamBodySchema } from '../../schemas/common.js'

export interface BackendApiModuleOptions {
  /** Upstream paths, relative to BACKEND_URL. */
  paths: { health: string, me: string, profile: string }
}

const allowedHeaders = new Set<string>(PROXY_HEADER_ALLOWLIST)

/** The caller's own verified token, never the raw header; JSON asked for (Laravel answers HTML otherwise). */
function forwardedHeaders (principal: Principal, extra: Record<string, string> = {}): Record<string, string> {
  return { ...extra, accept: 'application/json', authorization: `Bearer ${principal.rawToken ?? ''}` }
}

function stringOrNull (value: JsonValue | undefined): string | null {
  return typeof value === 'string' ? value : null
}

/** `{id, email, name}` from what Laravel's "me" answers: the user itself, or under `user` or `data`. */
function backendUser (body: JsonValue | undefined): { id: string, email: string | null, name: string | null } | null {
  const object = jsonObject(body)
  if (object === undefined) return null
  const user = jsonObject(object.user ?? object.data) ?? object
  const id = user.id
  if (typeof id !== 'string' && typeof id !== 'number') return null
  return { id: String(id), email: stringOrNull(user.email), name: stringOrNull(user.name) }
}

/** `params` of a GET: each value must be a string, number or boolean, since it becomes the query. */
function queryOf (params: Record<string, unknown>): Record<string, QueryValue> {
  const query: Record<string, QueryValue> = {}
  for (const [key, value] of Object.entries(params)) {
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      throw new BadRequestError(`params.${key} must be a string, number or boolean with method GET`)
    }
    query[key] = value
  }
  return query
}

/** Relay to the Laravel backend API (docs/api.md#relays), with the caller's own Bearer token. */
const backendApiModule: FastifyPluginAsyncTypebox<BackendApiModuleOptions> = async (app, options) => {
  app.addHook('onRoute', documentRoutes('backend-api', 'bearerAuth'))
  app.addHook('onRequest', app.verifyJwt)
  const backend = app.backendClient
  const relay = app.backendRelay
  // The upstream's status and bytes (relayResponse); the 4xx the service also answers itself
  // (a bad body, the token, the body limits, the rate limit) are documented with both shapes.
  const relayed = {
    '2xx': UpstreamBodySchema,
    '3xx': UpstreamBodySchema,
    '4xx': UpstreamBodySchema,
    ...relayedErrorSchemas(400, 401, 413, 415, 429),
    ...errorSchemas(502, 504)
  }

  app.get('/health', {
    schema: {
      operationId: 'getBackendHealth',
      summary: 'Reachability of the backend API and the caller\'s token',
      description: 'Whether the Laravel backend API answers, how fast, and how long the caller\'s token has left ' +
        '(docs/api.md#relays).',
      response: { 200: BackendHealthSchema, ...errorSchemas(401) }
    }
  }, async (request, reply) => {
    const principal = await request.access.principal()
    // About the caller's token (how long it lives): no cache keeps it (docs/api.md#caching).
    reply.preventCache()
    const { reachable: connected, durationMs } = await backend.probe(options.paths.health, request.log)
    return {
      status: 'OK' as const,
      laravel: { connected, responseTime: `${Math.round(durationMs)}ms` },
      token: { valid: true, expiresIn: formatDuration(principal.payload.exp - Date.now() / 1000) }
    }
  })

  app.post('/validate-token', {
    schema: {
      operationId: 'validateTokenAtBackend',
      summary: 'Asks the backend API whose token this is (it sees logouts the service cannot)',
      description: 'Asks the backend API whether the caller\'s token is still valid there: it sees logouts (its ' +
        'blacklist), which the service cannot. Answers the backend\'s user for a valid token ' +
        '(docs/api.md#tokens).',
      response: { 200: ValidateTokenResultSchema, ...errorSchemas(401, 502, 504) }
    }
  }, async (request, reply) => {
    const principal = await request.access.principal()
    // Whose token this is, as the backend says: no cache keeps it.
    reply.preventCache()
    const headers = forwardedHeaders(principal)
    const response = await relay.call({ method: 'GET', path: options.paths.me, headers, log: request.log })
    const user = response.status >= 200 && response.status < 300 ? backendUser(response.body) : null
    return { valid: user !== null, user }
  })

  app.get('/user/profile', {
    schema: {
      operationId: 'getBackendUserProfile',
      summary: 'The caller\'s profile at the backend API (relayed)',
      description: 'The caller\'s profile as the backend API answers it, with the caller\'s verified token: a ' +
        '2xx-4xx answer relayed as received, a 5xx or an unreachable backend 502, a timeout 504 ' +
        '(docs/api.md#relays).',
      response: relayed
    }
  }, async (request, reply) => {
    const principal = await request.access.principal()
    const headers = forwardedHeaders(principal)
    const response = await relay.call({ method: 'GET', path: options.paths.profile, headers, log: request.log })
    return relayResponse(reply, response)
  })

  app.post('/proxy/*', {
    schema: {
      operationId: 'proxyToBackend',
      summary: 'Relays a call to any backend API path with the caller\'s token',
      description: 'Relays a call to a path of the backend API with the caller\'s verified token: GET with params ' +
        'as the query, another method with params as the JSON body; allow-listed headers only. Paths ' +
        'with //, .. or ; are refused before anything is sent. The backend\'s 2xx-4xx answer is relayed ' +
        'as received (docs/api.md#relays).',
      params: ProxyParamsSchema,
      body: ProxyBodySchema,
      response: relayed
    }
  }, async (request, reply) => {
    const principal = await request.access.principal()
    const path = relativeEndpoint(request.params['*'], { leadingSlash: false })
    const { method, params = {}, headers = {} } = request.body
    const extra: Record<string, string> = {}
    for (const [name, value] of Object.entries(headers)) {
      const lower = name.toLowerCase()
      if (!allowedHeaders.has(lower)) {
        throw new BadRequestError(`header ${name} is not allowed (allowed: ${PROXY_HEADER_ALLOWLIST.join(', ')})`)
      }
      extra[lower] = value
    }
    // Laravel also reads a token from the query or the body: only the verified one may travel.
    if (Object.keys(params).some(key => key.toLowerCase() === 'token')) {
      throw new BadRequestError('params.token is not allowed: the token travels only in Authorization')
    }
    const upstream: UpstreamRequest = { method, path, headers: forwardedHeaders(principal, extra), log: request.log }
    if (method === 'GET') upstream.query = queryOf(params)
    else upstream.json = params as JsonValue
    return relayResponse(reply, await relay.call(upstream))
  })
}

export default reusableModule(backendApiModule, {
  name: 'bff-backend-api',
  fastify: '5.x',
  // sensible's reply.preventCache: no cache keeps a relayed or token answer (docs/api.md#caching).
  dependencies: ['bff-auth', 'bff-upstreams', '@fastify/sensible'],
  decorators: { fastify: ['verifyJwt', 'backendClient', 'backendRelay'] }
})
