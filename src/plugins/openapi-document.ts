import { MAX_REQUEST_TEXT_LENGTH } from '../schemas/common.js'

/**
 * The last pass over the OpenAPI document @fastify/swagger made from the route schemas: what holds
 * for every operation whatever its route says, so that a route added tomorrow is documented the
 * same way without a word of its own (docs/api.md#the-openapi-document). Linted with Spectral's
 * `spectral:oas` and the OWASP API Security Top 10 ruleset (.spectral.yaml).
 */

type JsonObject = Record<string, unknown>
export const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null

/** What each module's tag groups (documentRoutes names them). A tag not listed here is declared without one. */
const TAGS: Record<string, string> = {
  auth: 'The calling principal, its token and its dashboards (Bearer token; health and validate-token open)',
  portfolios: 'Portfolios, their value and their live valuation (x-api-key)',
  'portfolio-assets': 'Assets of the portfolios, their quotes and dashboards (x-api-key)',
  'openfinance-excluded-transactions':
    'Open-finance transactions a client excluded (Bearer token; a client only its own)',
  'backend-api': 'Relays to the Laravel backend API (Bearer token)',
  aggregator: 'Relays to Pluggy, connect tokens and its webhook (Bearer token; the webhook its secret)',
  system: 'Readiness, statistics, provider hashes and the development reset'
}

const ERROR_DESCRIPTIONS: Record<string, string> = {
  400: 'Invalid request: `message` lists every failing rule (VALIDATION_FAILED, BAD_REQUEST)',
  401: 'Missing, invalid or expired credential ' +
    '(TOKEN_INVALID, TOKEN_EXPIRED, SUBJECT_MISSING, API_KEY_INVALID, WEBHOOK_SECRET_INVALID)',
  403: 'The principal may not do this (FORBIDDEN_PRINCIPAL, FORBIDDEN)',
  404: 'Nothing has this id or path (NOT_FOUND)',
  409: 'A request with this Idempotency-Key is still running: retry later (IDEMPOTENCY_KEY_IN_FLIGHT)',
  412: 'The resource changed since the ETag sent in If-Match; nothing was changed (PRECONDITION_FAILED)',
  422: 'Well-formed but refused, `code` says why: this Idempotency-Key was used with another request — method, ' +
    'path or body differ (IDEMPOTENCY_KEY_REUSED); a transaction would leave less than nothing held ' +
    '(INSUFFICIENT_QUANTITY)',
  413: 'The body is over 1 MiB (PAYLOAD_TOO_LARGE)',
  415: 'The body is not JSON in UTF-8: send Content-Type application/json (UNSUPPORTED_MEDIA_TYPE)',
  429: 'Too many requests: wait Retry-After seconds (RATE_LIMITED)',
  500: 'Unexpected error; the request id is in x-request-id (INTERNAL_ERROR)',
  502: 'The upstream failed or could not be reached (UPSTREAM_UNAVAILABLE)',
  503: 'Not serving now: overloaded, draining, store down, not configured, or the quote provider\'s quota spent; ' +
    'wait Retry-After seconds (OVERLOADED, DRAINING, STORE_UNAVAILABLE, NOT_CONFIGURED, UPSTREAM_UNAVAILABLE)',
  504: 'The upstream did not answer in time (UPSTREAM_TIMEOUT)'
}

/** The largest integer the service writes exactly: its numbers are JavaScript's. */
const MAX_EXACT_INTEGER = Number.MAX_SAFE_INTEGER
const RATE_LIMIT_WINDOW_MAX_SECONDS = 86_400

/**
 * The response headers every operation may carry, as components each answer refers to
 * (docs/api.md#limits, docs/api.md#cors). Header values are written by the service, never read:
 * their integers are bounded by what the service writes.
 */
const RESPONSE_HEADERS = {
  'X-RateLimit-Limit': {
    description: 'Requests allowed per window (RATE_LIMIT_MAX) to this principal, or to this client address when ' +
      'anonymous. On every answer the rate limit counted: once the credential and the input were accepted',
    schema: { type: 'integer', format: 'int64', minimum: 1, maximum: MAX_EXACT_INTEGER }
  },
  'X-RateLimit-Remaining': {
    description: 'Requests left in the current window (with X-RateLimit-Limit)',
    schema: { type: 'integer', format: 'int64', minimum: 0, maximum: MAX_EXACT_INTEGER }
  },
  'X-RateLimit-Reset': {
    description: 'Seconds until the current window ends and the count starts again (with X-RateLimit-Limit)',
    schema: { type: 'integer', format: 'int32', minimum: 0, maximum: RATE_LIMIT_WINDOW_MAX_SECONDS }
  },
  'Retry-After': {
    description: 'Seconds to wait before trying again (an upstream\'s own 429 relayed keeps its own value, ' +
      'docs/api.md#relays)',
    schema: { type: 'integer', format: 'int64', minimum: 0, maximum: MAX_EXACT_INTEGER }
  },
  'Access-Control-Allow-Origin': {
    description: 'The caller\'s Origin, when it is one of CORS_ORIGINS (docs/api.md#cors); absent for any other ' +
      'origin, for a request without one, and when CORS_ORIGINS is unset',
    schema: { type: 'string', format: 'uri', maxLength: MAX_REQUEST_TEXT_LENGTH }
  }
} as const

