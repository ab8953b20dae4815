import { reusableModule } from '../../plugins/reusable-module.js'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ensureDomain } from '../../plugins/domain.js'
import { errorSchemas } from '../../plugins/error-responses.js'
import { answerTagged, ifMatchOf } from '../../plugins/conditional-requests.js'
import { documentPortfolioRoutes } from '../../plugins/openapi.js'
import { DeletedSchema, IdParamsSchema, PageOf, PageQuerySchema } from '../../schemas/common.js'
import {
  AssetListItemSchema, AssetSchema, CreateAssetInputSchema, ListAssetsQuerySchema, UpdateAssetInputSchema
} from '../../schemas/asset.js'
import { DashboardSchema } from '../../schemas/dashboard.js'
import { QuoteSchema, SymbolParamsSchema } from '../../schemas/quote.js'
import { AssetTransactionSchema, CreateTransactionInputSchema } from '../../schemas/transaction.js'
import { AssetTypeParamsSchema, TransactionParamsSchema } from './schemas.js'

/**
 * Portfolio assets, their transactions, quotes and dashboards (docs/api.md#resources), behind the
 * credential PORTFOLIO_ACCESS names (docs/api.md#whose-portfolios): the onRequest guard checks it,
 * and each handler hands the request to a service of src/domain, which owns the rules.
 */
const portfolioAssetsModule: FastifyPluginAsyncTypebox = async app => {
  app.addHook('onRoute', documentPortfolioRoutes('portfolio-assets', app.portfolioAccess))
  app.addHook('onRequest', app.verifyPortfolioAccess)
  await ensureDomain(app)
  const { assets, transactions, quotes, dashboards } = app.domain
  const errors = errorSchemas(400, 401, 404)
  const positionErrors = errorSchemas(400, 401, 404, 422)
  const upstreamErrors = errorSchemas(400, 401, 404, 502, 504)
  const AssetList = PageOf(AssetListItemSchema)

  app.get('/', {
    schema: {
      operationId: 'listAssets',
      summary: 'List assets, optionally of one portfolio',
      description: 'A page of assets (limit 1-1000, default 1000; offset), optionally of one portfolio ' +
        '(portfolioId); with a user\'s token, only those of its own portfolios (docs/api.md#whose-portfolios).',
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
      summary: 'Position, history, buys and sales of one asset',
      description: 'An asset\'s position (quantity, average price, last quote, result, realized result, fees), its ' +
        'month-by-month history against the IBOVESPA and its buys and sales; months not priced by the market ' +
        'are marked (docs/api.md#the-asset-dashboard).',
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
        'at most 8 decimals; totalValue = quantity × price rounded to cents) and answers it with 201; its first ' +
        'transaction is a BUY of `quantity` at `price` on `date` (today when absent). An unknown portfolio is 404. ' +
        'Safe to retry with Idempotency-Key (docs/api.md#transactions, docs/api.md#money).',
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
      description: 'Changes an asset\'s quantity or price (at least one of them): `price` becomes the asset\'s ' +
        'price (its last known unit price; no transaction changes); a new `quantity` is recorded as a BUY or SELL ' +
        'of the difference, dated today, at that price or else the asset\'s. totalValue and the portfolio\'s total ' +
        'follow, live valuations are told. If-Match makes the change conditional; Idempotency-Key makes it safe ' +
        'to retry (docs/api.md#transactions, docs/api.md#safe-retries).',
      params: IdParamsSchema,
      body: UpdateAssetInputSchema,
      response: { 200: AssetSchema, ...errors }
    }
  }, async (request, reply) => {
    const access = request.access
    return answerTagged(reply, await assets.update(access, request.params.id, request.body, ifMatchOf(request)))
  })

  app.get('/:id/transactions', {
    schema: {
      operationId: 'listAssetTransactions',
      summary: 'The buys and sales of one asset',
      description: 'In the order they count: by date, then as recorded. See docs/api.md#transactions.',
      params: IdParamsSchema,
      querystring: PageQuerySchema,
      response: { 200: PageOf(AssetTransactionSchema), ...errors }
    }
  }, async request => await transactions.list(request.access, request.params.id, request.query))

  app.post('/:id/transactions', {
    config: { idempotent: true },
    schema: {
      operationId: 'addAssetTransaction',
      summary: 'Record a dated buy or sale of an asset',
      description: 'The asset\'s quantity, price (its average price) and totalValue, and its portfolio\'s ' +
        'totalValue, follow. A SELL of more than is held at its date (transactions may be back-dated) is 422 ' +
        'INSUFFICIENT_QUANTITY and records nothing. See docs/api.md#transactions.',
      params: IdParamsSchema,
      body: CreateTransactionInputSchema,
      response: { 201: AssetTransactionSchema, ...positionErrors }
    }
  }, async (request, reply) =>
    reply.code(201).send(await transactions.add(request.access, request.params.id, request.body)))

  app.delete('/:id/transactions/:transactionId', {
    schema: {
      operationId: 'removeAssetTransaction',
      summary: 'Undo a buy or sale of an asset',
      description: 'The asset\'s quantity, price (its average price) and totalValue follow. A removal that would ' +
        'leave less than nothing held at some date (a BUY that a later SELL needs) is 422 INSUFFICIENT_QUANTITY ' +
        'and removes nothing. See docs/api.md#transactions.',
      params: TransactionParamsSchema,
      response: { 200: DeletedSchema, ...positionErrors }
    }
  }, async request => {
    const { id, transactionId } = request.params
    await transactions.remove(request.access, id, transactionId)
    return { message: 'Transação removida com sucesso', id: transactionId }
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
  decorators: { fastify: ['verifyPortfolioAccess', 'portfolioAccess', 'store', 'quotes'] }
})
