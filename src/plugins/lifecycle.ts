import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'

declare module 'fastify' {
  interface FastifyInstance {
    /** Readiness state: `draining` once shutdown began, so `/ready` tells the balancer to stop sending. */
    lifecycle: { draining: boolean }
  }
}

async function lifecycle (app: FastifyInstance): Promise<void> {
  const state = { draining: false }
  app.decorate('lifecycle', state)
  app.addHook('preClose', async () => { state.draining = true })
}

export default fp(lifecycle, { name: 'bff-lifecycle', fastify: '5.x' })
