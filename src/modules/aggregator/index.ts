import { createHash, timingSafeEqual } from 'node:crypto'
import { reusableModule } from '../../plugins/reusable-module.js'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import {
  AggregatorNotConfiguredError,
  BadRequestError,
  ForbiddenError,
  UpstreamUnavailableError,
  WebhookSecretError,
  ValidationError,
  rateLimitedFor,
  type ValidationIssue
} from '../../errors.js'
import { WindowCounter } from '../../upstream/budget.js'
import { principalKey } from '../../domain/access.js'
import { ensureDomain, runJobs } from '../../plugins/domain.js'
import { canonicalJson } from '../../schemas/canonical-json.js'
import { errorSchemas, relayedErrorSchemas } from '../../plugins/error-responses.js'
import { documentRoutes } from '../../plugins/openapi.js'
import { telemetryOf } from '../../plugins/metrics.js'
import { jsonObject, type JsonValue, type QueryValue } from '../../upstream/client.js'
import type { AggregatorRequest } from '../../upstream/aggregator.js'
import { relayResponse } from '../../upstream/relay.js'
import { relativeEndpoint, underPrefix } from '../../upstream/endpoint.js'
import { UpstreamBodySchema } from '../../schemas/common.js'
import {
  AggregatorRelayBodySchema,
  ConnectTokenBodySchema,
  ConnectTokenSchema,
  WebhookAckSchema,
  WebhookBodySchema,
  type WebhookBody
} from './schemas.js'

export interface AggregatorModuleOptions {
  /** Path prefixes the generic relay may reach (`/items` allows `/items/…`). */
  allowedPaths: readonly string[]
  /** Methods the generic relay may use. */
  allowedMethods: readonly string[]
  /** The `x-webhook-secret` the webhook sender presents; without one every delivery is accepted. */
  webhookSecret?: string
  /** Accept webhooks while the aggregator has no credentials (development); otherwise 503 like the relay. */
  webhooksWithoutCredentials?: boolean
  /** `POST /connect_token` calls per principal per minute (`CONNECT_TOKENS_PER_MINUTE`; 10 when absent). */
  connectTokensPerMinute?: number
}

/** Never reachable through the relay, whatever is configured: they hand out or redirect credentials. */
const FORBIDDEN_PATHS = ['/auth', '/webhooks', '/connect_token']
/** A connect token lives 30 minutes (Pluggy's documentation); the aggregator does not say so in its answer. */
const CONNECT_TOKEN_LIFETIME_SECONDS = 1800
const ENDPOINT_NOT_ALLOWED = 'Endpoint ou método não permitido no agregador'
/**
 * A `transactions/updated|deleted` event lists every id it names (pluggy-node `webhook.ts`):
 * 39 bytes per UUID in the array, 294 around them. 1 MiB holds 26 879 ids; the largest
 * plausible event, a year of a busy business account (20 000 ids), is 780 KB (docs/aggregator.md).
 * @internal Test seam: a test measures the largest plausible event against it.
 */
export const WEBHOOK_BODY_LIMIT = 1024 * 1024
/**
 * How long an event without `eventId` is taken for a redelivery of the same payload: the
 * sender's burst of immediate retries, not the hours it may retry later (docs/aggregator.md).
 * @internal Test seam: a test records an event inside and past it.
 */
export const DIGEST_WINDOW_MS = 5 * 60 * 1000

function sha256 (text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest()
}

/** Idempotency key: the sender's `eventId` (Pluggy's id of a delivery), else a digest of the whole payload. */
function webhookEventKey (body: WebhookBody): string {
  return body.eventId !== undefined ? `id:${body.eventId}` : `sha256:${sha256(canonicalJson(body)).toString('hex')}`
}

/** Events about an item itself (`item/updated`, the dotted `item.updated`…): the only ones that have the item read. */
function isItemEvent (event: string): boolean {
  return event.startsWith('item/') || event.startsWith('item.')
}

/**
 * A GET field as Pluggy's SDK sends it: a list (`ids`, `countries`, `types`) is one
 * comma-joined value (pluggy-node `mapToQueryString`); an object is refused.
 */
function queryValue (key: string, value: JsonValue): QueryValue {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value
  if (Array.isArray(value) && value.every(item => typeof item === 'string' || typeof item === 'number')) {
    return value.join(',')
  }
  throw new BadRequestError(`${key} must be a string, number, boolean or a list of strings or numbers in a GET`)
}

