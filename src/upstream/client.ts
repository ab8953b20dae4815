import { http, https } from '../http/node-http.js'
import type { Got, Method, RequestError } from 'got'
import { NO_TELEMETRY, type Telemetry, type UpstreamName } from '../observability/telemetry.js'
import { upstreamTraceparent } from '../observability/trace.js'
import type { FastifyBaseLogger } from 'fastify'
import { UpstreamTimeoutError, UpstreamUnavailableError } from '../errors.js'
import { failureExcerpt } from './failure-excerpt.js'

type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
export type QueryValue = string | number | boolean
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue }
export type JsonObject = { [key: string]: JsonValue }

export interface UpstreamRequest {
  method: HttpMethod
  /** A path the service built or validated (`relativeEndpoint`), relative to the upstream's base. */
  path: string
  query?: Record<string, QueryValue>
  json?: JsonValue
  headers?: Record<string, string>
  /** false: any body is accepted and ignored (reachability probes). */
  expectJson?: boolean
  /** The asking request's logger (`request.log`), so upstream lines carry its request id. */
  log: FastifyBaseLogger
}

export interface UpstreamResponse {
  /** 200–499: a 5xx never leaves {@link UpstreamClient.call}. */
  status: number
  /** The parsed JSON body; `undefined` when the upstream sent none, or a 4xx whose body is not JSON. */
  body: JsonValue | undefined
  durationMs: number
  /** The upstream's rate-limit headers (`Retry-After`, `RateLimit-*`), which a relay passes on. */
  rateLimitHeaders: Record<string, string>
}

/**
 * Headers that tell a caller when to come back, relayed with the answer that carries them.
 * `x-ratelimit-*` stay behind: on an answer of this service they describe its own limit.
 */
const RATE_LIMIT_HEADER = /^(retry-after|ratelimit(-[a-z]+)?)$/

export function rateLimitHeadersOf (headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const found: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (RATE_LIMIT_HEADER.test(name) && value !== undefined) {
      found[name] = Array.isArray(value) ? value.join(', ') : value
    }
  }
  return found
}

const HTTP_DATE = /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/

/**
 * Whole seconds an upstream's `Retry-After` asks for (delta-seconds, or an HTTP date from now);
 * `undefined` when it sent none or one that reads as neither.
 */
export function retryAfterSecondsOf (rateLimitHeaders: Record<string, string>, nowMs = Date.now()): number | undefined {
  const value = rateLimitHeaders['retry-after']?.trim() ?? ''
  if (/^\d{1,9}$/.test(value)) return Number(value)
  // The date form senders must use (RFC 9110's IMF-fixdate): Date.parse alone reads "1.5" as a date.
  const at = HTTP_DATE.test(value) ? Date.parse(value) : Number.NaN
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - nowMs) / 1000))
}

export interface UpstreamClientOptions {
  /** Names the upstream in logs and metrics. */
  name: UpstreamName
  baseUrl: string
  timeoutMs: number
  /** Bodies larger than this are refused (502) instead of buffered. */
  maxBodyBytes?: number
  /** Where each call's duration and outcome are reported. */
  telemetry?: Telemetry
}

export const DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024

type GotModule = typeof import('got')

/** got is loaded on the first upstream call: an instance that never relays does not carry it (start-up, memory). */
let gotModule: Promise<GotModule> | undefined
async function loadGot (): Promise<GotModule> {
  gotModule ??= import('got')
  return await gotModule
}

/** Network errors that mean "the upstream is not there" (502), as opposed to a timeout (504). */
function isTimeout ({ TimeoutError, RequestError }: GotModule, error: unknown): boolean {
  return error instanceof TimeoutError || (error instanceof RequestError && error.code === 'ETIMEDOUT')
}

