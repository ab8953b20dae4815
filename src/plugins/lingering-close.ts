import { Socket } from 'node:net'
import type { IncomingMessage } from 'node:http'
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'

interface LingeringCloseOptions {
  /** The longest a closing connection keeps reading what its client still sends. */
  lingerMs?: number
  /** The most it reads (and drops) so. */
  lingerBytes?: number
}

const DEFAULT_LINGER_MS = 5000
const DEFAULT_LINGER_BYTES = 8 * 1024 * 1024
/** How often a lingering connection checks whether the body is over or a bound is reached. */
const CHECK_MS = 50

/**
 * Closes `socket` as nginx's lingering close does: the answer is complete, so the sending side is
 * closed (FIN after the answer), then what the client still sends is read and dropped until its
 * request is complete, `lingerBytes` were read or `lingerMs` passed; only then is the socket
 * destroyed. Closing at once, with the client's bytes arriving, makes the kernel answer them with
 * a reset, and a client still writing its body often loses the answer it had not read yet.
 */
function linger (socket: Socket, request: IncomingMessage, lingerMs: number, lingerBytes: number): void {
  socket.end()
  // The body's remaining bytes flow and are dropped (nothing listens for them).
  request.resume()
  const start = socket.bytesRead
  const until = Date.now() + lingerMs
  const check = setInterval(() => {
    if (request.complete || socket.destroyed || socket.bytesRead - start > lingerBytes || Date.now() >= until) {
      clearInterval(check)
      socket.destroy()
    }
  }, CHECK_MS)
  check.unref()
  socket.once('close', () => { clearInterval(check) })
}

/**
 * An answer sent before its request's body arrived carries `Connection: close` when Fastify's body
 * reading failed (413 over the body limit: the client may still be sending) or the instance is
 * closing. Node would then close the socket as soon as the answer is written; here the connection
 * lingers instead, so a client still sending its body reads the answer. (Other early answers, a
 * 401 or a 415, keep the connection: Node reads and drops the rest of their body itself.)
 */
async function lingeringClose (app: FastifyInstance, options: LingeringCloseOptions): Promise<void> {
  const lingerMs = options.lingerMs ?? DEFAULT_LINGER_MS
  const lingerBytes = options.lingerBytes ?? DEFAULT_LINGER_BYTES
  app.addHook('onSend', (request, reply, payload, done) => {
    const raw = request.raw
    const socket = raw.socket
    // Injected requests have no socket of their own; a complete body leaves nothing to drain.
    if (!raw.complete && socket instanceof Socket && reply.getHeader('connection') === 'close') {
      // Node ends a `Connection: close` answer with `socket.destroySoon()`: linger there instead
      // (a body that arrived meanwhile ends the lingering at its first check).
      socket.destroySoon = () => { linger(socket, raw, lingerMs, lingerBytes) }
    }
    done(null, payload)
  })
}

export default fp(lingeringClose, { name: 'bff-lingering-close', fastify: '5.x' })
