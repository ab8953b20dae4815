/**
 * The `Cache-Control` of the service's answers (docs/api.md#caching). Every answer is data of the
 * credential that asked for it, so by default no cache may keep it; the answers with an ETag may
 * be kept by the caller's own cache, which must revalidate them before each use.
 *
 * - {@link NO_STORE}: every answer the service does not mark otherwise, errors included (set with
 *   the security headers on every request, and again by the error handlers).
 * - {@link PRIVATE_REVALIDATE}: an answer with an ETag (the conditional-requests plugin).
 * - An answer that carries a credential, the principal's claims or an upstream's answer for the
 *   caller: `reply.preventCache()` of @fastify/sensible, in the handler or the relay adapter —
 *   `no-store` with `private, max-age=0`, `Pragma: no-cache` and `Expires: 0`, which caches that
 *   predate `Cache-Control` understand too.
 */

/** No cache, the browser's included, keeps the answer. */
export const NO_STORE = 'no-store'

/**
 * Only the caller's own cache (a browser's) may keep the answer, and it must ask again before each
 * use: it sends `If-None-Match` with the kept ETag, with the credential of that request, and gets
 * a bodiless 304 while nothing changed. A shared cache (a proxy, a CDN) never keeps it.
 */
export const PRIVATE_REVALIDATE = 'private, no-cache'
