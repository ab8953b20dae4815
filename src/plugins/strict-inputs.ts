import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify'
import { BadRequestError, UnsupportedMediaTypeError } from '../errors.js'

const BODYLESS_METHODS = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS'])

/** The `charset` parameter of a Content-Type header, lower-cased; undefined when absent. */
function charsetOf (contentType: string | undefined): string | undefined {
  const match = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType ?? '')
  return match?.[1]?.toLowerCase()
}

/** JSON nested deeper than this is refused before any route sees it (docs/api.md#inputs). */
const MAX_JSON_DEPTH = 32

/** A UTF-16 surrogate without its pair: no character at all, and invalid in UTF-8 downstream. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/**
 * Why a parsed JSON body is refused, or `undefined`. Iterative, so a body of 100 000 brackets
 * costs a loop, never the stack of whatever later walks it (storing, relaying, logging).
 * @internal Test seam: depths at and past the limit are tested directly.
 */
export function jsonBodyProblem (body: unknown): string | undefined {
  const pending: Array<[unknown, number]> = [[body, 1]]
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [value, depth] = next
    if (typeof value === 'string') {
      if (LONE_SURROGATE.test(value)) return 'body must not contain unpaired UTF-16 surrogates'
      continue
    }
    if (typeof value !== 'object' || value === null) continue
    if (depth > MAX_JSON_DEPTH) return `body must not be nested deeper than ${MAX_JSON_DEPTH} levels`
    for (const [key, child] of Object.entries(value)) {
      if (LONE_SURROGATE.test(key)) return 'body must not contain unpaired UTF-16 surrogates'
      pending.push([child, depth + 1])
    }
  }
  return undefined
}

/** The query schema of every route without parameters: one object, so Ajv compiles it once. */
const NO_QUERY = Object.freeze({ type: 'object', properties: {}, propertyNames: { not: {} } })

/**
 * Refuses query parameters a route does not define: `?user=1` (a typo of `userId`) must not
 * silently list everything (docs/api.md#inputs, class-validator's `property user should not exist`).
 */
function refuseUndefinedQueryParameters (route: RouteOptions): void {
  const schema = route.schema ?? {}
  const query = schema.querystring as { properties?: Record<string, unknown> } | undefined
  const names = Object.keys(query?.properties ?? {})
  route.schema = {
    ...schema,
    // `not: {}` matches nothing: a route without parameters takes none.
    querystring: names.length === 0 ? NO_QUERY : { type: 'object', ...query, propertyNames: { enum: names } }
  }
}

function refuseLooseInputs (app: FastifyInstance): void {
  app.addHook('onRoute', refuseUndefinedQueryParameters)

  // JSON in UTF-8 only (RFC 8259 §8.1): another declared charset is 415 rather than mojibake.
  // A GET or DELETE that declares JSON but sends nothing is served as if it had no body.
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  const asString = { parseAs: 'string' as const }
  app.addContentTypeParser('application/json', asString, (request: FastifyRequest, body: string | Buffer, done) => {
    const charset = charsetOf(request.headers['content-type'])
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
      done(new UnsupportedMediaTypeError(), undefined)
      return
    }
    if (body.length === 0 && BODYLESS_METHODS.has(request.method)) {
      done(null, undefined)
      return
    }
    parseJson(request, body as string, (error, parsed) => {
      const problem = error === null ? jsonBodyProblem(parsed) : undefined
      if (problem !== undefined) done(new BadRequestError(problem), undefined)
      else done(error, parsed)
    })
  })
}

const NAME = 'bff-strict-inputs'

/** Strict inputs (docs/api.md#inputs): unknown query parameters refused, JSON only in UTF-8. Register before routes. */
export default fp(async app => { refuseLooseInputs(app) }, { name: NAME, fastify: '5.x' })

/**
 * Gives a module's scope the strict inputs, unless the app has them at its root already; there a
 * text/plain body is 415 too, as the service's root refuses it (src/app.ts).
 */
export function ensureStrictInputs (app: FastifyInstance): void {
  if (app.hasPlugin(NAME)) return
  refuseLooseInputs(app)
  if (app.hasContentTypeParser('text/plain')) app.removeContentTypeParser('text/plain')
}
