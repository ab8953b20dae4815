import type { FastifyPluginAsync } from 'fastify'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import sse, { type SSEPluginOptions } from '@fastify/sse'
import { reusableModule } from '../../plugins/reusable-module.js'
import { ensureDomain } from '../../plugins/domain.js'
import { errorSchemas } from '../../plugins/error-responses.js'
import { documentPortfolioRoutes } from '../../plugins/openapi.js'
import { operationRoutes } from '../../plugins/operation-routes.js'
import { portfolioValuationOperations } from '../../operations/portfolio-valuation.js'
import { IdParamsSchema } from '../../schemas/common.js'
import { PortfolioValuationStreamEventSchema, type PortfolioValuationStreamEvent } from '../../schemas/valuation.js'

/** A comment line at least this often keeps proxies and browsers from taking a quiet stream for a dead one. */
const HEARTBEAT_MS = 15_000

/** The first `id:` of a stream: one more than the `Last-Event-ID` a reconnecting EventSource sends, else 1. */
function firstEventId (lastEventId: string | undefined): number {
  const last = Number(lastEventId)
  return Number.isSafeInteger(last) && last >= 0 ? last + 1 : 1
}

/**
 * What a portfolio is worth at market prices, mounted beside the portfolios module under the same
 * prefix (`/portfolios/:id/…`) and behind the same credential (PORTFOLIO_ACCESS): its performance
 * over a range (docs/api.md#performance) and its valuation (docs/api.md#valuation), on request and
 * live as Server-Sent Events (@fastify/sse, registered here: its hooks stay in this module). The
 * routes on request are declared in src/operations/portfolio-valuation.ts; the stream is written
 * here, its GraphQL twin (`portfolioValuation`) declared there. These read quotes and follow the
 * change feed; the portfolios module, which reads neither, is reusable without them. The stream is
 * checked like any request before it starts — 401, 404 and 429 answer the error body — then sends
 * `event: valuation` messages with increasing ids, `event: deleted` when the portfolio goes (and
 * ends), a comment every 15 s, and ends when the instance shuts down.
 */
const portfolioValuationModule: FastifyPluginAsyncTypebox = async app => {
  // The stream's credential; the declared routes document their own, the same.
  app.addHook('onRoute', documentPortfolioRoutes('portfolios', app.portfolioAccess))
  await ensureDomain(app)
  // The package's default export is its fp-wrapped plugin; its typings name the module instead.
  await app.register(sse as unknown as FastifyPluginAsync<SSEPluginOptions>, { heartbeatInterval: HEARTBEAT_MS })
  // Before the stream: the OpenAPI document lists paths in the order they are registered.
  operationRoutes(app, portfolioValuationOperations)
  const { liveValuations } = app.domain

  app.get('/:id/valuation/stream', {
    sse: { kind: 'manual' },
    config: { longLived: true },
    onRequest: app.verifyPortfolioAccess,
    // A HEAD would open a stream whose body is never sent.
    exposeHeadRoute: false,
    schema: {
      operationId: 'streamPortfolioValuation',
      summary: 'A portfolio\'s valuation, live (Server-Sent Events)',
      description: 'text/event-stream: `event: valuation` with the PortfolioValuation as `data` at once, ' +
        'then on each change (at most one per VALUATION_MIN_INTERVAL_MS); `event: deleted` when the portfolio ' +
        'is deleted, then the end; a comment line at least every 15 s. ' +
        '429 past VALUATION_STREAMS_PER_CREDENTIAL open streams.',
      params: IdParamsSchema,
      response: {
        200: {
          description: 'The stream of valuations',
          content: { 'text/event-stream': { schema: PortfolioValuationStreamEventSchema } }
        },
        ...errorSchemas(400, 401, 404)
      }
    }
  }, async (request, reply) => {
    const stream = await liveValuations.open(request.access, request.params.id)
    const opened = Date.now()
    let id = firstEventId(request.headers['last-event-id'] as string | undefined)
    let messages = 0
    reply.sse.keepAlive()
    reply.sse.onClose(() => { stream.return?.().catch(() => {}) })
    try {
      for await (const event of stream) {
        // Each message as its schema in the OpenAPI document says it (PortfolioValuationStreamEvent).
        const message: PortfolioValuationStreamEvent = event.kind === 'valuation'
          ? { id: String(id++), event: 'valuation', data: event.valuation }
          : { id: String(id++), event: 'deleted', data: { portfolioId: event.portfolioId } }
        await reply.sse.send(message)
        messages++
      }
    } catch {
      // The client went away while a message was being written: the stream ended with it.
    }
    const endedBy = reply.sse.isConnected ? 'service' : 'client'
    const line = { portfolioId: request.params.id, messages, durationMs: Date.now() - opened, endedBy }
    request.log.info(line, 'valuation stream ended')
    reply.sse.close()
  })
}

export default reusableModule(portfolioValuationModule, {
  name: 'bff-portfolio-valuation',
  fastify: '5.x',
  dependencies: ['bff-auth', 'bff-store', 'bff-quotes', 'bff-change-feed'],
  decorators: { fastify: ['verifyPortfolioAccess', 'portfolioAccess', 'store', 'quotes', 'changeFeed'] }
})
