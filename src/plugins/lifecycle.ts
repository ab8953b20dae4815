import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * `draining` once shutdown began, so `/ready` tells the balancer to stop sending; `closing`
     * once the listener is closing, when every answer also closes its connection.
     */
    lifecycle: { draining: boolean, closing: boolean }
  }
}

async function lifecycle (app: FastifyInstance): Promise<void> {
  const state = { draining: false, closing: false }
  app.decorate('lifecycle', state)
  app.addHook('preClose', async () => {
    state.draining = true
    state.closing = true
  })
  // Once closing, every answer closes its connection — one that was in flight when closing
  // began too — so no keep-alive connection outlives the instance and the process is never
  // left waiting on one (Node honours the header and closes the socket after the answer).
  // Not during the readiness drain before it: a balancer without health checks (nginx) would
  // then open a new connection per request, and the last ones would meet the closing listener.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (state.closing) reply.header('connection', 'close')
    done(null, payload)
  })
}

export default fp(lifecycle, { name: 'bff-lifecycle', fastify: '5.x' })
