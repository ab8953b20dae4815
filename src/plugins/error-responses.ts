import { http } from '../http/node-http.js'
import type { Socket } from 'node:net'
import fp from 'fastify-plugin'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Type, type Static } from '@sinclair/typebox'
import {
  ERROR_CODES,
  errorCodeOf,
  isCodedError,
  isExpectedRefusal,
  isStoreUnavailable,
  Messages,
  UNSUPPORTED_MEDIA_TYPE_MESSAGE,
  type ErrorCode
} from '../errors.js'
import {
  MAX_REQUEST_TEXT_LENGTH,
  RelayedBodySchema,
  RelayedJsonSchema,
  RelayedTextSchema,
  StringEnum,
  Timestamp,
  UpstreamBodySchema
} from '../schemas/common.js'
import { NO_STORE } from '../http/cache-control.js'
import { validationMessages } from './validation-messages.js'

const { STATUS_CODES } = http

export { validationMessages }

/**
 * A phrase of an error: a fixed text, or a validation rule's wording that may name a parameter of
 * the request or its path (each at most MAX_REQUEST_TEXT_LENGTH); one per failed rule, fewer
 * rules than the request has characters.
 */
const ErrorPhrase = Type.String({ maxLength: 2 * MAX_REQUEST_TEXT_LENGTH })

/** The error body (docs/api.md#errors); `message` is an array only for validation failures. */
export const ErrorBodySchema = Type.Object({
  statusCode: Type.Integer({ minimum: 400, maximum: 599 }),
  code: StringEnum(ERROR_CODES),
  message: Type.Union([ErrorPhrase, Type.Array(ErrorPhrase, { maxItems: MAX_REQUEST_TEXT_LENGTH })]),
  error: Type.String({
    description: 'The status\'s reason phrase',
    maxLength: Math.max(...Object.values(STATUS_CODES).map(phrase => phrase?.length ?? 0))
  }),
  timestamp: Timestamp,
  path: Type.String({ maxLength: MAX_REQUEST_TEXT_LENGTH, description: 'The request\'s path, without its query' })
}, {
  title: 'ErrorBody',
  description: 'Error body of every error the service answers: statusCode, code (for programs), ' +
    'message (an array for validation failures), error, timestamp, path'
})
export type ErrorBody = Static<typeof ErrorBodySchema>

function errorBody (
  request: FastifyRequest,
  statusCode: number,
  code: ErrorCode,
  message: string | string[]
): ErrorBody {
  const queryStart = request.url.indexOf('?')
  return errorBodyAt(queryStart === -1 ? request.url : request.url.slice(0, queryStart), statusCode, code, message)
}

function errorBodyAt (
  path: string,
  statusCode: number,
  code: ErrorCode,
  message: string | string[],
  now = new Date()
): ErrorBody {
  return { statusCode, code, message, error: STATUS_CODES[statusCode] ?? 'Error', timestamp: now.toISOString(), path }
}

function statusOf (error: FastifyError): number {
  const status = error.statusCode
  return typeof status === 'number' && status >= 400 && status <= 599 ? status : 500
}

/**
 * The text for the caller: a 5xx of ours keeps its fixed message, any other says nothing of its
 * internals; Fastify's own 415 names the type sent, ours says what to send.
 */
function messageOf (error: FastifyError, status: number): string {
  if (status >= 500 && !isCodedError(error)) return Messages.internal
  return status === 415 ? UNSUPPORTED_MEDIA_TYPE_MESSAGE : error.message
}

/**
 * Fastify answers some errors before any route or hook runs (a bad `%` escape in the URL, a bad
 * Content-Type header); this server option gives them the standard body too.
 */
export function frameworkErrors (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const status = statusOf(error)
  const body = errorBody(request, status, errorCodeOf(error, status), messageOf(error, status))
  reply.code(status).header('cache-control', NO_STORE).send(body)
}

interface ClientError {
  status: number
  code: ErrorCode
  message: string
}

