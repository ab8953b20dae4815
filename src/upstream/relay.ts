import type { FastifyBaseLogger, FastifyReply } from 'fastify'
import type { Span, SpanKind, SpanStatusCode, Tracer } from '@opentelemetry/api'
import type { Dispatcher, Pool } from 'undici'
import { UpstreamTimeoutError, UpstreamUnavailableError } from '../errors.js'
import { NO_TELEMETRY, type Telemetry, type UpstreamName, type UpstreamOutcome } from '../observability/telemetry.js'
import { upstreamTraceparent } from '../observability/trace.js'
import { failureExcerpt } from './failure-excerpt.js'
import {
  baseUrlOf,
  DEFAULT_MAX_BODY_BYTES,
  rateLimitHeadersOf,
  urlUnder,
  type JsonValue,
  type UpstreamClientOptions,
  type UpstreamRequest
} from './client.js'

// The API's enum values, so that a relay without span export never loads OpenTelemetry.
const CLIENT_SPAN = 2 as SpanKind.CLIENT
const ERROR_STATUS = 2 as SpanStatusCode.ERROR

/** What a relay hands on: the upstream's status and body bytes, as received. */
export interface RelayedResponse {
  /** 200–499: a 5xx never leaves {@link RelayClient.call}. */
  status: number
  /** The body's bytes as received; empty when the upstream sent none. */
  raw: Buffer
  /**
   * A JSON body: the upstream's content type when it names JSON (`application/json; charset=utf-8`…),
   * else `application/json`. A 4xx that is not JSON: the upstream's own (`application/octet-stream` if none).
   */
  contentType: string
  /** The same body parsed; `undefined` when there was none, or for a 4xx whose body is not JSON. */
  body: JsonValue | undefined
  durationMs: number
  /** The upstream's rate-limit headers (`Retry-After`, `RateLimit-*`), which a relay passes on. */
  rateLimitHeaders: Record<string, string>
}

export interface RelayClientOptions extends UpstreamClientOptions {
  /** With span export on: a CLIENT span per call, whose context the upstream receives as `traceparent`. */
  tracer?: Tracer
}

type Undici = typeof import('undici')

/** undici is loaded on the first relay: an instance that never relays does not carry it. */
let undiciModule: Promise<Undici> | undefined
async function loadUndici (): Promise<Undici> {
  undiciModule ??= import('undici')
  return await undiciModule
}

/** A connection reset or closed by the upstream before it answered: a GET may be sent once more. */
const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET'])
const TIMEOUT_CODES = new Set([
  'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT', 'ETIMEDOUT'
])
const TOO_LARGE_CODE = 'UND_ERR_RES_EXCEEDED_MAX_SIZE'
const JSON_TYPE = /^application\/([\w.+-]+\+)?json\b/i
/** The policy of a relayed body that is not JSON: nothing in it loads, runs or submits, and no page frames it. */
const NOT_JSON_POLICY = "default-src 'none'; frame-ancestors 'none'; sandbox"

function codeOf (error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : undefined
}

/** One header value (undici gives repeated headers as arrays). */
function headerOf (headers: Dispatcher.ResponseData['headers'], name: string): string | undefined {
  const value = headers[name]
  return Array.isArray(value) ? value[0] : value
}

/** Outcome of a call that threw: why, in the words of the metrics. */
type Failure = 'timeout' | 'too-large' | 'refused'

/**
 * The pass-through relays' way upstream, over an undici `Pool` per upstream origin (keep-alive
 * connections, at most 256): several times cheaper per call than got, which the service keeps
 * for its own calls (`bench/relay.ts`, one core, a no-op upstream, 10 in flight: got 4 235–5 334
 * calls/s at 147–157 µs of CPU a call, undici's `Pool` 10 669–19 936 at 35–39 µs; BENCHMARKS.md).
 * The same rules as {@link UpstreamClient.call}: URLs built from the configured base and checked,
 * a timeout over the whole call (504), redirects never followed (undici does not), a 5xx, refused
 * or reset connection, a body over the size limit, a 2xx/3xx that is not JSON are 502 (a 4xx
 * passes whatever its body), one immediate retry of a GET whose connection was reset before it was
 * answered.
 */
export class RelayClient {
  readonly name: UpstreamName
  readonly base: URL
  private readonly telemetry: Telemetry
  private readonly maxBodyBytes: number
  private readonly timeoutMs: number
  private readonly tracer: Tracer | undefined
  private pool: Pool | undefined
  private opening: Promise<Pool> | undefined
  private closed = false

  constructor (options: RelayClientOptions) {
    this.name = options.name
    this.base = baseUrlOf(options.baseUrl)
    this.maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
    this.timeoutMs = options.timeoutMs
    this.telemetry = options.telemetry ?? NO_TELEMETRY
    this.tracer = options.tracer
  }

  /** The pool, made on the first call. */
  private async open (): Promise<Pool> {
    this.opening ??= loadUndici().then(({ Pool }) => {
      this.pool = new Pool(this.base.origin, {
        connections: 256,
        keepAliveTimeout: 10_000,
        // Backstops: the deadline of each call is enforced by its own timer.
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
        maxResponseSize: this.maxBodyBytes
      })
      if (this.closed) this.pool.close()
      return this.pool
    })
    return await this.opening
  }

  /** Closes the pool once the calls in flight are over (the app's `onClose`). */
  async close (): Promise<void> {
    this.closed = true
    const pool = this.pool ?? await this.opening
    await pool?.close()
  }

