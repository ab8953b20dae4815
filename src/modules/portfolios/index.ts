import { reusableModule } from '../../plugins/reusable-module.js'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ensureDomain } from '../../plugins/domain.js'
import { errorSchemas } from '../../plugins/error-responses.js'
import { answerTagged, ifMatchOf } from '../../plugins/conditional-requests.js'
import { documentPortfolioRoutes } from '../../plugins/openapi.js'
import { DeletedSchema, IdParamsSchema, PageOf } from '../../schemas/common.js'
import {
  CreatePortfolioInputSchema,
  CreatedPortfolioSchema,
  ListPortfoliosQuerySchema,
  PortfolioDetailSchema,
  PortfolioSchema,
  PortfolioValueSchema,
  UpdatePortfolioInputSchema
} from '../../schemas/portfolio.js'

/**
 * Portfolios (docs/api.md#resources), behind the credential PORTFOLIO_ACCESS names (the API key,
 * a user's token, or either: docs/api.md#whose-portfolios): the onRequest guard checks it, and each
 * handler hands the request to the portfolio service (src/domain/portfolios.ts), which owns the
 * rules, a user's scope among them. It reads the store alone: what a portfolio is worth at market
 * prices (valuation, performance) is the portfolio-valuation module's, which needs quotes.
 */
const portfoliosModule: FastifyPluginAsyncTypebox = async app => {
  app.addHook('onRoute', documentPortfolioRoutes('portfolios', app.portfolioAccess))
  app.addHook('onRequest', app.verifyPortfolioAccess)
  await ensureDomain(app)
  const { portfolios } = app.domain
  const errors = errorSchemas(400, 401, 404)

  app.get('/', {
    schema: {
      operationId: 'listPortfolios',
      summary: 'List portfolios, optionally of one user',
      description: 'A page of portfolios (limit 1-1000, default 1000; offset), optionally of one user (userId), in ' +
        'creation order; with a user\'s token, only its own (docs/api.md#whose-portfolios).',
      querystring: ListPortfoliosQuerySchema,
      response: { 200: PageOf(PortfolioSchema), ...errors }
    }
  }, async request => await portfolios.list(request.access, request.query, request.query))

  // Conditional requests and Idempotency-Key: route options (src/plugins/conditional-requests.ts, idempotency.ts).
  app.get('/:id', {
    config: { entityTag: true },
    schema: {
      operationId: 'getPortfolio',
      summary: 'A portfolio with its assets',
      description: 'A portfolio with its assets; its totalValue is the sum of the assets\' totalValue as listed ' +
        '(docs/api.md#money). Strong ETag: If-None-Match answers 304 while it is unchanged ' +
        '(docs/api.md#caching).',
      params: IdParamsSchema,
      response: { 200: PortfolioDetailSchema, ...errors }
    }
  }, async (request, reply) => answerTagged(reply, await portfolios.taggedDetail(request.access, request.params.id)))

  app.get('/:id/value', {
    schema: {
      operationId: 'getPortfolioValue',
      summary: 'Total value of a portfolio',
      description: 'A portfolio\'s total value in BRL (the sum of its assets\' totalValue, 2 decimals) and the ' +
        'time of its last change (docs/api.md#money).',
      params: IdParamsSchema,
      response: { 200: PortfolioValueSchema, ...errors }
    }
  }, async request => await portfolios.value(request.access, request.params.id))

  app.post('/', {
    config: { idempotent: true },
    schema: {
      operationId: 'createPortfolio',
      summary: 'Create a portfolio',
      description: 'Creates a portfolio (name 1-200 characters, trimmed; description up to 2000; userId) and ' +
        'answers it with 201. Safe to retry with Idempotency-Key (docs/api.md#safe-retries).',
      body: CreatePortfolioInputSchema,
      response: { 201: CreatedPortfolioSchema, ...errors }
    }
  }, async (request, reply) => reply.code(201).send(await portfolios.create(request.access, request.body)))

  app.patch('/:id', {
    // Its ETag is the portfolio detail's, set by the handler.
    config: { idempotent: true, entityTag: true, ifMatch: true },
    schema: {
      operationId: 'updatePortfolio',
      summary: 'Rename or describe a portfolio',
      description: 'Changes a portfolio\'s name or description (at least one of them) and answers the whole ' +
        'portfolio with its new ETag. If-Match makes the change conditional (412 when the portfolio ' +
        'changed meanwhile); Idempotency-Key makes it safe to retry (docs/api.md#safe-retries).',
      params: IdParamsSchema,
      body: UpdatePortfolioInputSchema,
      response: { 200: PortfolioSchema, ...errors }
    }
  }, async (request, reply) => {
    const access = request.access
    const changed = await portfolios.update(access, request.params.id, request.body, ifMatchOf(request))
    // The tag GET /portfolios/:id now answers, so the next edit can send it as If-Match.
    reply.header('etag', changed.etag)
    return changed.portfolio
  })

  app.delete('/:id', {
    config: { ifMatch: true },
    schema: {
      operationId: 'deletePortfolio',
      summary: 'Delete a portfolio and its assets',
      description: 'Deletes a portfolio and all its assets; its live valuation streams end with a deleted event. ' +
        'If-Match makes it conditional (docs/api.md#safe-retries).',
      params: IdParamsSchema,
      response: { 200: DeletedSchema, ...errors }
    }
  }, async request => {
    await portfolios.delete(request.access, request.params.id, ifMatchOf(request))
    return { message: 'Portfolio removido com sucesso', id: request.params.id }
  })
}

export default reusableModule(portfoliosModule, {
  name: 'bff-portfolios',
  fastify: '5.x',
  dependencies: ['bff-auth', 'bff-store'],
  decorators: { fastify: ['verifyPortfolioAccess', 'portfolioAccess', 'store'] }
})
