import fp, { type PluginMetadata } from 'fastify-plugin'
import type { FastifyPluginOptions } from 'fastify'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ensureSchemaCompilers } from './schema-compilers.js'
import { ensureErrorResponses } from './error-responses.js'
import { ensureStrictInputs } from './strict-inputs.js'
import { ensureOpenApiEntries } from './openapi-host.js'

/** True for a prefix below the root: `/api/v2/carteiras`, not `''` or `/`. */
const ownsPrefix = (prefix: unknown): boolean => typeof prefix === 'string' && /[^/]/.test(prefix)

/**
 * A module as every app mounts it — the service (src/app.ts) or a host — in an encapsulation
 * context of its own that carries what the service's root gives every route, wherever the app
 * it is mounted in does not have it (docs/reuse.md): the schema compilers,
 * the error handler (and, under a prefix of its own, the not-found handler), strict inputs, and
 * its entries in the app's @fastify/swagger document with their security schemes. The module's
 * routes and hooks live one scope further in, so an unknown path under its prefix is a 404
 * without the module's credential, as in the service. In the service each of these is
 * registered once at the root and nothing is added here: no work per request either way.
 */
export function reusableModule<Options extends FastifyPluginOptions = Record<never, never>> (
  routes: FastifyPluginAsyncTypebox<Options>,
  metadata: Omit<PluginMetadata, 'encapsulate'>
): FastifyPluginAsyncTypebox<Options> {
  const carrying: FastifyPluginAsyncTypebox<Options> = async (app, options) => {
    ensureSchemaCompilers(app)
    ensureErrorResponses(app, { ownPrefix: ownsPrefix(options.prefix) })
    ensureStrictInputs(app)
    ensureOpenApiEntries(app)
    // This scope already stands under the prefix.
    const { prefix: _prefix, ...inner } = options
    await app.register(routes, inner as Options)
  }
  return fp(carrying, { ...metadata, encapsulate: true })
}
