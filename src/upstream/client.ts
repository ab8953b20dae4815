import { Agent as HttpAgent } from 'node:http'
import { Agent as HttpsAgent } from 'node:https'
import got, { CancelError, RequestError, TimeoutError, type Got, type Method } from 'got'
import type { FastifyBaseLogger, FastifyReply } from 'fastify'
import { UpstreamTimeoutError, UpstreamUnavailableError } from '../errors.js'

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
export type QueryValue = string | number | boolean
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue }

export interface UpstreamRequest {
  method: HttpMethod
  /** A path the service built or validated (`relativeEndpoint`), relative to the upstream's base. */
  path: string
  query?: Record<string, QueryValue>
  json?: JsonValue
  headers?: Record<string, string>
  /** false: any body is accepted and ignored (reachability probes). */
  expectJson?: boolean
}

export interface UpstreamResponse {
  status: number
  /** The parsed JSON body; `undefined` when the upstream sent none. */
  body: JsonValue | undefined
  durationMs: number
}

export interface UpstreamClientOptions {
  /** Names the upstream in logs. */
  name: string
  baseUrl: string
  timeoutMs: number
  /** Bodies larger than this are refused (502) instead of buffered. */
  maxBodyBytes?: number
  log: FastifyBaseLogger
}

const DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024

/** Network errors that mean "the upstream is not there" (502), as opposed to a timeout (504). */
function isTimeout (error: unknown): boolean {
  return error instanceof TimeoutError || (error instanceof RequestError && error.code === 'ETIMEDOUT')
}

/**
 * One upstream over got 14: keep-alive agents, a timeout per request, redirects never
 * followed (got would hand `X-API-KEY` to the new host), at most one retry, of a GET, on a
 * connection reset. Every URL is built here from the configured base, and its origin and path
 * prefix are checked before sending. Failures become 502 or 504 here and nowhere else.
 */
export class UpstreamClient {
  readonly base: URL
  private readonly http: Got
  private readonly maxBodyBytes: number

  readonly log: FastifyBaseLogger

  constructor (private readonly options: UpstreamClientOptions) {
    this.log = options.log
    this.base = new URL(options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`)
    this.maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
    this.http = got.extend({
      agent: { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) },
      timeout: { request: options.timeoutMs },
      followRedirect: false,
      throwHttpErrors: false,
      responseType: 'text',
      // got computes 0 when it must not retry; otherwise retry at once rather than after its 1 s backoff.
      retry: { limit: 1, methods: ['GET'], statusCodes: [], errorCodes: ['ECONNRESET'], calculateDelay: ({ computedValue }) => computedValue === 0 ? 0 : 10 }
    })
  }

  /** The absolute URL of a path under the base; throws if it would leave the base. */
  url (path: string): URL {
    const url = new URL(path.replace(/^\/+/, ''), this.base)
    if (url.origin !== this.base.origin || !url.pathname.startsWith(this.base.pathname)) {
      throw new Error(`upstream path escapes ${this.options.name} base`)
    }
    return url
  }

  /** Reachability: any answer below 500 counts; failures are reported, not thrown. */
  async probe (path: string): Promise<{ reachable: boolean, durationMs: number }> {
    try {
      const response = await this.request({ method: 'GET', path, headers: { accept: 'application/json' }, expectJson: false })
      return { reachable: response.status < 500, durationMs: response.durationMs }
    } catch {
      return { reachable: false, durationMs: 0 }
    }
  }

  async request (request: UpstreamRequest): Promise<UpstreamResponse> {
    const url = this.url(request.path)
    const started = performance.now()
    const pending = this.http(url, {
      method: request.method as Method,
      searchParams: request.query,
      json: request.json,
      headers: request.headers
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
      const log = { upstream: this.options.name, method: request.method, path: url.pathname, code: (error as RequestError).code }
      if (error instanceof CancelError && tooLarge) {
        this.options.log.warn(log, 'upstream body over the size limit')
        throw new UpstreamUnavailableError()
      }
      if (isTimeout(error)) {
        this.options.log.warn(log, 'upstream timed out')
        throw new UpstreamTimeoutError()
      }
      this.options.log.warn(log, 'upstream unreachable')
      throw new UpstreamUnavailableError()
    }
    const durationMs = performance.now() - started
    const text = response.body
    if (text.length === 0 || request.expectJson === false) return { status: response.statusCode, body: undefined, durationMs }
    try {
      return { status: response.statusCode, body: JSON.parse(text) as JsonValue, durationMs }
    } catch {
      this.options.log.warn({ upstream: this.options.name, status: response.statusCode, path: url.pathname }, 'upstream answered with a body that is not JSON')
      throw new UpstreamUnavailableError()
    }
  }
}

const LOGGED_BODY_CHARACTERS = 2000

/**
 * The relay rule of CONTRACT §4: an upstream 2xx–4xx passes through; a 5xx becomes 502 and its
 * body (which may hold a debug trace) goes to the log only.
 */
export function passThrough (response: UpstreamResponse, log: FastifyBaseLogger, upstream: string): UpstreamResponse {
  if (response.status < 500) return response
  log.warn({ upstream, status: response.status, body: JSON.stringify(response.body ?? null).slice(0, LOGGED_BODY_CHARACTERS) }, 'upstream failed')
  throw new UpstreamUnavailableError()
}

/** Answers with the upstream's status and JSON body, as received (no body when it sent none). */
export function relayResponse (reply: FastifyReply, response: UpstreamResponse): FastifyReply {
  reply.code(response.status)
  return response.body === undefined ? reply.send() : reply.send(response.body)
}
