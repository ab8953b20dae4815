import { randomUUID } from 'node:crypto'
import { standardOutputLines } from './log-destination.js'
import {
  LogController,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
  type RawRequestDefaultExpression
} from 'fastify'

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** The caller's `x-request-id` when it is a sane token, else a new UUID (echoed back in the response). */
export function requestId (request: RawRequestDefaultExpression): string {
  const header = request.headers['x-request-id']
  return typeof header === 'string' && REQUEST_ID.test(header) ? header : randomUUID()
}

/** Query parameters whose values are credentials wherever they appear (they are refused, but still logged). */
const SENSITIVE_PARAMETER = /token|key|secret|password|passwd|auth|signature|session|cookie|jwt/i

/** The URL as logged: the values of credential-like query parameters replaced (OWASP API8). */
function loggableUrl (url: string): string {
  const query = url.indexOf('?')
  if (query === -1) return url
  const pairs = url.slice(query + 1).split('&').map(pair => {
    const equals = pair.indexOf('=')
    const name = equals === -1 ? pair : pair.slice(0, equals)
    return equals !== -1 && SENSITIVE_PARAMETER.test(safeDecode(name)) ? `${name}=[redacted]` : pair
  })
  return `${url.slice(0, query)}?${pairs.join('&')}`
}

function safeDecode (text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

interface LoggedError { [key: string]: unknown, type: string, message: string, stack: string }

/**
 * What a log line may hold of a request, a reply and an error. Serializers pick fields, so
 * credentials (headers, bodies, a got error's request options) can never reach a line; no
 * wildcard redaction runs on every line.
 */
const logSerializers = {
  req: (request: FastifyRequest) => ({
    method: request.method,
    url: loggableUrl(request.url),
    remoteAddress: request.ip
  }),
  res: (reply: { statusCode: number }) => ({ statusCode: reply.statusCode }),
  err: (error: Error & { code?: unknown, statusCode?: unknown }): LoggedError => ({
    type: error.name,
    message: error.message,
    stack: error.stack ?? '',
    code: error.code,
    statusCode: error.statusCode
  })
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * `true`: a probe's route (`/ready`, `/auth/health`), asked every few seconds by a balancer or
     * an orchestrator: its access line is at `debug`, so the log at `info` holds the traffic.
     */
    probe?: boolean
  }
}

/**
 * Fastify's request logging with one line per request instead of two ("incoming request" is
 * dropped): method, URL (credentials masked), status and time, at `info` (`debug` for a probe's
 * route), or at `error` with the error when the response failed.
 */
class AccessLog extends LogController {
  override incomingRequest (): void {}

  override requestCompleted (error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const line = {
      method: request.method,
      url: loggableUrl(request.url),
      statusCode: reply.statusCode,
      responseTime: reply.elapsedTime
    }
    if (error !== null && error !== undefined) request.log.error({ ...line, err: error }, 'request errored')
    else if (request.routeOptions.config.probe === true) request.log.debug(line, 'request completed')
    else request.log.info(line, 'request completed')
  }
}

/**
 * Server options for logs: pino JSON at `level`, through an asynchronous
 * buffered destination (flushed on exit) unless a stream is given, one access line per request.
 */
export function loggingOptions (level: string, stream?: { write: (line: string) => void }): FastifyServerOptions {
  return {
    logger: {
      level,
      serializers: logSerializers,
      // Asynchronous: a turn's lines go out together when the previous write finished.
      stream: stream ?? standardOutputLines()
    },
    logController: new AccessLog()
  }
}

/** onRequest hook: the request id goes back to the caller, so a frontend can quote it in a report. */
export function echoRequestId (request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  reply.header('x-request-id', request.id)
  done()
}
