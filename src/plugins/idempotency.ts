import { isUtf8 } from 'node:buffer'
import { hash, randomUUID } from 'node:crypto'
import fp from 'fastify-plugin'
import type {
  FastifyInstance, FastifyReply, FastifyRequest, RouteOptions, onSendHookHandler, preHandlerAsyncHookHandler
} from 'fastify'
import { IdempotencyKeyInFlightError, IdempotencyKeyReusedError } from '../errors.js'
import type { IdempotencyClaim, KeptAnswer } from '../store/idempotency.js'
import { errorSchemas } from './error-responses.js'
import { addRequestHeaders, addResponses, addSuccessHeaders, withHook } from './route-schema.js'
import { canonicalJson } from '../schemas/canonical-json.js'
import { principalKey } from '../domain/access.js'

export interface IdempotencyPluginOptions {
  /** How long a key and its answer are kept, from the first request (`IDEMPOTENCY_TTL_SECONDS`). */
  ttlSeconds: number
  /**
   * How long a key may stay in flight: after this its execution is taken for dead (its instance
   * stopped mid-request) and a retry runs anew. Longer than any request can take.
   */
  inFlightLeaseMs: number
  /** How often each instance deletes expired keys (default: every 10 minutes, or the TTL if shorter). */
  sweepIntervalMs?: number
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route honours `Idempotency-Key` (docs/api.md, Safe retries). */
    idempotent?: boolean
  }
}

const IDEMPOTENCY_KEY_HEADER = {
  type: 'string',
  minLength: 1,
  maxLength: 128,
  pattern: '^[A-Za-z0-9._:-]+$',
  description: 'Makes the request safe to retry: a repeat with the same key and request gets the first answer again ' +
    '(header Idempotent-Replayed: true) and changes nothing; kept per credential for IDEMPOTENCY_TTL_SECONDS'
}

const REPLAYED = {
  type: 'string',
  enum: ['true'],
  description: 'Present when this is the kept answer of an earlier request with the same Idempotency-Key'
}

/** Answers a repeat is worth running again for: a failure of the service, or "too many, wait". */
function releases (status: number): boolean {
  return status >= 500 || status === 429
}

/**
 * The headers kept with an answer, to be sent again with it: its content type, its ETag, and how
 * caches may treat it (docs/api.md#caching), so that a replayed connect token is as uncacheable as
 * the first answer.
 */
const KEPT_HEADERS = ['content-type', 'etag', 'cache-control', 'pragma', 'expires']

/** Whose key it is: the verified principal, else the API key (as a digest: the key itself is never stored). */
function scopeOf (request: FastifyRequest): string | undefined {
  if (request.principal !== null) return principalKey(request.principal)
  const key = request.headers['x-api-key']
  return typeof key === 'string' ? `apikey:${hash('sha256', key, 'base64url')}` : undefined
}

function iso (ms: number): string {
  return new Date(ms).toISOString()
}

async function idempotency (app: FastifyInstance, options: IdempotencyPluginOptions): Promise<void> {
  const keys = app.store.idempotency
  const ttlMs = options.ttlSeconds * 1000
  // The executions this instance holds a key for, until their answer is kept or the key released.
  const held = new WeakMap<FastifyRequest, IdempotencyClaim>()

  const claimKey: preHandlerAsyncHookHandler = async function (request: FastifyRequest, reply: FastifyReply) {
    // One string of 1–128 characters: the route's headers schema checked it.
    const key = request.headers['idempotency-key'] as string | undefined
    if (key === undefined) return
    const scope = scopeOf(request)
    if (scope === undefined) return
    const now = Date.now()
    const claim: IdempotencyClaim = {
      scope,
      key,
      fingerprint: hash('sha256', `${request.method} ${request.url}\n${canonicalJson(request.body)}`, 'base64url'),
      claim: randomUUID(),
      at: iso(now),
      lockedUntil: iso(now + options.inFlightLeaseMs),
      expiresAt: iso(now + ttlMs)
    }
    const taken = await keys.claim(claim)
    switch (taken.outcome) {
      case 'claimed':
        held.set(request, claim)
        return
      case 'reused':
        throw new IdempotencyKeyReusedError()
      case 'in-flight':
        throw new IdempotencyKeyInFlightError()
      case 'replay': {
        const { status, headers, body } = taken.answer
        request.log.info({ idempotencyKey: key, status }, 'idempotent request replayed')
        // Bytes, so that Fastify sends them and their content type exactly as they were kept.
        const bytes = body === null ? undefined : Buffer.from(body, 'utf8')
        return await reply.code(status).headers({ ...headers, 'idempotent-replayed': 'true' }).send(bytes)
      }
    }
  }

  /** onSend: keeps the answer of an execution that held a key, or releases the key when it failed. */
  const keepAnswer: onSendHookHandler<unknown> = (request, reply, payload, done) => {
    const claim = held.get(request)
    if (claim === undefined) {
      done(null, payload)
      return
    }
    held.delete(request)
    const body = typeof payload === 'string'
      ? payload
      : Buffer.isBuffer(payload) && isUtf8(payload) ? payload.toString('utf8') : payload == null ? null : undefined
    // A stream or bytes that are not text (never answered by these routes) cannot be kept: the key is released.
    const work = releases(reply.statusCode) || body === undefined
      ? keys.release(claim)
      : keys.complete(claim, { status: reply.statusCode, headers: keptHeaders(reply), body })
    work.then(() => { done(null, payload) }, (error: unknown) => {
      // The answer still goes out; the key stays in flight until its lease ends.
      request.log.error({ err: error, idempotencyKey: claim.key }, 'idempotency key not completed')
      done(null, payload)
    })
  }

  function idempotentRoute (route: RouteOptions): void {
    if (route.config?.idempotent !== true) return
    addRequestHeaders(route, { 'idempotency-key': IDEMPOTENCY_KEY_HEADER })
    addSuccessHeaders(route, { 'Idempotent-Replayed': REPLAYED })
    addResponses(route, errorSchemas(409, 422))
    route.preHandler = withHook(route.preHandler, claimKey)
    route.onSend = withHook(route.onSend, keepAnswer as onSendHookHandler)
  }
  app.addHook('onRoute', idempotentRoute)

  // Expired keys are deleted by every instance now and then (a late sweep only leaves rows a
  // new claim takes over anyway).
  const sweepMs = options.sweepIntervalMs ?? Math.min(ttlMs, 10 * 60_000)
  let sweeper: NodeJS.Timeout | undefined
  app.addHook('onReady', async () => {
    sweeper = setInterval(() => {
      keys.sweep(iso(Date.now())).catch((error: unknown) => {
        app.log.warn({ err: error }, 'expired idempotency keys not swept')
      })
    }, sweepMs).unref()
  })
  app.addHook('onClose', async () => { clearInterval(sweeper) })
}

/** The headers of `reply` that are kept with its answer. */
function keptHeaders (reply: FastifyReply): KeptAnswer['headers'] {
  const headers: KeptAnswer['headers'] = {}
  for (const name of KEPT_HEADERS) {
    const value = reply.getHeader(name)
    if (value !== undefined) headers[name] = String(value)
  }
  return headers
}

/**
 * `Idempotency-Key` (IETF httpapi draft) on the routes with `config.idempotent`: each key is
 * claimed in the store before the request runs and completed with its answer after. Register
 * after the store and auth plugins, before the routes.
 */
export default fp(idempotency, {
  name: 'bff-idempotency',
  fastify: '5.x',
  dependencies: ['bff-store', 'bff-auth'],
  decorators: { fastify: ['store'] }
})