/** The aggregator's pagination (Pluggy's `page`/`pageSize`): `page` from 1, `pageSize` 1–500. */
const PAGINATION = {
  page: { minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
  pageSize: { minimum: 1, maximum: 500 }
} as const

/**
 * Checks `page` and `pageSize` before they leave, in class-validator's wording: integers (a
 * number, or its digits in a string), within bounds. `Infinity`, negatives and text are 400.
 */
function assertPagination (fields: Record<string, JsonValue>): void {
  const issues: ValidationIssue[] = []
  for (const [name, { minimum, maximum }] of Object.entries(PAGINATION)) {
    const value = fields[name]
    if (value === undefined) continue
    const number = typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value
    const at = { instancePath: `/${name}`, schemaPath: `#/properties/${name}` }
    if (typeof number !== 'number' || !Number.isSafeInteger(number)) {
      issues.push({ ...at, keyword: 'type', params: { type: 'integer' }, message: 'must be integer' })
    } else if (number < minimum) {
      issues.push({ ...at, keyword: 'minimum', params: { limit: minimum }, message: `must be >= ${minimum}` })
    } else if (number > maximum) {
      issues.push({ ...at, keyword: 'maximum', params: { limit: maximum }, message: `must be <= ${maximum}` })
    }
  }
  if (issues.length > 0) throw new ValidationError('body', issues)
}

/** Aggregator relay, connect token and webhook receiver (docs/api.md#aggregator). */
const aggregatorModule: FastifyPluginAsyncTypebox<AggregatorModuleOptions> = async (app, options) => {
  app.addHook('onRoute', documentRoutes('aggregator', 'bearerAuth'))
  const { aggregator } = app
  const { aggregatorEvents } = app.store
  await ensureDomain(app)
  const { aggregatorItems, itemVerifications } = app.domain
  const allowedMethods = new Set(options.allowedMethods)
  const webhookSecret = options.webhookSecret === undefined ? undefined : sha256(options.webhookSecret)
  const connectTokens = new WindowCounter(options.connectTokensPerMinute ?? 10)
  // Verifications are tried at once after the event is stored, then retried from the store's queue.
  runJobs(app)

  app.post('/', {
    schema: {
      operationId: 'relayToAggregator',
      summary: 'Relays a call to the aggregator (allowed paths and methods only)',
      description: 'Relays a call to Pluggy on the allowed paths and methods (AGGREGATOR_ALLOWED_PATHS, ' +
        'AGGREGATOR_ALLOWED_METHODS); a client token reaches only its own items. Counted against the ' +
        'aggregator budgets; the answer relayed as received (docs/api.md#aggregator).',
      body: AggregatorRelayBodySchema,
      response: {
        '2xx': UpstreamBodySchema,
        '3xx': UpstreamBodySchema,
        '4xx': UpstreamBodySchema,
        ...relayedErrorSchemas(400, 401, 403, 413, 415, 429),
        ...errorSchemas(502, 503, 504)
      }
    },
    onRequest: [app.verifyJwt]
  }, async (request, reply) => {
    const { endpoint, method, ...rest } = request.body
    const path = relativeEndpoint(endpoint)
    const allowed = allowedMethods.has(method) &&
      options.allowedPaths.some(prefix => underPrefix(path, prefix)) &&
      !FORBIDDEN_PATHS.some(prefix => underPrefix(path, prefix))
    if (!allowed) throw new ForbiddenError(ENDPOINT_NOT_ALLOWED)
    const fields = rest as Record<string, JsonValue>
    assertPagination(fields)
    const upstream: AggregatorRequest = { method, path, log: request.log }
    if (method === 'GET') {
      const query: Record<string, QueryValue> = {}
      for (const [key, value] of Object.entries(fields)) query[key] = queryValue(key, value)
      upstream.query = query
    } else {
      upstream.json = fields
    }
    // Every item the call names must be a client's own, before anything is sent. What is sent is
    // what is checked: a list of item ids is one value that names no item of the client's.
    const principal = await aggregatorItems.mayReach(request.access, path, upstream.query ?? fields, request.log)
    upstream.principal = principalKey(principal)
    return relayResponse(reply, await aggregator.relay(upstream))
  })

  app.post('/connect_token', {
    // Idempotency-Key (src/plugins/idempotency.ts): a retry gets the same token, no second one is made.
    config: { idempotent: true },
    schema: {
      operationId: 'createConnectToken',
      summary: 'Creates a connect token for the calling principal',
      description: 'Creates a Pluggy connect token for the calling principal (its id as Pluggy\'s clientUserId), ' +
        'optionally to update one of its own items; lives 30 minutes. At most CONNECT_TOKENS_PER_MINUTE ' +
        'per principal; safe to retry with Idempotency-Key (docs/api.md#aggregator).',
      body: ConnectTokenBodySchema,
      // A 4xx of the aggregator's is relayed as received, those the service answers itself too.
      response: {
        201: ConnectTokenSchema,
        '4xx': UpstreamBodySchema,
        ...relayedErrorSchemas(400, 401, 403, 413, 415, 429),
        ...errorSchemas(502, 503, 504)
      }
    },
    onRequest: [app.verifyJwt]
  }, async (request, reply) => {
    // A credential for the aggregator's widget: no cache keeps it (docs/api.md#caching).
    reply.preventCache()
    // Each principal's allowance, before anything reaches the aggregator (OWASP API6).
    const principal = await request.access.principal()
    const wait = connectTokens.hit(principalKey(principal))
    if (wait !== undefined) {
      telemetryOf(app).rateLimited('connect_tokens')
      throw rateLimitedFor(wait)
    }
    const itemId = request.body?.itemId
    await aggregatorItems.mayUse(request.access, itemId, request.log)
    const response = await aggregator.relay({
      method: 'POST',
      path: 'connect_token',
      // The principal is the end user; nothing else the caller sent reaches the aggregator.
      json: { ...(itemId === undefined ? {} : { itemId }), options: { clientUserId: principal.id } },
      log: request.log,
      principal: principalKey(principal)
    })
    if (response.status >= 400) return relayResponse(reply, response)
    const accessToken = jsonObject(response.body)?.accessToken
    if (typeof accessToken !== 'string' || accessToken.length === 0) {
      request.log.warn({ upstream: 'aggregator', status: response.status }, 'connect token answer without accessToken')
      throw new UpstreamUnavailableError()
    }
    return reply.code(201).send({ accessToken, expiresIn: CONNECT_TOKEN_LIFETIME_SECONDS, itemId: itemId ?? null })
  })

  async function verifyWebhookSecret (request: FastifyRequest): Promise<void> {
    if (!aggregator.configured && options.webhooksWithoutCredentials !== true) throw new AggregatorNotConfiguredError()
    if (webhookSecret === undefined) return
    const presented = request.headers['x-webhook-secret']
    if (typeof presented !== 'string' || !timingSafeEqual(sha256(presented), webhookSecret)) {
      throw app.refuseCredential(request, new WebhookSecretError())
    }
  }

  app.post('/webhook', {
    schema: {
      operationId: 'receiveAggregatorWebhook',
      summary: 'Receives aggregator events (stored once each)',
      description: 'Receives Pluggy\'s webhook events (with the x-webhook-secret header when ' +
        'AGGREGATOR_WEBHOOK_SECRET is set): each is stored once, and the item\'s status is verified ' +
        'with Pluggy and pushed to its GraphQL subscribers (docs/api.md#aggregator).',
      security: [{ webhookSecret: [] }],
      body: WebhookBodySchema,
      response: { 200: WebhookAckSchema, ...errorSchemas(400, 401, 413, 503) }
    },
    onRequest: [verifyWebhookSecret],
    bodyLimit: WEBHOOK_BODY_LIMIT
  }, async request => {
    const body = request.body
    const itemId = body.itemId ?? body.data?.itemId ?? null
    const { stored } = await aggregatorEvents.record({
      eventKey: webhookEventKey(body),
      event: body.event,
      itemId,
      payload: JSON.stringify(body),
      // An eventId names one delivery for good; a digest only a burst of redeliveries.
      ...(body.eventId === undefined ? { keyHeldForMs: DIGEST_WINDOW_MS } : {})
    })
    const outcome = stored ? 'webhook event stored' : 'webhook redelivery acknowledged'
    request.log.info({ event: body.event, itemId, stored }, outcome)
    // The sender hears back at once; the item is checked after (a redelivery is not checked twice).
    // Other events (transactions/*, connector/*, payments) are kept as sent: no item to read.
    if (stored && itemId !== null && isItemEvent(body.event)) {
      itemVerifications.afterWebhook(itemId, body.event, request.log)
    }
    return { received: true as const }
  })
}

export default reusableModule(aggregatorModule, {
  name: 'bff-aggregator',
  fastify: '5.x',
  // sensible's reply.preventCache: no cache keeps a connect token or a relayed answer (docs/api.md#caching).
  dependencies: ['bff-auth', 'bff-store', 'bff-upstreams', 'bff-change-feed', '@fastify/sensible'],
  decorators: { fastify: ['verifyJwt', 'aggregator', 'store', 'changeFeed'] }
})
