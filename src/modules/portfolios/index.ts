import fp from 'fastify-plugin'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { NotFoundError, orNotFound } from '../../errors.js'
import { errorSchemas } from '../../plugins/error-responses.js'
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

  app.get('/:id', {
    schema: { operationId: 'getPortfolio', summary: 'A portfolio with its assets', params: IdParamsSchema, response: { 200: PortfolioDetailSchema, ...errors } }
  }, async request => orNotFound(await portfolios.detail(request.params.id), 'Portfolio'))

  app.get('/:id/value', {
    schema: { operationId: 'getPortfolioValue', summary: 'Total value of a portfolio', params: IdParamsSchema, response: { 200: PortfolioValueSchema, ...errors } }
  }, async request => orNotFound(await portfolios.value(request.params.id), 'Portfolio'))

  app.post('/', {
    schema: { operationId: 'createPortfolio', summary: 'Create a portfolio', body: CreatePortfolioInputSchema, response: { 201: CreatedPortfolioSchema, ...errors } }
  }, async (request, reply) => reply.code(201).send(await portfolios.create(createPortfolioInput(request.body))))

  app.patch('/:id', {
    schema: { operationId: 'updatePortfolio', summary: 'Rename or describe a portfolio', params: IdParamsSchema, body: UpdatePortfolioInputSchema, response: { 200: PortfolioSchema, ...errors } }
  }, async request => orNotFound(await portfolios.update(request.params.id, updatePortfolioInput(request.body)), 'Portfolio'))

  app.delete('/:id', {
    schema: { operationId: 'deletePortfolio', summary: 'Delete a portfolio and its assets', params: IdParamsSchema, response: { 200: DeletedSchema, ...errors } }
  }, async request => {
    if (!await portfolios.delete(request.params.id)) throw new NotFoundError('Portfolio')
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
