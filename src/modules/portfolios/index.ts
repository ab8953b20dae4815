import fp from 'fastify-plugin'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { NotFoundError, orNotFound } from '../../errors.js'
import { errorSchemas } from '../../plugins/error-responses.js'
import { ifMatchOf } from '../../plugins/conditional-requests.js'
import { entityTag } from '../../entity-tag.js'
import { documentRoutes } from '../../plugins/openapi.js'
import { DeletedSchema, IdParamsSchema, pageOf } from '../../schemas/common.js'
import {
  CreatePortfolioInputSchema,
  CreatedPortfolioSchema,
  PortfolioDetailSchema,
  PortfolioSchema,
  PortfolioValueSchema,
  UpdatePortfolioInputSchema,
  createPortfolioInput,
  updatePortfolioInput
} from '../../schemas/portfolio.js'
import { ListPortfoliosQuerySchema } from './schemas.js'

/** Portfolios (docs/api.md#resources), behind the API key. */
const portfoliosModule: FastifyPluginAsyncTypebox = async app => {
  app.addHook('onRoute', documentRoutes('portfolios', 'apiKey'))
  app.addHook('onRequest', app.verifyApiKey)
  const { portfolios } = app.store
  const errors = errorSchemas(400, 401, 404)

  app.get('/', {
    schema: { operationId: 'listPortfolios', summary: 'List portfolios, optionally of one user', querystring: ListPortfoliosQuerySchema, response: { 200: Type.Array(PortfolioSchema), ...errors } }
  }, async request => await portfolios.list({ userId: request.query.userId }, pageOf(request.query)))

  // Conditional requests and Idempotency-Key: route options (src/plugins/conditional-requests.ts, idempotency.ts).
  app.get('/:id', {
    config: { entityTag: true },
    schema: { operationId: 'getPortfolio', summary: 'A portfolio with its assets', params: IdParamsSchema, response: { 200: PortfolioDetailSchema, ...errors } }
  }, async request => orNotFound(await portfolios.detail(request.params.id), 'Portfolio'))

  app.get('/:id/value', {
    schema: { operationId: 'getPortfolioValue', summary: 'Total value of a portfolio', params: IdParamsSchema, response: { 200: PortfolioValueSchema, ...errors } }
  }, async request => orNotFound(await portfolios.value(request.params.id), 'Portfolio'))

  app.post('/', {
    config: { idempotent: true },
    schema: { operationId: 'createPortfolio', summary: 'Create a portfolio', body: CreatePortfolioInputSchema, response: { 201: CreatedPortfolioSchema, ...errors } }
  }, async (request, reply) => reply.code(201).send(await portfolios.create(createPortfolioInput(request.body))))

  app.patch('/:id', {
    // Its ETag is the portfolio detail's, set by the handler.
    config: { idempotent: true, entityTag: true, ifMatch: true },
    schema: { operationId: 'updatePortfolio', summary: 'Rename or describe a portfolio', params: IdParamsSchema, body: UpdatePortfolioInputSchema, response: { 200: PortfolioSchema, ...errors } }
  }, async (request, reply) => {
    const input = updatePortfolioInput(request.body)
    const changed = orNotFound(await portfolios.change(request.params.id, input, ifMatchOf(request)), 'Portfolio')
    // The tag GET /portfolios/:id now answers, so the next edit can send it as If-Match.
    reply.header('etag', entityTag(changed.detail))
    return changed.portfolio
  })

  app.delete('/:id', {
    config: { ifMatch: true },
    schema: { operationId: 'deletePortfolio', summary: 'Delete a portfolio and its assets', params: IdParamsSchema, response: { 200: DeletedSchema, ...errors } }
  }, async request => {
    if (!await portfolios.delete(request.params.id, ifMatchOf(request))) throw new NotFoundError('Portfolio')
    return { message: 'Portfolio removido com sucesso', id: request.params.id }
  })
}

export default fp(portfoliosModule, {
  name: 'bff-portfolios',
  fastify: '5.x',
  dependencies: ['bff-auth', 'bff-store'],
  decorators: { fastify: ['verifyApiKey', 'store'] },
  encapsulate: true
})
