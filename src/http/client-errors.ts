import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import type { ErrorCode } from '../errors.js'
import { NO_STORE } from './cache-control.js'

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

/** The raw answer to a client error: the standard error body, and the connection closed. */
export function clientErrorAnswer (errorCode: string | undefined, now = new Date()): string {
  const { status, code, message } = (errorCode === undefined ? undefined : CLIENT_ERRORS[errorCode]) ?? MALFORMED
  const body = JSON.stringify({
    statusCode: status,
    code,
    message,
    error: STATUS_CODES[status] ?? 'Error',
    timestamp: now.toISOString(),
    // No request was read whole, so there is no route to name.
    path: ''
  })
  return `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    `Cache-Control: ${NO_STORE}\r\n` +
    'Connection: close\r\n\r\n' +
    body
}

/**
 * Fastify's `clientErrorHandler`: a request Node could not read (malformed, headers over the
 * limit, or not whole within REQUEST_TIMEOUT_MS) is answered in the standard error body, as
 * every other error is, then its connection is closed. A reset connection needs no answer.
 */
export function answerClientError (this: FastifyInstance, error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  // A balancer's or client's fault, seldom the service's: logged quietly, as Fastify does.
  this.log.debug({ err: error }, 'client error')
  if (socket.writable) socket.write(clientErrorAnswer(error.code))
  socket.destroy(error)
}
