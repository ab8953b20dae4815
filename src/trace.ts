import { randomUUID } from 'node:crypto'
import type { FastifyBaseLogger, FastifyServerOptions, RawRequestDefaultExpression } from 'fastify'

/**
 * W3C Trace Context (CONTRACT §15): a caller's `traceparent` is continued, else a trace starts;
 * the trace id is in every log line of the request, and each upstream call carries a
 * `traceparent` whose parent is this request's span. No OpenTelemetry is involved: it is text.
 */
export interface TraceContext {
  traceId: string
  /** This request's span. */
  spanId: string
  /** The caller's trace flags (`01`: sampled); `00` for a trace started here. */
  flags: string
}

/** `version-traceid-parentid-flags`; a later version may append fields, version ff is invalid. */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/
const ZERO_TRACE = '0'.repeat(32)
const ZERO_SPAN = '0'.repeat(16)

function randomHex (length: 16 | 32): string {
  // randomUUID draws from a cached entropy pool: far cheaper per call than randomBytes.
  const hex = randomUUID().replaceAll('-', '')
  return length === 32 ? hex : hex.slice(0, 16)
}

/** The trace a request belongs to, from its `traceparent` header when that is valid. */
export function traceContextOf (header: string | string[] | undefined): TraceContext {
  const match = typeof header === 'string' ? TRACEPARENT.exec(header.trim().toLowerCase()) : null
  if (match !== null) {
    const [, version, traceId, parentId, flags, rest] = match as unknown as [string, string, string, string, string, string | undefined]
    const valid = version !== 'ff' && !(version === '00' && rest !== undefined) && traceId !== ZERO_TRACE && parentId !== ZERO_SPAN
    if (valid) return { traceId, spanId: randomHex(16), flags }
  }
  return { traceId: randomHex(32), spanId: randomHex(16), flags: '00' }
}

/** The trace of each request's logger: upstream calls receive the logger, so they find it here. */
const traces = new WeakMap<object, TraceContext>()

/**
 * Fastify's `childLoggerFactory`: the request's logger, bound to its trace (`traceId`, `spanId`
 * on every line, framework lines included).
 */
export const tracedChildLogger: NonNullable<FastifyServerOptions['childLoggerFactory']> = function (logger, bindings, options, rawRequest) {
  const trace = traceContextOf((rawRequest as RawRequestDefaultExpression).headers.traceparent)
  const child = logger.child({ ...bindings, traceId: trace.traceId, spanId: trace.spanId }, options)
  traces.set(child, trace)
  return child
}

export function traceOf (log: FastifyBaseLogger): TraceContext | undefined {
  return traces.get(log)
}

/** The `traceparent` of an upstream call made for the request that owns `log` (a new trace without one). */
export function upstreamTraceparent (log: FastifyBaseLogger): string {
  const trace = traces.get(log) ?? traceContextOf(undefined)
  return `00-${trace.traceId}-${trace.spanId}-${trace.flags}`
}
