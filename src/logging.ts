import { randomUUID } from 'node:crypto'
import type { FastifyReply, FastifyRequest, FastifyServerOptions, RawRequestDefaultExpression } from 'fastify'

/** Credentials never reach a log line: headers, and token fields wherever they sit. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers["x-webhook-secret"]',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.token',
  '*.accessToken',
  '*.apiKey',
  '*.clientSecret',
  '*.password',
  '*.rawToken'
]

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** The caller's `x-request-id` when it is a sane token, else a new UUID (echoed back in the response). */
export function requestId (request: RawRequestDefaultExpression): string {
  const header = request.headers['x-request-id']
  return typeof header === 'string' && REQUEST_ID.test(header) ? header : randomUUID()
}

/** Server options for logs and request ids: pino JSON at `level`, redacted. */
export function loggingOptions (level: string, stream?: { write: (line: string) => void }): FastifyServerOptions {
  return {
    logger: { level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' }, ...(stream === undefined ? {} : { stream }) },
    genReqId: requestId,
    requestIdHeader: false
  }
}

/** onRequest hook: the request id goes back to the caller, so a frontend can quote it in a report. */
export function echoRequestId (request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  reply.header('x-request-id', request.id)
  done()
}