const headerRef = (name: keyof typeof RESPONSE_HEADERS): JsonObject => ({ $ref: `#/components/headers/${name}` })
const RATE_LIMITED_HEADERS = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'] as const

/** An answer's headers by its status: CORS on all, the rate limit's on 2xx and 4xx, Retry-After on 429 and 503. */
function headersOf (status: string): JsonObject {
  return {
    'Access-Control-Allow-Origin': headerRef('Access-Control-Allow-Origin'),
    ...(/^[24]/.test(status) ? Object.fromEntries(RATE_LIMITED_HEADERS.map(name => [name, headerRef(name)])) : {}),
    ...(status === '429' || status === '503' ? { 'Retry-After': headerRef('Retry-After') } : {})
  }
}

interface DocumentedParameter { in?: string, schema?: unknown }
interface DocumentedOperation {
  summary?: string
  description?: string
  tags?: string[]
  security?: unknown[]
  requestBody?: { content?: Record<string, { schema?: unknown }> }
  parameters?: DocumentedParameter[]
  responses?: Record<string,
  { description?: string, content?: Record<string, { schema?: unknown }>, headers?: JsonObject }>
}
export interface OpenApiDocument {
  servers?: unknown[]
  tags?: unknown[]
  paths?: Record<string, Record<string, DocumentedOperation>>
  components?: JsonObject
}

/**
 * A text parameter of the path or a header has at most MAX_REQUEST_TEXT_LENGTH characters: the
 * router answers 404 for a longer path parameter, Node 431 for longer headers.
 */
function boundedParameter (parameter: DocumentedParameter): DocumentedParameter {
  const { schema } = parameter
  if ((parameter.in !== 'path' && parameter.in !== 'header') || !isObject(schema) || schema.type !== 'string') {
    return parameter
  }
  const maxLength = Math.min(Number(schema.maxLength ?? Infinity), MAX_REQUEST_TEXT_LENGTH)
  return { ...parameter, schema: { ...schema, maxLength } }
}

/**
 * Integer formats, from the bounds a schema gives (`int32` when they fit in 32 bits, else `int64`:
 * the service's integers are JavaScript numbers), for client generators and the OWASP ruleset.
 */
export function withIntegerFormats (node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withIntegerFormats)
  if (!isObject(node)) return node
  const done = Object.fromEntries(Object.entries(node).map(([key, value]) => [key, withIntegerFormats(value)]))
  if (node.type !== 'integer' || node.format !== undefined) return done
  const fits = Number(node.minimum) >= -(2 ** 31) && Number(node.maximum) < 2 ** 31
  return { ...done, format: fits ? 'int32' : 'int64' }
}

/** An open operation requires no credential, said the way OpenAPI says it: one empty requirement. */
function openSecurity (security: unknown[] | undefined): unknown[] | undefined {
  return security !== undefined && security.length === 0 ? [{}] : security
}

/**
 * Every operation's answers described, with the headers the service sends with them; open
 * operations marked so; path and header parameters bounded; the module tags declared; integer
 * formats. `relayedToo(response)` says whether an error answer may be an upstream's, relayed.
 */
export function finishOperations (document: OpenApiDocument, relayedToo: (response: object) => boolean): void {
  const tags = new Set<string>()
  for (const operation of Object.values(document.paths ?? {}).flatMap(path => Object.values(path))) {
    for (const tag of operation.tags ?? []) tags.add(tag)
    operation.security = openSecurity(operation.security)
    if (operation.parameters !== undefined) operation.parameters = operation.parameters.map(boundedParameter)
    for (const [status, response] of Object.entries(operation.responses ?? {})) {
      const description = ERROR_DESCRIPTIONS[status]
      if (description !== undefined) {
        response.description = relayedToo(response)
          ? `${description}; or the upstream's own answer with this status, relayed byte for byte`
          : description
      } else if (response.description === 'Default Response') response.description = operation.summary ?? 'Success'
      response.headers = { ...response.headers, ...headersOf(status) }
    }
  }
  document.tags = [...tags].sort().map(name => TAGS[name] === undefined ? { name } : { name, description: TAGS[name] })
  document.components = { ...document.components, headers: RESPONSE_HEADERS }
}
