import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions, preSerializationHookHandler } from 'fastify'
import { entityTag, ifMatch, noneMatch, type Precondition } from '../http/entity-tag.js'
import { PRIVATE_REVALIDATE } from '../http/cache-control.js'
import { errorSchemas } from './error-responses.js'
import { addRequestHeaders, addResponses, addSuccessHeaders, withHook } from './route-schema.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route's 200 answers carry a strong `ETag` — the one the handler set (a declared
     * operation's Answer: src/plugins/operation-routes.ts), else a hash of their content — and
     * `Cache-Control: private, no-cache`; a GET or HEAD whose
     * `If-None-Match` lists the tag is answered 304 without a body.
     */
    entityTag?: boolean
    /**
     * The route honours `If-Match`: its handler hands {@link ifMatchOf} to the domain, which checks
     * it on the row the write reads, locked, in its transaction (412 `PRECONDITION_FAILED` when it
     * no longer matches: `assertMatches`, src/domain/common.ts).
     */
    ifMatch?: boolean
  }
}

/** The `If-Match` of a request as a condition on the resource's current tag; undefined without one. */
export function ifMatchOf (request: FastifyRequest): Precondition | undefined {
  return ifMatch(request.headers['if-match'])
}

/** A strong tag as src/http/entity-tag.ts makes it: a SHA-256 in base64url, quoted. */
const ETAG = {
  type: 'string',
  pattern: '^"[A-Za-z0-9_-]{43}"$',
  maxLength: 45,
  description: 'The strong entity tag of the resource as answered (RFC 9110 §8.8.3)'
}

const CACHE_CONTROL = {
  type: 'string',
  enum: [PRIVATE_REVALIDATE],
  description: 'The caller\'s own cache may keep the answer and must revalidate it (If-None-Match) before each use; ' +
    'a shared cache never keeps it'
}

const NOT_MODIFIED = {
  type: 'null',
  description: 'Not modified: the resource still has the tag If-None-Match listed; no body',
  headers: { ETag: ETAG, 'Cache-Control': CACHE_CONTROL }
}

const IF_NONE_MATCH = {
  type: 'string',
  description: 'ETags the caller holds (or `*`): when the resource still has one, the answer is 304 without a body'
}

const IF_MATCH = {
  type: 'string',
  description: 'The ETag the change is based on (or `*`): when the resource no longer has it, ' +
    '412 PRECONDITION_FAILED and nothing changes'
}

const READS = new Set(['GET', 'HEAD'])

/**
 * preSerialization: tags a 200 answer's value (before it is serialized, so a 304 never
 * serializes it) and turns a read whose `If-None-Match` lists the tag into a bodiless 304.
 */
type Done = (error: null, payload: unknown) => void

const tagAnswer = (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: Done): void => {
  if (reply.statusCode !== 200) {
    done(null, payload)
    return
  }
  // Kept by the caller's cache and revalidated with the tag: the 304 says the same (RFC 9110 §15.4.5).
  reply.header('cache-control', PRIVATE_REVALIDATE)
  let tag = reply.getHeader('etag')
  if (typeof tag !== 'string') {
    tag = entityTag(payload)
    reply.header('etag', tag)
  }
  const held = request.headers['if-none-match']
  if (held !== undefined && READS.has(request.method) && noneMatch(held, tag)) {
    // A 304 has no content, so neither a body nor its type (RFC 9110 §15.4.5). A GET's body is not
    // even serialized; a HEAD's is, for Fastify to send its Content-Length as a 200 would.
    const serialize200 = request.method === 'GET' ? undefined : reply.getSerializationFunction('200')
    reply.code(304).removeHeader('content-type')
    reply.serializer(serialize200 ?? ((() => undefined) as unknown as (payload: unknown) => string))
  }
  done(null, payload)
}

function conditionalRoute (route: RouteOptions): void {
  const config = route.config ?? {}
  const methods = [route.method].flat()
  if (config.entityTag === true) {
    route.preSerialization = withHook(route.preSerialization, tagAnswer as preSerializationHookHandler)
    addSuccessHeaders(route, { ETag: ETAG, 'Cache-Control': CACHE_CONTROL })
    if (methods.some(method => READS.has(method))) {
      addRequestHeaders(route, { 'if-none-match': IF_NONE_MATCH })
      addResponses(route, { 304: NOT_MODIFIED })
    }
  }
  if (config.ifMatch === true) {
    addRequestHeaders(route, { 'if-match': IF_MATCH })
    addResponses(route, errorSchemas(412))
  }
}

async function conditionalRequests (app: FastifyInstance): Promise<void> {
  app.addHook('onRoute', conditionalRoute)
}

/** Conditional requests (RFC 9110 §13) on the routes that ask for them. Register before the routes. */
export default fp(conditionalRequests, { name: 'bff-conditional-requests', fastify: '5.x' })
