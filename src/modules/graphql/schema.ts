import { GraphQLBoolean, GraphQLID, GraphQLInt, GraphQLList, GraphQLNonNull, GraphQLObjectType, GraphQLSchema, GraphQLString, type GraphQLFieldConfig, type GraphQLFieldConfigArgumentMap } from 'graphql'
import { NotFoundError } from '../../errors.js'
import { IdParamsSchema, MAX_PAGE_SIZE, PageQuerySchema, pageOf } from '../../schemas/common.js'
import { ASSET_TYPES, AssetSchema, AssetTypeSchema, CreateAssetInputSchema, UpdateAssetInputSchema } from '../../schemas/asset.js'
import { CreatePortfolioInputSchema, PortfolioSchema, PortfolioValueSchema, UpdatePortfolioInputSchema, type Portfolio, type PortfolioValue } from '../../schemas/portfolio.js'
import { CreateExclusionInputSchema, ExcludedTransactionSchema, assertOwnClient } from '../../schemas/excluded-transaction.js'
import { DashboardSchema } from '../../schemas/dashboard.js'
import { QuoteSchema } from '../../schemas/quote.js'
import { StatsSchema } from '../../schemas/stats.js'
import { MeSchema } from '../auth/schemas.js'
import { PRINCIPAL_TYPES } from '../../schemas/auth.js'
import { ItemStatusSchema, type ItemStatus } from '../../item-status.js'
import type { GraphqlContext } from './context.js'
import { readArguments } from './arguments.js'
import { formattedSubscriptionError } from './errors.js'
import { TypeBoxToGraphql } from './typebox.js'
import { QUERY_QUOTE_COST, type FieldCost } from './cost.js'
import { selects, withReadAssets } from './loaders.js'
import { subscriberPrincipal } from './session.js'

/** A portfolio's assets are unbounded; cost estimates assume this many. */
export const ASSETS_PER_PORTFOLIO_ESTIMATE = 20

/** GraphQL lists default to 100 items, REST to 1000 (docs/api.md#limits). */
const GRAPHQL_PAGE_SIZE = 100

type Field<Source = unknown> = GraphQLFieldConfig<Source, GraphqlContext>

/** An id no record can have (ids are at most 64 characters) names nothing: no query is made. */
function possibleId (id: string): boolean {
  return IdParamsSchema.properties.id.maxLength !== undefined && id.length <= IdParamsSchema.properties.id.maxLength && id.length > 0
}

const pageArgs: GraphQLFieldConfigArgumentMap = {
  limit: { type: GraphQLInt, defaultValue: GRAPHQL_PAGE_SIZE, description: `Page size, 1 to ${MAX_PAGE_SIZE}` },
  offset: { type: GraphQLInt, defaultValue: 0, description: PageQuerySchema.properties.offset.description }
}
const pageCost: FieldCost = { items: GRAPHQL_PAGE_SIZE, pageArgument: 'limit' }
const idArg = { id: { type: new GraphQLNonNull(GraphQLID) } }

/** A list that is never null of items that are never null. */
function listOf<T extends GraphQLObjectType> (type: T): GraphQLNonNull<GraphQLList<GraphQLNonNull<T>>> {
  return new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(type)))
}

/**
 * The GraphQL schema (docs/api.md#graphql), its types made from the REST TypeBox schemas and
 * its resolvers over the same repositories, guards and rules. Services come from the context (`ctx.app`),
 * so the schema itself can be built — and printed to `schema.graphql` — without an app.
 */
