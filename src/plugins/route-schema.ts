import type { RouteOptions } from 'fastify'

/**
 * Small edits of a route's options from an onRoute hook, for plugins that switch a behaviour on
 * per route (idempotency, conditional requests): what the route adds is validated and
 * documented like the rest of its schema.
 */

type Schema = Record<string, unknown> & { properties?: Record<string, unknown> }

/** Adds optional request headers (lower-case names) to the route's `headers` schema: checked, and documented. */
export function addRequestHeaders (route: RouteOptions, properties: Record<string, unknown>): void {
  const schema = route.schema ?? {}
  const headers = (schema.headers ?? {}) as Schema
  const merged = { ...headers, type: 'object', properties: { ...headers.properties, ...properties } }
  route.schema = { ...schema, headers: merged }
}

/** Adds response schemas the route does not define itself. */
export function addResponses (route: RouteOptions, responses: Record<string, unknown>): void {
  const schema = route.schema ?? {}
  route.schema = { ...schema, response: { ...responses, ...(schema.response as Record<string, unknown> | undefined) } }
}

/**
 * Documents response headers on the route's 2xx answers (OpenAPI `headers`; the serializer
 * ignores the keyword). Each answer's schema is wrapped, never changed: schemas are shared.
 */
export function addSuccessHeaders (route: RouteOptions, headers: Record<string, unknown>): void {
  const schema = route.schema ?? {}
  const responses = Object.entries((schema.response ?? {}) as Record<string, Schema>).map(([status, response]) => {
    if (!/^2/.test(status)) return [status, response]
    return [status, { ...response, headers: { ...(response.headers as Schema | undefined), ...headers } }]
  })
  route.schema = { ...schema, response: Object.fromEntries(responses) }
}

/** The route's hooks of one kind with `hook` after them. */
export function withHook<Hook> (hooks: Hook | Hook[] | undefined, hook: Hook): Hook[] {
  return hooks === undefined ? [hook] : [...[hooks].flat() as Hook[], hook]
}
