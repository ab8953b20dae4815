import type { FastifyPluginAsync } from 'fastify'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import sse, { type SSEPluginOptions } from '@fastify/sse'
import { reusableModule } from '../../plugins/reusable-module.js'
import { ensureDomain } from '../../plugins/domain.js'
import { errorSchemas } from '../../plugins/error-responses.js'
import { documentPortfolioRoutes } from '../../plugins/openapi.js'
import { IdParamsSchema } from '../../schemas/common.js'
import {
  DEFAULT_PERFORMANCE_RANGE, PerformanceQuerySchema, PortfolioPerformanceSchema
} from '../../schemas/performance.js'
import {
  PortfolioValuationSchema,
  PortfolioValuationStreamEventSchema,
  type PortfolioValuationStreamEvent
} from '../../schemas/valuation.js'

/** A comment line at least this often keeps proxies and browsers from taking a quiet stream for a dead one. */
export const HEARTBEAT_MS = 15_000

/** The first `id:` of a stream: one more than the `Last-Event-ID` a reconnecting EventSource sends, else 1. */
function firstEventId (lastEventId: string | undefined): number {
  const last = Number(lastEventId)
  return Number.isSafeInteger(last) && last >= 0 ? last + 1 : 1
}

/**
 * What a portfolio is worth at market prices, mounted beside the portfolios module under the same
 * prefix (`/portfolios/:id/…`) and behind the same credential (PORTFOLIO_ACCESS): its performance
 * over a range (docs/api.md#performance) and its valuation (docs/api.md#valuation), on request and
 * live as Server-Sent Events (@fastify/sse, registered here: its hooks stay in this module). These
 * read quotes and follow the change feed; the portfolios module, which reads neither, is reusable
 * without them. The stream is checked like any request before it starts — 401, 404 and 429 answer
 * the error body — then sends `event: valuation` messages with increasing ids, `event: deleted`
 * when the portfolio goes (and ends), a comment every 15 s, and ends when the instance shuts down.
 */
const portfolioValuationModule: FastifyPluginAsyncTypebox = async app => {
  app.addHook('onRoute', documentPortfolioRoutes('portfolios', app.portfolioAccess))
  app.addHook('onRequest', app.verifyPortfolioAccess)
  await ensureDomain(app)
  // The package's default export is its fp-wrapped plugin; its typings name the module instead.
  await app.register(sse as unknown as FastifyPluginAsync<SSEPluginOptions>, { heartbeatInterval: HEARTBEAT_MS })
  const { valuations, liveValuations, performances } = app.domain
  const errors = errorSchemas(400, 401, 404)

  // Before the valuation's routes: the OpenAPI document lists paths in the order they are registered.
  app.get('/:id/performance', {
    schema: {
      operationId: 'getPortfolioPerformance',
      summary: 'How a portfolio did over a range, against IBOVESPA, SELIC and IPCA',
      description: 'A point each trading day (1m, 3m, 6m), week (ytd, 1y) or month (5y, max) with what was held ' +
        'then, at average cost and at its close in BRL; the result net of what was bought and sold; the ' +
        'time-weighted return (money put in or taken out is not performance); IBOVESPA, SELIC and IPCA over ' +
        'the same dates (null when the provider cannot give one); estimated where a value is not a market ' +
        'close (docs/api.md#performance). Kept until the portfolio changes or the next close.',
      params: IdParamsSchema,
      querystring: PerformanceQuerySchema,
      response: { 200: PortfolioPerformanceSchema, ...errorSchemas(400, 401, 404, 502, 504) }
    }
  }, async request => await performances.performance(
    request.access, request.params.id, request.query.range ?? DEFAULT_PERFORMANCE_RANGE, request.log))

  app.get('/:id/valuation', {
    schema: {
      operationId: 'getPortfolioValuation',
      summary: 'What a portfolio is worth at market prices',
      description: 'What a portfolio is worth at market prices: each asset\'s quantity times its symbol\'s quote, ' +
        'rounded to cents, summed; an asset without a quote counts at its own totalValue and its symbol ' +
        'is listed in unquotedSymbols. One provider request for all the portfolio\'s symbols ' +
        '(docs/api.md#valuation).',
      params: IdParamsSchema,
      response: { 200: PortfolioValuationSchema, ...errors }
    }
  }, async request => await valuations.valuation(request.access, request.params.id, request.log))

  app.get('/:id/valuation/stream', {
    sse: { kind: 'manual' },
    config: { longLived: true },
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
        ...errors
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
