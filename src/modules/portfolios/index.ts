import fp from 'fastify-plugin'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { NotFoundError, orNotFound } from '../../errors.js'
import { errorSchemas } from '../../plugins/error-responses.js'
import { documentRoutes } from '../../plugins/openapi.js'
import { DeletedSchema, IdParamsSchema, pageOf } from '../../schemas.js'
import {
  CreatePortfolioBodySchema,
  CreatedPortfolioSchema,
  ListPortfoliosQuerySchema,
  PortfolioDetailSchema,
  PortfolioSchema,
  PortfolioValueSchema,
  UpdatePortfolioBodySchema
} from './schemas.js'

/** Portfolios of spec §4.2, behind the API key. */
const portfoliosModule: FastifyPluginAsyncTypebox = async app => {
  app.addHook('onRoute', documentRoutes('portfolios', 'apiKey'))
  app.addHook('onRequest', app.verifyApiKey)
  const { store } = app
  const errors = errorSchemas(400, 401, 404)

  app.get('/', {
    schema: { summary: 'List portfolios, optionally of one user', querystring: ListPortfoliosQuerySchema, response: { 200: Type.Array(PortfolioSchema), ...errors } }
  }, async request => await store.listPortfolios({ userId: request.query.userId }, pageOf(request.query)))

  app.get('/:id', {
    schema: { summary: 'A portfolio with its assets', params: IdParamsSchema, response: { 200: PortfolioDetailSchema, ...errors } }
  }, async request => orNotFound(await store.getPortfolioDetail(request.params.id), 'Portfolio'))

  app.get('/:id/value', {
    schema: { summary: 'Total value of a portfolio', params: IdParamsSchema, response: { 200: PortfolioValueSchema, ...errors } }
  }, async request => orNotFound(await store.getPortfolioValue(request.params.id), 'Portfolio'))

  app.post('/', {
    schema: { summary: 'Create a portfolio', body: CreatePortfolioBodySchema, response: { 201: CreatedPortfolioSchema, ...errors } }
  }, async (request, reply) => reply.code(201).send(await store.createPortfolio(request.body)))

  app.patch('/:id', {
    schema: { summary: 'Rename or describe a portfolio', params: IdParamsSchema, body: UpdatePortfolioBodySchema, response: { 200: PortfolioSchema, ...errors } }
  }, async request => orNotFound(await store.updatePortfolio(request.params.id, request.body), 'Portfolio'))

  app.delete('/:id', {
    schema: { summary: 'Delete a portfolio and its assets', params: IdParamsSchema, response: { 200: DeletedSchema, ...errors } }
  }, async request => {
    if (!await store.deletePortfolio(request.params.id)) throw new NotFoundError('Portfolio')
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