  /** Sends one request; see the class for what comes back and what is thrown. */
  async call (request: UpstreamRequest): Promise<RelayedResponse> {
    const url = urlUnder(this.base, request.path, this.name)
    for (const [key, value] of Object.entries(request.query ?? {})) url.searchParams.append(key, String(value))
    const pool = this.pool ?? await this.open()
    const { log, method } = request
    const started = performance.now()
    const span = this.tracer?.startSpan(method, {
      kind: CLIENT_SPAN,
      attributes: {
        'http.request.method': method,
        'server.address': url.hostname,
        'url.full': `${url.origin}${url.pathname}`
      }
    })
    const traceparent = span === undefined ? upstreamTraceparent(log) : traceparentOf(span)
    const headers: Record<string, string> = { ...request.headers, traceparent }
    let body: string | undefined
    if (request.json !== undefined) {
      body = JSON.stringify(request.json)
      headers['content-type'] = 'application/json'
    }
    const deadline = new AbortController()
    let timedOut = false
    const timer = setTimeout(() => { timedOut = true; deadline.abort() }, this.timeoutMs)
    const path = `${url.pathname}${url.search}`
    const options: Dispatcher.RequestOptions = { path, method, headers, body, signal: deadline.signal }
    let status: number
    let raw: Buffer
    let answer: Dispatcher.ResponseData
    try {
      try {
        answer = await pool.request(options)
      } catch (error) {
        if (method !== 'GET' || timedOut || !RESET_CODES.has(codeOf(error) ?? '')) throw error
        answer = await pool.request(options)
      }
      status = answer.statusCode
      raw = Buffer.from(await answer.body.arrayBuffer())
    } catch (error) {
      const code = codeOf(error)
      const failure: Failure = timedOut || TIMEOUT_CODES.has(code ?? '')
        ? 'timeout'
        : code === TOO_LARGE_CODE ? 'too-large' : 'refused'
      throw this.failed(failure, { method, path: url.pathname, code }, started, request.log, span)
    } finally {
      clearTimeout(timer)
    }
    const durationMs = performance.now() - started
    const outcome: UpstreamOutcome = status >= 500 ? '5xx' : status >= 400 ? '4xx' : 'ok'
    this.telemetry.upstream(this.name, outcome, durationMs / 1000)
    span?.setAttribute('http.response.status_code', status)
    if (status >= 500) {
      span?.setStatus({ code: ERROR_STATUS })
      span?.end()
      log.warn({ upstream: this.name, method, path: url.pathname, status, ...failureExcerpt(raw) }, 'upstream failed')
      throw new UpstreamUnavailableError()
    }
    span?.end()
    const rateLimitHeaders = rateLimitHeadersOf(answer.headers)
    const type = headerOf(answer.headers, 'content-type')
    const contentType = type !== undefined && JSON_TYPE.test(type) ? type : 'application/json'
    if (raw.length === 0) return { status, raw, contentType, body: undefined, durationMs, rateLimitHeaders }
    try {
      const parsed = JSON.parse(raw.toString('utf8')) as JsonValue
      return { status, raw, contentType, body: parsed, durationMs, rateLimitHeaders }
    } catch {
      // A refusal passes as it came (Pluggy answers a 429 in plain text); a success must be JSON.
      if (status >= 400) {
        const received = type ?? 'application/octet-stream'
        return { status, raw, contentType: received, body: undefined, durationMs, rateLimitHeaders }
      }
      log.warn({ upstream: this.name, status, path: url.pathname }, 'upstream answered with a body that is not JSON')
      throw new UpstreamUnavailableError()
    }
  }

  /** Reports a call that threw and returns what the caller gets: 504 for a timeout, else 502. */
  private failed (
    failure: Failure, context: Record<string, unknown>, started: number, log: FastifyBaseLogger, span: Span | undefined
  ): Error {
    const seconds = (performance.now() - started) / 1000
    span?.setStatus({ code: ERROR_STATUS })
    span?.end()
    const logged = { upstream: this.name, ...context }
    if (failure === 'timeout') {
      this.telemetry.upstream(this.name, 'timeout', seconds)
      log.warn(logged, 'upstream timed out')
      return new UpstreamTimeoutError()
    }
    // An oversized body counts as a failed answer (5xx), as it does on the got path.
    this.telemetry.upstream(this.name, failure === 'too-large' ? '5xx' : 'refused', seconds)
    log.warn(logged, failure === 'too-large' ? 'upstream body over the size limit' : 'upstream unreachable')
    return new UpstreamUnavailableError()
  }
}

/** The `traceparent` that makes `span` the parent of the upstream's own spans. */
function traceparentOf (span: Span): string {
  const { traceId, spanId, traceFlags } = span.spanContext()
  return `00-${traceId}-${spanId}-${(traceFlags & 1) === 1 ? '01' : '00'}`
}

/**
 * Answers with the upstream's status and body bytes, as received (no body when it sent none),
 * with its content type and rate-limit headers. A Buffer skips the route's response
 * serializer: whatever the schema says for this status (an error status the service also
 * answers itself has the ErrorBody schema), the caller gets the upstream's own bytes.
 *
 * Never the upstream's `Cache-Control`: it answered the caller's own credential, and what it
 * allows (say `public`) would let a shared cache in front of the service hand one user's data to
 * another. No cache keeps a relayed answer (sensible's preventCache; docs/api.md#caching).
 */
export function relayResponse (reply: FastifyReply, response: RelayedResponse): FastifyReply {
  reply.code(response.status).headers(response.rateLimitHeaders).preventCache()
  if (response.raw.length === 0) return reply.send()
  // Bytes that are not JSON (a 4xx's text or page): a browser that opened them could run nothing.
  if (response.body === undefined) reply.header('content-security-policy', NOT_JSON_POLICY)
  return reply.header('content-type', response.contentType).send(response.raw)
}
