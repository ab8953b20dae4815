import { randomFillSync } from 'node:crypto'
import type { FastifyBaseLogger, FastifyServerOptions, RawRequestDefaultExpression } from 'fastify'

/**
 * W3C Trace Context (docs/api.md#observability): a caller's `traceparent` is continued, else a trace starts;
 * the trace id is on every log line of the request, and each upstream call carries a
 * `traceparent` of that trace with a span id of its own. No OpenTelemetry is involved: it is text.
 */
export interface TraceContext {
  traceId: string
  /** The caller's trace flags (`01`: sampled); `00` for a trace started here. */
  flags: string
}

/** `version-traceid-parentid-flags`; a later version may append fields, version ff is invalid. */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/
const ZERO_TRACE = '0'.repeat(32)
const ZERO_SPAN = '0'.repeat(16)

/** Random bytes drawn 24 KiB at a time: an id costs a slice of the pool, not a call into OpenSSL. */
const pool = Buffer.alloc(24 * 1024)
let used = pool.length

function randomHex (bytes: 8 | 16): string {
  if (used + bytes > pool.length) {
    randomFillSync(pool)
    used = 0
  }
  used += bytes
  return pool.toString('hex', used - bytes, used)
}

/**
 * The trace a request belongs to, from its `traceparent` header when that is valid.
 * @internal Test seam: headers of every form are tested directly, without a request.
 */
export function traceContextOf (header: string | string[] | undefined): TraceContext {
  const match = typeof header === 'string' ? TRACEPARENT.exec(header.trim().toLowerCase()) : null
  if (match !== null) {
    type Parts = [string, string, string, string, string, string | undefined]
    const [, version, traceId, parentId, flags, rest] = match as unknown as Parts
    const valid =
      version !== 'ff' && !(version === '00' && rest !== undefined) && traceId !== ZERO_TRACE && parentId !== ZERO_SPAN
    if (valid) return { traceId, flags }
  }
  return { traceId: randomHex(16), flags: '00' }
}

/**
 * Fastify's `childLoggerFactory`: the request's logger, bound to its trace — `traceId` on every
 * line, framework lines included, and `traceFlags` when the caller's are not `00`. The bindings
 * are the one place the trace is kept, so nothing else is allocated per request.
 */
export const tracedChildLogger = tracedChildLoggerWith(undefined)

/**
 * The same, for a process that records spans: the trace is the one of the span active when the
 * request is created (the HTTP instrumentation's, which read the caller's `traceparent` too), so
 * log lines and exported spans carry one id.
 */
export function tracedChildLoggerWith (
  activeTrace: (() => TraceContext | undefined) | undefined
): NonNullable<FastifyServerOptions['childLoggerFactory']> {
  return function (logger, bindings, options, rawRequest) {
    const trace = activeTrace?.() ?? traceContextOf((rawRequest as RawRequestDefaultExpression).headers.traceparent)
    // Fastify makes `bindings` afresh for each request: adding to it saves a copy.
    bindings.traceId = trace.traceId
    if (trace.flags !== '00') bindings.traceFlags = trace.flags
    return logger.child(bindings, options)
  }
}

/** The trace a request's logger is bound to (pino keeps the bindings); `undefined` for another logger. */
function traceOf (log: FastifyBaseLogger): TraceContext | undefined {
  const bindings = (log as { bindings?: () => Record<string, unknown> }).bindings?.()
  const traceId = bindings?.traceId
  if (typeof traceId !== 'string') return undefined
  return { traceId, flags: typeof bindings?.traceFlags === 'string' ? bindings.traceFlags : '00' }
}

/**
 * The `traceparent` of one upstream call made for the request that owns `log`: its trace (a new
 * one for a logger without), and a span id for this call.
 */
export function upstreamTraceparent (log: FastifyBaseLogger): string {
  const trace = traceOf(log) ?? traceContextOf(undefined)
  return `00-${trace.traceId}-${randomHex(8)}-${trace.flags}`
}