/** What Node reports before a request reaches Fastify, by Node's error code (docs/api.md#errors). */
const CLIENT_ERRORS: Record<string, ClientError> = {
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: 408,
    code: 'REQUEST_TIMEOUT',
    message: 'A requisição não chegou inteira dentro do tempo limite'
  },
  HPE_HEADER_OVERFLOW: { status: 431, code: 'BAD_REQUEST', message: 'Cabeçalhos da requisição grandes demais' }
}

const MALFORMED: ClientError = { status: 400, code: 'BAD_REQUEST', message: 'Requisição HTTP malformada' }

/**
 * The raw HTTP answer to a client error: the standard error body (no route, so `path` is empty), connection closed.
 * @internal Test seam: its bytes are tested directly, without a malformed request on a socket.
 */
export function clientErrorAnswer (errorCode: string | undefined, now = new Date()): string {
  const { status, code, message } = (errorCode === undefined ? undefined : CLIENT_ERRORS[errorCode]) ?? MALFORMED
  const body = JSON.stringify(errorBodyAt('', status, code, message, now))
  return `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    `Cache-Control: ${NO_STORE}\r\n` +
    'Connection: close\r\n\r\n' +
    body
}

/**
 * The server's `clientErrorHandler`: a request Node could not read (malformed, headers over the
 * limit, or not whole within REQUEST_TIMEOUT_MS) is answered in the standard error body too, then
 * its connection is closed. A reset connection needs no answer.
 */
export function answerClientError (this: FastifyInstance, error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  // A balancer's or client's fault, seldom the service's: logged quietly, as Fastify does.
  this.log.debug({ err: error }, 'client error')
  if (socket.writable) socket.write(clientErrorAnswer(error.code))
  socket.destroy(error)
}

/**
 * Answers any error in the standard body (docs/api.md#errors): the app's error handler, and a
 * module's fallback for errors it does not format itself.
 */
export function answerError (error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  // An error is the answer of one moment: no cache keeps it, whatever the route had set before it failed.
  reply.header('cache-control', NO_STORE)
  if (error.validation !== undefined) {
    const root = error.validationContext ?? 'body'
    // An id longer than any id names nothing — 404, without echoing it back (docs/api.md#inputs).
    if (root === 'params' && error.validation.some(issue => issue.keyword === 'maxLength')) {
      return reply.code(404).send({
        ...errorBody(request, 404, 'NOT_FOUND', 'Recurso não encontrado'),
        path: request.routeOptions.url ?? ''
      })
    }
    return reply
      .code(400)
      .send(errorBody(request, 400, 'VALIDATION_FAILED', validationMessages(error.validation, root)))
  }
  const status = statusOf(error)
  const retryAfter = (error as { retryAfterSeconds?: unknown }).retryAfterSeconds
  if (typeof retryAfter === 'number') reply.header('retry-after', String(retryAfter))
  if (status >= 500 && !isCodedError(error)) {
    request.log.error({ err: error }, 'unhandled error')
    return reply.code(status).send(errorBody(request, status, 'INTERNAL_ERROR', Messages.internal))
  }
  // The store's outage is logged once by the store, not once per request it fails; a refusal the
  // service makes on purpose (draining, shedding) is no news and has no stack worth reading.
  if (isExpectedRefusal(error)) request.log.debug({ code: error.code, statusCode: status }, error.message)
  else if (status >= 500 && !isStoreUnavailable(error)) request.log.warn({ err: error }, error.message)
  return reply.code(status).send(errorBody(request, status, errorCodeOf(error, status), messageOf(error, status)))
}

/** An unknown route: 404 in the standard body. */
function answerNotFound (request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const path = request.url.split('?')[0]
  const body = errorBody(request, 404, 'NOT_FOUND', `Cannot ${request.method} ${path}`)
  return reply.code(404).header('cache-control', NO_STORE).send(body)
}

const NAME = 'bff-error-responses'

/**
 * The one error handler and not-found handler of the app: every error leaves in the standard body,
 * with `Cache-Control: no-store`.
 */
export default fp(async app => {
  app.setErrorHandler(answerError)
  app.setNotFoundHandler(answerNotFound)
}, { name: NAME, fastify: '5.x' })

/** The prefixes a module already answers unknown paths under, by app (its server: every scope's). */
const notFoundPrefixes = new WeakMap<object, Set<string>>()

/**
 * Gives a module's scope the error handler, and the not-found handler for the paths under its
 * prefix when it has one of its own (without, the not-found handler would be the host's whole
 * app's), unless the app has both at its root already. Modules mounted under one prefix (the
 * portfolios and their valuation) share the first one's: Fastify takes one per prefix.
 */
export function ensureErrorResponses (app: FastifyInstance, options: { ownPrefix: boolean }): void {
  if (app.hasPlugin(NAME)) return
  app.setErrorHandler(answerError)
  if (!options.ownPrefix) return
  const prefixes = notFoundPrefixes.get(app.server) ?? new Set<string>()
  notFoundPrefixes.set(app.server, prefixes)
  if (prefixes.has(app.prefix)) return
  prefixes.add(app.prefix)
  app.setNotFoundHandler(answerNotFound)
}

/**
 * The error body as a route's response schema: the same fields, none enforced, extra ones
 * kept, so that what a host's own hooks send with these statuses on a module's route still
 * serializes in the host's format (a strict schema would fail to).
 */
const ErrorResponseSchema = Type.Partial(ErrorBodySchema, { additionalProperties: true })

/**
 * The same at run time, for an error status of a relay route that the upstream may answer too:
 * the service's own errors are serialized with it, a relayed answer is sent as the upstream's
 * bytes (see relayResponse). Its own object, so that the document can show both shapes.
 */
const RelayedErrorResponseSchema = Type.Partial(ErrorBodySchema, { additionalProperties: true })

/** A response of the OpenAPI document (an error status's answer, or a relay's) by media type. */
function documentedContent (description: string, json: unknown, other?: unknown): unknown {
  const content = { 'application/json': { schema: json } }
  return { description, content: other === undefined ? content : { ...content, '*/*': { schema: other } } }
}

const RELAYED = 'The upstream\'s own answer with this status, relayed byte for byte'

/**
 * The OpenAPI document shows the body the service itself answers, every field present; on a
 * relay route, for a status both may answer, that body or the upstream's (a JSON object, or for
 * an error status any other content). A relayed answer has a named type in every case, so that
 * client generators type it (docs/api.md#relays).
 */
export function documentedResponseSchema (status: string, schema: unknown): unknown {
  if (schema === RelayedErrorResponseSchema) {
    return documentedContent(RELAYED, { anyOf: [ErrorBodySchema, RelayedBodySchema] }, RelayedTextSchema)
  }
  if (schema === UpstreamBodySchema) {
    return status.startsWith('4')
      ? documentedContent(RELAYED, RelayedBodySchema, RelayedTextSchema)
      : documentedContent(RELAYED, RelayedJsonSchema)
  }
  return schema === ErrorResponseSchema ? ErrorBodySchema : schema
}

/** Response schemas for the error statuses a route can answer with. */
export function errorSchemas<const Code extends number> (...codes: Code[]): Record<Code, typeof ErrorResponseSchema> {
  return Object.fromEntries(codes.map(code => [code, ErrorResponseSchema])) as Record<Code, typeof ErrorResponseSchema>
}

/** Response schemas for the error statuses a relay route answers itself and also relays from its upstream. */
export function relayedErrorSchemas<const Code extends number> (
  ...codes: Code[]
): Record<Code, typeof ErrorResponseSchema> {
  const entries = codes.map(code => [code, RelayedErrorResponseSchema])
  return Object.fromEntries(entries) as Record<Code, typeof ErrorResponseSchema>
}
