import fp from 'fastify-plugin'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { NotFoundError, QuoteNotFoundError, orNotFound } from '../../errors.js'
import { assetDashboard } from '../../dashboard/service.js'
import { errorSchemas } from '../../plugins/error-responses.js'
import { ifMatchOf } from '../../plugins/conditional-requests.js'
import { documentRoutes } from '../../plugins/openapi.js'
import { DeletedSchema, IdParamsSchema, PageQuerySchema, pageOf } from '../../schemas/common.js'
import { AssetListItemSchema, AssetSchema, CreateAssetInputSchema, UpdateAssetInputSchema, createAssetInput, updateAssetInput } from '../../schemas/asset.js'
import { DashboardSchema } from '../../schemas/dashboard.js'
import { QuoteSchema } from '../../schemas/quote.js'
import { AssetTypeParamsSchema, ListAssetsQuerySchema, SymbolParamsSchema } from './schemas.js'

/** Portfolio assets, their quotes and dashboards (docs/api.md#resources), behind the API key. */
const portfolioAssetsModule: FastifyPluginAsyncTypebox = async app => {
  app.addHook('onRoute', documentRoutes('portfolio-assets', 'apiKey'))
  app.addHook('onRequest', app.verifyApiKey)
  const { assets } = app.store
  const errors = errorSchemas(400, 401, 404)
  const AssetList = Type.Array(AssetListItemSchema)

  app.get('/', {
    schema: { operationId: 'listAssets', summary: 'List assets, optionally of one portfolio', querystring: ListAssetsQuerySchema, response: { 200: AssetList, ...errors } }
  }, async request => await assets.list({ portfolioId: request.query.portfolioId }, pageOf(request.query)))

  app.get('/type/:type', {
    schema: { operationId: 'listAssetsByType', summary: 'List assets of one type', params: AssetTypeParamsSchema, querystring: PageQuerySchema, response: { 200: AssetList, ...errors } }
  }, async request => await assets.list({ type: request.params.type }, pageOf(request.query)))

  app.get('/price/:symbol', {
    schema: { operationId: 'getQuote', summary: 'Current price quote of a ticker', params: SymbolParamsSchema, response: { 200: QuoteSchema, ...errorSchemas(400, 401, 404, 502, 504) } }
  }, async request => {
    const symbol = request.params.symbol.toUpperCase()
    const quote = await app.quotes.quote(symbol, request.log)
    if (quote === undefined) throw new QuoteNotFoundError(symbol)
    return { ...quote, source: app.quotes.source }
  })

  app.get('/:id/dashboard', {
    schema: { operationId: 'getAssetDashboard', summary: 'Position, history and buys of one asset', params: IdParamsSchema, response: { 200: DashboardSchema, ...errorSchemas(400, 401, 404, 502, 504) } }
  }, async request => orNotFound(await assetDashboard(assets, app.quotes, request.params.id, request.log), 'Ativo'))

  // Conditional requests and Idempotency-Key: route options (src/plugins/conditional-requests.ts, idempotency.ts).
  app.get('/:id', {
    config: { entityTag: true },
    schema: { operationId: 'getAsset', summary: 'One asset', params: IdParamsSchema, response: { 200: AssetSchema, ...errors } }
  }, async request => orNotFound(await assets.get(request.params.id), 'Ativo'))

  app.post('/', {
    config: { idempotent: true },
    schema: { operationId: 'createAsset', summary: 'Add an asset to a portfolio', body: CreateAssetInputSchema, response: { 201: AssetSchema, ...errors } }
  }, async (request, reply) => {
    const asset = await assets.create(createAssetInput(request.body))
    if (asset === undefined) throw new NotFoundError('Portfolio')
    return reply.code(201).send(asset)
  })

  app.patch('/:id', {
    // The answer is the asset as GET /portfolio-assets/:id answers it: the same tag.
    config: { idempotent: true, entityTag: true, ifMatch: true },
    schema: { operationId: 'updateAsset', summary: 'Change the quantity or price of an asset', params: IdParamsSchema, body: UpdateAssetInputSchema, response: { 200: AssetSchema, ...errors } }
  }, async request => {
    const input = updateAssetInput(request.body)
    return orNotFound(await assets.update(request.params.id, input, ifMatchOf(request)), 'Ativo')
  })

  app.delete('/:id', {
    config: { ifMatch: true },
    schema: { operationId: 'deleteAsset', summary: 'Remove an asset', params: IdParamsSchema, response: { 200: DeletedSchema, ...errors } }
  }, async request => {
    if (!await assets.delete(request.params.id, ifMatchOf(request))) throw new NotFoundError('Ativo')
    return { message: 'Ativo removido com sucesso', id: request.params.id }
  })
}

export default fp(portfolioAssetsModule, {
  name: 'bff-portfolio-assets',
  fastify: '5.x',
  dependencies: ['bff-auth', 'bff-store', 'bff-quotes'],
  decorators: { fastify: ['verifyApiKey', 'store', 'quotes'] },
  encapsulate: true
})
