import type { FastifyBaseLogger } from 'fastify'
import { GraphQLError } from 'graphql'
import WebSocket from 'ws'
import { formatGraphqlError } from './errors.js'

/** Messages that start an operation: `subscribe` (graphql-transport-ws) and `start` (the older graphql-ws). */
const STARTS = new Set(['subscribe', 'start'])

/**
 * The WebSocket of a subscription connection, whose operations' documents are checked by
 * `check` (the limits of `limits.ts`) before Mercurius parses them — it parses a subscription's
 * text with none of its HTTP options. A document `check` refuses gets an `error` message for
 * its operation id, as any refused operation does, and never reaches Mercurius; the
 * connection stays open.
 */
export function guardedWebSocket (check: (source: string) => void, log: FastifyBaseLogger): typeof WebSocket {
  return class GuardedWebSocket extends WebSocket {
    override emit (event: string | symbol, ...args: unknown[]): boolean {
      if (event === 'message' && refused(this, args[0], check, log)) return true
      return super.emit(event, ...args)
    }
  }
}

function refused (socket: WebSocket, data: unknown, check: (source: string) => void, log: FastifyBaseLogger): boolean {
  let message: { id?: unknown, type?: unknown, payload?: { query?: unknown } } | null
  try {
    message = JSON.parse(String(data)) as typeof message
  } catch {
    // Mercurius answers a message that is not JSON itself.
    return false
  }
  const query = message?.payload?.query
  if (!STARTS.has(message?.type as string) || typeof query !== 'string') return false
  try {
    check(query)
    return false
  } catch (error) {
    if (!(error instanceof GraphQLError)) throw error
    socket.send(JSON.stringify({ type: 'error', id: message?.id, payload: [formatGraphqlError(error, log)] }))
    return true
  }
}
