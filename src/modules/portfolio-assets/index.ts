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
      description: 'A page of assets (limit 1-1000, default 1000; offset), optionally of one portfolio ' +
        '(portfolioId). API key (docs/api.md#resources).',
      querystring: ListAssetsQuerySchema,
      response: { 200: AssetList, ...errors }
    }
  }, async request => await assets.list(request.access, request.query, request.query))

  app.get('/type/:type', {
    schema: {
      operationId: 'listAssetsByType',
      summary: 'List assets of one type',
      description: 'A page of the assets of one type (STOCK, BOND, FUND, CRYPTO or COMMODITY); another type is 400 ' +
        '(docs/api.md#resources).',
      params: AssetTypeParamsSchema,
      querystring: PageQuerySchema,
      response: { 200: AssetList, ...errors }
    }
  }, async request => await assets.list(request.access, request.params, request.query))

  app.get('/price/:symbol', {
    schema: {
      operationId: 'getQuote',
      summary: 'Current price quote of a ticker',
      description: 'The current price of a ticker from the quote provider (brapi, or the offline simulation ' +
        'outside production), through the instance\'s quote cache (QUOTES_TTL). An unknown ticker is ' +
        '404 (docs/api.md#quotes).',
      params: SymbolParamsSchema,
      response: { 200: QuoteSchema, ...upstreamErrors }
    }
  }, async request => await quotes.quote(request.access, request.params.symbol, request.log))

  app.get('/:id/dashboard', {
    schema: {
      operationId: 'getAssetDashboard',
      summary: 'Position, history and buys of one asset',
      description: 'An asset\'s position (quantity, average price, last quote, result), its month-by-month history ' +
        'against the IBOVESPA and its buy lots; months not priced by the market are marked ' +
        '(docs/api.md#the-asset-dashboard).',
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
      description: 'One asset. Strong ETag: If-None-Match answers 304 while it is unchanged (docs/api.md#caching).',
      params: IdParamsSchema,
      response: { 200: AssetSchema, ...errors }
    }
  }, async (request, reply) => answerTagged(reply, await assets.get(request.access, request.params.id)))

  app.post('/', {
    config: { idempotent: true },
    schema: {
      operationId: 'createAsset',
      summary: 'Add an asset to a portfolio',
      description: 'Adds an asset to a portfolio (symbol upper-cased; quantity over 0 and price from 0, each with ' +
        'at most 8 decimals; totalValue = quantity × price rounded to cents) and answers it with 201. ' +
        'An unknown portfolio is 404. Safe to retry with Idempotency-Key (docs/api.md#resources, ' +
        'docs/api.md#money).',
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
      description: 'Changes an asset\'s quantity or price (at least one of them): totalValue and the portfolio\'s ' +
        'total follow, live valuations are told. If-Match makes the change conditional; Idempotency-Key ' +
        'makes it safe to retry (docs/api.md#safe-retries).',
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
      description: 'Removes an asset; its portfolio\'s total and live valuations follow. If-Match makes it ' +
        'conditional (docs/api.md#safe-retries).',
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