export function buildGraphqlSchema (): GraphQLSchema {
  const types = new TypeBoxToGraphql({ AssetType: ASSET_TYPES, PrincipalType: PRINCIPAL_TYPES })
  const AssetQuote = types.objectType(QuoteSchema)
  const AssetDashboard = types.objectType(DashboardSchema)

  const PortfolioAsset = types.objectType(AssetSchema, () => ({
    quote: { type: AssetQuote, description: 'The current quote of the asset\'s symbol; null when the provider has none', extensions: { cost: { base: 5 } satisfies FieldCost } },
    dashboard: { type: AssetDashboard, description: 'Position, monthly history and buys of the asset', extensions: { cost: { base: 25 } satisfies FieldCost } }
  }))
  const PortfolioValue = types.objectType(PortfolioValueSchema)
  const Portfolio = types.objectType(PortfolioSchema, () => ({
    assets: { type: listOf(PortfolioAsset), description: 'The portfolio\'s assets, oldest first', extensions: { cost: { items: ASSETS_PER_PORTFOLIO_ESTIMATE } satisfies FieldCost } },
    value: {
      type: new GraphQLNonNull(PortfolioValue),
      description: 'Total value of the portfolio',
      resolve: (portfolio: Portfolio): PortfolioValue => ({ portfolioId: portfolio.id, totalValue: portfolio.totalValue, currency: 'BRL', lastUpdate: portfolio.updatedAt })
    }
  }))
  const SystemStats = types.objectType(StatsSchema)
  const Principal = types.objectType(MeSchema, undefined, 'Principal')
  const ExcludedTransaction = types.objectType(ExcludedTransactionSchema)
  const AggregatorItemStatus = types.objectType(ItemStatusSchema)

  const query: Record<string, Field> = {
    portfolios: {
      type: listOf(Portfolio),
      description: 'Portfolios, optionally of one user (x-api-key)',
      args: { userId: { type: GraphQLID }, ...pageArgs },
      extensions: { cost: pageCost },
      resolve: async (_root, args: Record<string, unknown>, ctx) => {
        await ctx.credentials.apiKey()
        const query = readArguments.portfolios(args)
        return await ctx.app.store.portfolios.list({ userId: query.userId }, pageOf(query))
      }
    },
    portfolio: {
      type: Portfolio,
      description: 'One portfolio; null when no portfolio has this id (x-api-key)',
      args: idArg,
      resolve: async (_root, { id }: { id: string }, ctx, info) => {
        await ctx.credentials.apiKey()
        if (!possibleId(id)) return null
        // Asked with its assets, as REST's detail: one statement, whose total is the assets'.
        if (!selects(info, 'assets')) return await ctx.app.store.portfolios.get(id) ?? null
        const read = await ctx.app.store.portfolios.withAssets(id)
        return read === undefined ? null : withReadAssets(read.portfolio, read.assets)
      }
    },
    asset: {
      type: PortfolioAsset,
      description: 'One asset; null when no asset has this id (x-api-key)',
      args: idArg,
      resolve: async (_root, { id }: { id: string }, ctx) => {
        await ctx.credentials.apiKey()
        return possibleId(id) ? await ctx.app.store.assets.get(id) ?? null : null
      }
    },
    assets: {
      type: listOf(PortfolioAsset),
      description: 'Assets, optionally of one portfolio and one type (x-api-key)',
      args: { portfolioId: { type: GraphQLID }, type: { type: types.enumOf(AssetTypeSchema) }, ...pageArgs },
      extensions: { cost: pageCost },
      resolve: async (_root, args: Record<string, unknown>, ctx) => {
        await ctx.credentials.apiKey()
        const query = readArguments.assets(args)
        return await ctx.app.store.assets.list({ portfolioId: query.portfolioId, type: query.type }, pageOf(query))
      }
    },
    // Resolved by its loader: every quote of a document in one provider batch.
    quote: {
      type: AssetQuote,
      description: 'The current quote of a ticker; null when the provider has none (x-api-key)',
      args: { symbol: { type: new GraphQLNonNull(GraphQLString) } },
      extensions: { cost: { base: QUERY_QUOTE_COST } satisfies FieldCost }
    },
    stats: {
      type: new GraphQLNonNull(SystemStats),
      description: 'Counts and total value of the store (x-api-key)',
      resolve: async (_root, _args, ctx) => {
        await ctx.credentials.apiKey()
        return await ctx.app.store.stats.get()
      }
    },
    me: {
      type: Principal,
      description: 'The calling principal with its claims (Bearer token)',
      resolve: async (_root, _args, ctx) => {
        const { id, type, expiresAt, issuedAt, payload } = await ctx.credentials.principal()
        return { id, type, expiresAt, issuedAt, payload }
      }
    },
    excludedTransactions: {
      type: listOf(ExcludedTransaction),
      description: 'Excluded transactions of one client; a client principal sees only its own (Bearer token)',
      args: { clientId: { type: new GraphQLNonNull(GraphQLID) } },
      extensions: { cost: { items: GRAPHQL_PAGE_SIZE } satisfies FieldCost },
      resolve: async (_root, { clientId }: { clientId: string }, ctx) => {
        const principal = await ctx.credentials.principal()
        const query = readArguments.excludedTransactions({ clientId })
        const ownClientId = query.client_id.trim()
        assertOwnClient(principal, ownClientId)
        return await ctx.app.store.exclusions.list(ownClientId, pageOf(query))
      }
    }
  }

  const mutation: Record<string, Field> = {
    createPortfolio: {
      type: new GraphQLNonNull(Portfolio),
      description: 'Create a portfolio (x-api-key)',
      args: { input: { type: new GraphQLNonNull(types.inputType(CreatePortfolioInputSchema)) } },
      resolve: async (_root, { input }: { input: unknown }, ctx) => {
        await ctx.credentials.apiKey()
        return await ctx.app.store.portfolios.create(readArguments.createPortfolio({ input }))
      }
    },
    updatePortfolio: {
      type: Portfolio,
      description: 'Rename or describe a portfolio; null when no portfolio has this id (x-api-key)',
      args: { ...idArg, input: { type: new GraphQLNonNull(types.inputType(UpdatePortfolioInputSchema)) } },
      resolve: async (_root, { id, input }: { id: string, input: unknown }, ctx) => {
        await ctx.credentials.apiKey()
        const update = readArguments.updatePortfolio({ input })
        return possibleId(id) ? await ctx.app.store.portfolios.update(id, update) ?? null : null
      }
    },
    deletePortfolio: {
      type: new GraphQLNonNull(GraphQLBoolean),
      description: 'Delete a portfolio and its assets; false when no portfolio has this id (x-api-key)',
      args: idArg,
      resolve: async (_root, { id }: { id: string }, ctx) => {
        await ctx.credentials.apiKey()
        return possibleId(id) && await ctx.app.store.portfolios.delete(id)
      }
    },
    createAsset: {
      type: new GraphQLNonNull(PortfolioAsset),
      description: 'Add an asset to a portfolio (x-api-key)',
      args: { input: { type: new GraphQLNonNull(types.inputType(CreateAssetInputSchema)) } },
      resolve: async (_root, { input }: { input: unknown }, ctx) => {
        await ctx.credentials.apiKey()
        const asset = await ctx.app.store.assets.create(readArguments.createAsset({ input }))
        if (asset === undefined) throw new NotFoundError('Portfolio')
        return asset
      }
    },
    updateAsset: {
      type: PortfolioAsset,
      description: 'Change the quantity or price of an asset; null when no asset has this id (x-api-key)',
      args: { ...idArg, input: { type: new GraphQLNonNull(types.inputType(UpdateAssetInputSchema)) } },
      resolve: async (_root, { id, input }: { id: string, input: unknown }, ctx) => {
        await ctx.credentials.apiKey()
        const update = readArguments.updateAsset({ input })
        return possibleId(id) ? await ctx.app.store.assets.update(id, update) ?? null : null
      }
    },
    deleteAsset: {
      type: new GraphQLNonNull(GraphQLBoolean),
      description: 'Remove an asset; false when no asset has this id (x-api-key)',
      args: idArg,
      resolve: async (_root, { id }: { id: string }, ctx) => {
        await ctx.credentials.apiKey()
        return possibleId(id) && await ctx.app.store.assets.delete(id)
      }
    },
    excludeTransaction: {
      type: new GraphQLNonNull(ExcludedTransaction),
      description: 'Exclude a transaction (idempotent per client and transaction; a client principal only its own) (Bearer token)',
      args: { input: { type: new GraphQLNonNull(types.inputType(CreateExclusionInputSchema)) } },
      resolve: async (_root, { input }: { input: unknown }, ctx) => {
        const principal = await ctx.credentials.principal()
        const exclusion = readArguments.excludeTransaction({ input })
        assertOwnClient(principal, exclusion.client_id)
        return (await ctx.app.store.exclusions.create(exclusion)).record
      }
    },
    deleteExcludedTransaction: {
      type: new GraphQLNonNull(GraphQLBoolean),
      description: 'Remove an exclusion; false when none has this id (a client principal only its own) (Bearer token)',
      args: idArg,
      resolve: async (_root, { id }: { id: string }, ctx) => {
        const principal = await ctx.credentials.principal()
        const existing = possibleId(id) ? await ctx.app.store.exclusions.get(id) : undefined
        if (existing === undefined) return false
        assertOwnClient(principal, existing.client_id)
        return await ctx.app.store.exclusions.delete(id)
      }
    }
  }

  const subscription: Record<string, Field<ItemStatus>> = {
    aggregatorItem: {
      type: new GraphQLNonNull(AggregatorItemStatus),
      description: 'The verified status of an aggregator item, each time a webhook about it arrives at any instance (Bearer token; a client only its own items)',
      args: { itemId: { type: new GraphQLNonNull(GraphQLID) } },
      subscribe: async (_root, args: unknown, ctx: GraphqlContext) => {
        try {
          const principal = await subscriberPrincipal(ctx)
          const { itemId } = readArguments.aggregatorItem(args)
          if (principal.type === 'client') await ctx.ownership.assertOwner(principal.id, itemId, ctx.log)
          return ctx.app.itemStatus.subscribe(itemId)
        } catch (error) {
          throw formattedSubscriptionError(error, 'aggregatorItem', ctx.log)
        }
      },
      resolve: (status: ItemStatus) => status
    }
  }

  return new GraphQLSchema({
    query: new GraphQLObjectType({ name: 'Query', fields: query }),
    mutation: new GraphQLObjectType({ name: 'Mutation', fields: mutation }),
    subscription: new GraphQLObjectType({ name: 'Subscription', fields: subscription as Record<string, Field> })
  })
}
