import { Type } from '@sinclair/typebox'
import { createAssetInput, updateAssetInput } from '../domain/assets.js'
import {
  AssetListItemSchema, AssetSchema, AssetTypeSchema, CreateAssetInputSchema, ListAssetsQuerySchema,
  UpdateAssetInputSchema
} from '../schemas/asset.js'
import { DeletedSchema, IdParamsSchema, PageOf, PageQuerySchema } from '../schemas/common.js'
import { AssetEventsSchema } from '../schemas/corporate-events.js'
import { DashboardSchema } from '../schemas/dashboard.js'
import { QuoteSchema, SymbolParamsSchema } from '../schemas/quote.js'
import { batched, operation, tagged } from './operation.js'

/*
 * Portfolio assets, their quotes and dashboards (docs/api.md#resources): the portfolio-assets
 * module's first routes, in the order it registers them (its transactions' follow:
 * ./asset-transactions.ts), and GraphQL's fields. Where GraphQL answers many parents at once (an
 * asset's transactions, quote, dashboard) it is a declaration of its own, one domain call for the
 * batch: the asset's fields (./asset-fields.ts).
 */

const errors = [400, 401, 404] as const
const upstreamErrors = [400, 401, 404, 502, 504] as const

/**
 * A root `quote` names its ticker in the document, so each alias is one more ticker asked of the
 * provider (batched, but not free): it costs 100, so one document asks at most a few hundred
 * (about 490 at the default limit of 50 000), where a list's quotes are the stored assets' own.
 */
const QUERY_QUOTE_COST = 100

/** GraphQL's `assets(portfolioId, type)`: REST's list and its list by type in one. */
const AssetsArgumentsSchema = Type.Composite([
  ListAssetsQuerySchema,
  Type.Object({ type: Type.Optional(AssetTypeSchema) })
])

