import { reusableModule } from '../../plugins/reusable-module.js'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ensureDomain } from '../../plugins/domain.js'
import { errorSchemas } from '../../plugins/error-responses.js'
import { answerTagged, ifMatchOf } from '../../plugins/conditional-requests.js'
import { documentRoutes } from '../../plugins/openapi.js'
import { DeletedSchema, IdParamsSchema, PageOf, PageQuerySchema } from '../../schemas/common.js'
import {
  AssetListItemSchema, AssetSchema, CreateAssetInputSchema, ListAssetsQuerySchema, UpdateAssetInputSchema
} from '../../schemas/asset.js'
import { DashboardSchema } from '../../schemas/dashboard.js'
import { QuoteSchema, SymbolParamsSchema } from '../../schemas/quote.js'
import { AssetTypeParamsSchema } from './schemas.js'

/**
 * Portfolio assets, their quotes and dashboards (docs/api.md#resources), behind the API key: the
 * onRequest guard checks it, and each handler hands the request to a service of src/domain,
 * which owns the rules.
 */
const portfolioAssetsModule: FastifyPluginAsyncTypebox = async app => {
  app.addHook('onRoute', documentRoutes('portfolio-assets', 'apiKey'))
  app.addHook('onRequest', app.verifyApiKey)
  await ensureDomain(app)
  const { assets, quotes, dashboards } = app.domain
  const errors = errorSchemas(400, 401, 404)
  const upstreamErrors = errorSchemas(400, 401, 404, 502, 504)
  const AssetList = PageOf(AssetListItemSchema)

  app.get('/', {
    schema: {
      operationId: 'listAssets',
      summary: 'List assets, optionally of one portfolio',
      querystring: ListAssetsQuerySchema,
      response: { 200: AssetList, ...errors }
    }
  }, async request => await assets.list(request.access, request.query, request.query))

  app.get('/type/:type', {
    schema: {
      operationId: 'listAssetsByType',
      summary: 'List assets of one type',
      params: AssetTypeParamsSchema,
      querystring: PageQuerySchema,
      response: { 200: AssetList, ...errors }
    }
  }, async request => await assets.list(request.access, request.params, request.query))

  app.get('/price/:symbol', {
    schema: {
      operationId: 'getQuote',
      summary: 'Current price quote of a ticker',
      params: SymbolParamsSchema,
      response: { 200: QuoteSchema, ...upstreamErrors }
    }
  }, async request => await quotes.quote(request.access, request.params.symbol, request.log))

  app.get('/:id/dashboard', {
    schema: {
      operationId: 'getAssetDashboard',
      summary: 'Position, history and buys of one asset',
      params: IdParamsSchema,
      response: { 200: DashboardSchema, ...upstreamErrors }
    }
  }, async request => await dashboards.ofAsset(request.access, request.params.id, request.log))

  // Conditional requests and Idempotency-Key: route options (src/plugins/conditional-requests.ts, idempotency.ts).
  app.get('/:id', {
    config: { entityTag: true },
    schema: {
      operationId: 'getAsset',
      summary: 'One asset',
      params: IdParamsSchema,
      response: { 200: AssetSchema, ...errors }
    }
  }, async (request, reply) => answerTagged(reply, await assets.get(request.access, request.params.id)))

  app.post('/', {
    config: { idempotent: true },
    schema: {
      operationId: 'createAsset',
      summary: 'Add an asset to a portfolio',
      body: CreateAssetInputSchema,
      response: { 201: AssetSchema, ...errors }
    }
  }, async (request, reply) => reply.code(201).send(await assets.create(request.access, request.body)))

  app.patch('/:id', {
    // The answer is the asset as GET /portfolio-assets/:id answers it: the same tag.
    config: { idempotent: true, entityTag: true, ifMatch: true },
    schema: {
      operationId: 'updateAsset',
      summary: 'Change the quantity or price of an asset',
      params: IdParamsSchema,
      body: UpdateAssetInputSchema,
      response: { 200: AssetSchema, ...errors }
    }
  }, async (request, reply) => {
    const access = request.access
    return answerTagged(reply, await assets.update(access, request.params.id, request.body, ifMatchOf(request)))
  })

  app.delete('/:id', {
    config: { ifMatch: true },
    schema: {
      operationId: 'deleteAsset',
      summary: 'Remove an asset',
      params: IdParamsSchema,
      response: { 200: DeletedSchema, ...errors }
    }
  }, async request => {
    await assets.delete(request.access, request.params.id, ifMatchOf(request))
    return { message: 'Ativo removido com sucesso', id: request.params.id }
  })
}

export default reusableModule(portfolioAssetsModule, {
  name: 'bff-portfolio-assets',
  fastify: '5.x',
  dependencies: ['bff-auth', 'bff-store', 'bff-quotes'],
  decorators: { fastify: ['verifyApiKey', 'store', 'quotes'] }
})