/** A base URL that ends with `/`, so that relative paths resolve under it. */
export function baseUrlOf (baseUrl: string): URL {
  return new URL(baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`)
}

/** The absolute URL of `path` under `base`; throws if it would leave the base (origin or path prefix). */
export function urlUnder (base: URL, path: string, name: UpstreamName): URL {
  const url = new URL(path.replace(/^\/+/, ''), base)
  if (url.origin !== base.origin || !url.pathname.startsWith(base.pathname)) {
    throw new Error(`upstream path escapes ${name} base`)
  }
  return url
}

/** The body when it is a JSON object, else `undefined`. */
export function jsonObject (body: JsonValue | undefined): JsonObject | undefined {
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? body : undefined
}

/**
 * One upstream over got 14: keep-alive agents, a timeout per request, redirects never
 * followed (got would hand `X-API-KEY` to the new host), at most one retry, of a GET, on a
 * connection reset. Every URL is built here from the configured base, and its origin and path
 * prefix are checked before sending. {@link call} is the only way out, and applies docs/api.md#relays.
 * The service's own calls go this way; the pass-through relays go through {@link RelayClient}
 * (undici), several times cheaper per call (measured in relay.ts).
 */
export class UpstreamClient {
  readonly name: UpstreamName
  readonly base: URL
  /** Where its calls are reported, and what is built on it reports too (the brapi coin list's lookups). */
  readonly telemetry: Telemetry
  private http: Got | undefined
  private readonly maxBodyBytes: number
  private readonly timeoutMs: number

  constructor (options: UpstreamClientOptions) {
    this.name = options.name
    this.base = baseUrlOf(options.baseUrl)
    this.maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
    this.timeoutMs = options.timeoutMs
    this.telemetry = options.telemetry ?? NO_TELEMETRY
  }

  private client ({ default: got }: GotModule): Got {
    if (this.http !== undefined) return this.http
    // Keep-alive sockets reused most-recently-used first (a warm pool under load, idle ones time
    // out), up to 256 idle per upstream. No compression asked for: upstreams answer small JSON on
    // a fast network, and decompressing would add a stream per response.
    const agentOptions = { keepAlive: true, maxFreeSockets: 256, scheduling: 'lifo' as const }
    this.http = got.extend({
      agent: { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) },
      timeout: { request: this.timeoutMs },
      followRedirect: false,
      throwHttpErrors: false,
      decompress: false,
      responseType: 'text',
      // got computes 0 when it must not retry; otherwise retry at once rather than after its 1 s backoff.
      retry: {
        limit: 1,
        methods: ['GET'],
        statusCodes: [],
        errorCodes: ['ECONNRESET'],
        calculateDelay: ({ computedValue }) => (computedValue === 0 ? 0 : 10)
      }
    })
    return this.http
  }

  /** The absolute URL of a path under the base; throws if it would leave the base. */
  url (path: string): URL {
    return urlUnder(this.base, path, this.name)
  }

  /** Reachability: any answer below 500 counts; failures are reported, not thrown. */
  async probe (path: string, log: FastifyBaseLogger): Promise<{ reachable: boolean, durationMs: number }> {
    try {
      const response = await this.call({
        method: 'GET',
        path,
        headers: { accept: 'application/json' },
        expectJson: false,
        log
      })
      return { reachable: true, durationMs: response.durationMs }
    } catch {
      return { reachable: false, durationMs: 0 }
    }
  }

  /**
   * Sends one request and applies docs/api.md#relays in one place: a 2xx–4xx answer is returned as
   * received (a 4xx whose body is not JSON without its body); a 5xx (logged with its size and a
   * masked excerpt, never returned: it may hold a debug trace), a refused or reset connection, an
   * oversized body or a 2xx/3xx that is not JSON are 502; a timeout is 504.
   */
  async call (request: UpstreamRequest): Promise<UpstreamResponse> {
    const url = this.url(request.path)
    const log = request.log
    const got = await loadGot()
    const started = performance.now()
    const pending = this.client(got)(url, {
      method: request.method as Method,
      searchParams: request.query,
      json: request.json,
      headers: { ...request.headers, traceparent: upstreamTraceparent(log) }
    })
    let tooLarge = false
    pending.on('downloadProgress', progress => {
      if (progress.transferred > this.maxBodyBytes && !tooLarge) {
        tooLarge = true
        pending.cancel()
      }
    })
    let response
    try {
      response = await pending
    } catch (error) {
      const context = {
        upstream: this.name,
        method: request.method,
        path: url.pathname,
        code: (error as RequestError).code
      }
      const seconds = (performance.now() - started) / 1000
      if (error instanceof got.CancelError && tooLarge) {
        this.telemetry.upstream(this.name, '5xx', seconds)
        log.warn(context, 'upstream body over the size limit')
        throw new UpstreamUnavailableError()
      }
      if (isTimeout(got, error)) {
        this.telemetry.upstream(this.name, 'timeout', seconds)
        log.warn(context, 'upstream timed out')
        throw new UpstreamTimeoutError()
      }
      this.telemetry.upstream(this.name, 'refused', seconds)
      log.warn(context, 'upstream unreachable')
      throw new UpstreamUnavailableError()
    }
    const durationMs = performance.now() - started
    const status = response.statusCode
    const text = response.body
    this.telemetry.upstream(this.name, status >= 500 ? '5xx' : status >= 400 ? '4xx' : 'ok', durationMs / 1000)
    if (status >= 500) {
      // Its size and a short excerpt with secrets masked: a debug page may hold the upstream's.
      const failed = failureExcerpt(response.rawBody ?? text)
      log.warn({ upstream: this.name, method: request.method, path: url.pathname, status, ...failed },
        'upstream failed')
      throw new UpstreamUnavailableError()
    }
    const rateLimitHeaders = rateLimitHeadersOf(response.headers)
    if (text.length === 0 || request.expectJson === false) {
      return { status, body: undefined, durationMs, rateLimitHeaders }
    }
    try {
      return { status, body: JSON.parse(text) as JsonValue, durationMs, rateLimitHeaders }
    } catch {
      // A refusal's status says what happened (Pluggy's 429 can be plain text); a success must be JSON.
      if (status >= 400) return { status, body: undefined, durationMs, rateLimitHeaders }
      log.warn({ upstream: this.name, status, path: url.pathname }, 'upstream answered with a body that is not JSON')
      throw new UpstreamUnavailableError()
    }
  }
}