export const portfolioAssetOperations = [
  operation({
    input: { query: ListAssetsQuerySchema },
    output: PageOf(AssetListItemSchema),
    scope: 'portfolio',
    run: async (domain, call, { query }) => await domain.assets.list(call.access, query, query),
    rest: {
      method: 'GET',
      url: '/',
      operationId: 'listAssets',
      summary: 'List assets, optionally of one portfolio',
      description: 'A page of assets (limit 1-1000, default 1000; offset), optionally of one portfolio ' +
        '(portfolioId); with a user\'s token, only those of its own portfolios (docs/api.md#whose-portfolios).',
      errors
    }
  }),

  operation({
    input: { params: Type.Object({ type: AssetTypeSchema }), query: PageQuerySchema },
    output: PageOf(AssetListItemSchema),
    scope: 'portfolio',
    run: async (domain, call, { params, query }) => await domain.assets.list(call.access, params, query),
    rest: {
      method: 'GET',
      url: '/type/:type',
      operationId: 'listAssetsByType',
      summary: 'List assets of one type',
      description: 'A page of the assets of one type (STOCK, BOND, FUND, CRYPTO or COMMODITY); another type is 400 ' +
        '(docs/api.md#resources).',
      errors
    }
  }),

  operation({
    input: { params: SymbolParamsSchema },
    output: QuoteSchema,
    scope: 'portfolio',
    run: async (domain, call, { params }) => await domain.quotes.quote(call.access, params.symbol, call.log),
    rest: {
      method: 'GET',
      url: '/price/:symbol',
      operationId: 'getQuote',
      summary: 'Current price quote of a ticker',
      description: 'The current price of a ticker from the quote provider (brapi, or the offline simulation ' +
        'outside production), through the instance\'s quote cache (QUOTES_TTL). An unknown ticker is ' +
        '404 (docs/api.md#quotes).',
      errors: upstreamErrors
    }
  }),

  operation({
    input: { params: IdParamsSchema },
    output: DashboardSchema,
    scope: 'portfolio',
    run: async (domain, call, { params }) => await domain.dashboards.ofAsset(call.access, params.id, call.log),
    rest: {
      method: 'GET',
      url: '/:id/dashboard',
      operationId: 'getAssetDashboard',
      summary: 'Position, history, buys and sales of one asset',
      description: 'An asset\'s position (quantity, average price, last quote, result, realized result, fees), its ' +
        'month-by-month history against the IBOVESPA and its buys and sales; months not priced by the market ' +
        'are marked (docs/api.md#the-asset-dashboard).',
      errors: upstreamErrors
    }
  }),

  operation({
    input: { params: IdParamsSchema },
    output: AssetEventsSchema,
    scope: 'portfolio',
    run: async (domain, call, { params }) => await domain.events.ofAsset(call.access, params.id, call.log),
    rest: {
      method: 'GET',
      url: '/:id/events',
      operationId: 'getAssetEvents',
      summary: 'The corporate events an asset was entitled to',
      description: 'The splits, groupings, bonus issues, dividends, JCP and rendimentos of the asset\'s symbol whose ' +
        'data com has ended with shares held, by data com: what each counted, its ratio or its cash (gross, 15 % ' +
        'withheld of a JCP, net, paid or announced). Read from the quote provider at most once a day ' +
        '(docs/api.md#corporate-events).',
      errors: upstreamErrors
    }
  }),

  operation({
    input: { params: IdParamsSchema },
    output: AssetSchema,
    scope: 'portfolio',
    run: async (domain, call, { params }) => tagged(await domain.assets.get(call.access, params.id)),
    rest: {
      method: 'GET',
      url: '/:id',
      operationId: 'getAsset',
      summary: 'One asset',
      description: 'One asset. Strong ETag: If-None-Match answers 304 while it is unchanged (docs/api.md#caching).',
      errors,
      entityTag: true
    },
    graphql: {
      query: 'asset',
      args: { id: 'params.id' },
      nullable: true,
      description: 'One asset; null when no asset has this id'
    }
  }),

  operation({
    input: { query: AssetsArgumentsSchema },
    output: Type.Array(AssetSchema),
    scope: 'portfolio',
    run: async (domain, call, { query }) => await domain.assets.list(call.access, query, query),
    graphql: {
      query: 'assets',
      args: { portfolioId: 'query.portfolioId', type: 'query.type' },
      paged: true,
      description: 'Assets, optionally of one portfolio and one type'
    }
  }),

  // Every `quote(symbol:)` of a document in one provider batch.
  batched({
    input: { params: SymbolParamsSchema },
    output: QuoteSchema,
    scope: 'portfolio',
    batch: async (domain, call, inputs) =>
      await domain.quotes.quotes(call.access, inputs.map(({ params }) => params.symbol), call.log),
    graphql: {
      query: 'quote',
      args: { symbol: 'params.symbol' },
      nullable: true,
      description: 'The current quote of a ticker; null when the provider has none',
      cost: QUERY_QUOTE_COST
    }
  }),

  operation({
    input: { body: CreateAssetInputSchema },
    output: AssetSchema,
    scope: 'portfolio',
    run: async (domain, call, { body }) => await domain.assets.create(call.access, body),
    rest: {
      method: 'POST',
      url: '/',
      operationId: 'createAsset',
      summary: 'Add an asset to a portfolio',
      description: 'Adds an asset to a portfolio (symbol upper-cased; quantity over 0 and price from 0, each with ' +
        'at most 8 decimals; totalValue = quantity × price rounded to cents) and answers it with 201; its first ' +
        'transaction is a BUY of `quantity` at `price` on `date` (today when absent). An unknown portfolio is 404. ' +
        'Safe to retry with Idempotency-Key (docs/api.md#transactions, docs/api.md#money).',
      errors,
      status: 201,
      idempotent: true
    },
    graphql: {
      mutation: 'createAsset',
      args: { input: 'body' },
      check: ({ body }) => createAssetInput(body),
      description: 'Add an asset to a portfolio'
    }
  }),

  operation({
    input: { params: IdParamsSchema, body: UpdateAssetInputSchema },
    output: AssetSchema,
    scope: 'portfolio',
    run: async (domain, call, { params, body }) =>
      tagged(await domain.assets.update(call.access, params.id, body, call.ifMatch)),
    rest: {
      method: 'PATCH',
      url: '/:id',
      operationId: 'updateAsset',
      summary: 'Change the quantity or price of an asset',
      description: 'Changes an asset\'s quantity or price (at least one of them): `price` becomes the asset\'s ' +
        'price (its last known unit price; no transaction changes); a new `quantity` is recorded as a BUY or SELL ' +
        'of the difference, dated today, at that price or else the asset\'s. totalValue and the portfolio\'s total ' +
        'follow, live valuations are told. If-Match makes the change conditional; Idempotency-Key makes it safe ' +
        'to retry (docs/api.md#transactions, docs/api.md#safe-retries).',
      errors,
      // The answer is the asset as GET /portfolio-assets/:id answers it: the same tag.
      idempotent: true,
      entityTag: true,
      ifMatch: true
    },
    graphql: {
      mutation: 'updateAsset',
      args: { id: 'params.id', input: 'body' },
      check: ({ body }) => updateAssetInput(body),
      nullable: true,
      description: 'Change the quantity or price of an asset; null when no asset has this id'
    }
  }),

  operation({
    input: { params: IdParamsSchema },
    output: DeletedSchema,
    scope: 'portfolio',
    run: async (domain, call, { params }) => {
      await domain.assets.delete(call.access, params.id, call.ifMatch)
      return { message: 'Ativo removido com sucesso', id: params.id }
    },
    rest: {
      method: 'DELETE',
      url: '/:id',
      operationId: 'deleteAsset',
      summary: 'Remove an asset',
      description: 'Removes an asset; its portfolio\'s total and live valuations follow. If-Match makes it ' +
        'conditional (docs/api.md#safe-retries).',
      errors,
      ifMatch: true
    },
    graphql: {
      mutation: 'deleteAsset',
      args: { id: 'params.id' },
      description: 'Remove an asset; false when no asset has this id'
    }
  })
]
