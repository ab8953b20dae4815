import {
  GraphQLBoolean, GraphQLID, GraphQLInt, GraphQLList, GraphQLNonNull, GraphQLString,
  type GraphQLFieldConfig, type GraphQLFieldConfigArgumentMap, type GraphQLObjectType
} from 'graphql'
import { MAX_PAGE_SIZE, PageQuerySchema } from '../../schemas/common.js'
import { AssetTypeSchema, CreateAssetInputSchema, UpdateAssetInputSchema } from '../../schemas/asset.js'
import { CreateTransactionInputSchema } from '../../schemas/transaction.js'
import { CreatePortfolioInputSchema, UpdatePortfolioInputSchema } from '../../schemas/portfolio.js'
import { CreateExclusionInputSchema } from '../../schemas/excluded-transaction.js'
import { NotFoundError } from '../../errors.js'
import type { ValuationEvent } from '../../domain/index.js'
import type { GraphqlContext } from './context.js'
import { readArguments } from './arguments.js'
import { formattedSubscriptionError } from '../../plugins/graphql-errors.js'
import type { TypeBoxToGraphql } from '../../schemas/graphql.js'
import { listCost, QUERY_QUOTE_COST } from './guard.js'
import { selects, withReadAssets } from './loaders.js'
import { nullWhereNotFound, orFalse } from './not-found.js'

/**
 * The credential of the portfolio fields, as REST's portfolio routes (docs/api.md#whose-portfolios):
 * with a user's token a field reaches only the user's own portfolios and what they hold.
 */
const PORTFOLIO_CREDENTIAL = ' (x-api-key, or a user\'s token for its own portfolios: PORTFOLIO_ACCESS)'

/** GraphQL lists default to 100 items, REST to 1000 (docs/api.md#limits). */
const GRAPHQL_PAGE_SIZE = 100

export type Field<Source = unknown> = GraphQLFieldConfig<Source, GraphqlContext>

/** The object types the root fields answer, made by schema.ts. */
export interface SchemaTypes {
  types: TypeBoxToGraphql<GraphqlContext>
  Portfolio: GraphQLObjectType
  PortfolioValuation: GraphQLObjectType
  PortfolioAsset: GraphQLObjectType
  AssetTransaction: GraphQLObjectType
  AssetQuote: GraphQLObjectType
  SystemStats: GraphQLObjectType
  Principal: GraphQLObjectType
  ExcludedTransaction: GraphQLObjectType
  AggregatorItemStatus: GraphQLObjectType
}

const pageArgs: GraphQLFieldConfigArgumentMap = {
  limit: { type: GraphQLInt, defaultValue: GRAPHQL_PAGE_SIZE, description: `Page size, 1 to ${MAX_PAGE_SIZE}` },
  offset: { type: GraphQLInt, defaultValue: 0, description: PageQuerySchema.properties.offset.description }
}
const idArg = { id: { type: new GraphQLNonNull(GraphQLID) } }

/** A list that is never null of items that are never null. */
export function listOf<T extends GraphQLObjectType> (type: T): GraphQLNonNull<GraphQLList<GraphQLNonNull<T>>> {
  return new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(type)))
}

type Args = Record<string, unknown>
type IdArgs = { id: string } & Args

/*
 * The resolvers are adapters: each reads its arguments with the REST schemas (arguments.ts), calls
 * one domain service with the request's Access — the service checks the credential, normalises,
 * and throws NOT_FOUND for an unknown id — and answers what the service answers. A nullable
 * field answers NOT_FOUND as null (nullWhereNotFound), a delete as false (orFalse).
 */

/** The root query fields (docs/api.md#graphql); `quote` is resolved by its loader (loaders.ts). */
export function queryFields ({ types, ...type }: SchemaTypes): Record<string, Field> {
  return nullWhereNotFound<GraphqlContext>({
    portfolios: {
      type: listOf(type.Portfolio),
      description: 'Portfolios, optionally of one user' + PORTFOLIO_CREDENTIAL,
      args: { userId: { type: GraphQLID }, ...pageArgs },
      extensions: { complexity: listCost(GRAPHQL_PAGE_SIZE) },
      resolve: async (_root, args: Args, ctx) => {
        const query = readArguments.portfolios(args)
        return await ctx.domain.portfolios.list(ctx.access, query, query)
      }
    },
    portfolio: {
      type: type.Portfolio,
      description: 'One portfolio; null when no portfolio has this id' + PORTFOLIO_CREDENTIAL,
      args: idArg,
      resolve: async (_root, { id }: IdArgs, ctx, info) => {
        // Asked with its assets, as REST's detail: one statement, whose total is the assets'.
        if (!selects(info, 'assets')) return await ctx.domain.portfolios.portfolioOnly(ctx.access, id)
        const read = await ctx.domain.portfolios.portfolioAndAssets(ctx.access, id)
        return withReadAssets(read.portfolio, read.assets)
      }
    },
    asset: {
      type: type.PortfolioAsset,
      description: 'One asset; null when no asset has this id' + PORTFOLIO_CREDENTIAL,
      args: idArg,
      resolve: async (_root, { id }: IdArgs, ctx) => (await ctx.domain.assets.get(ctx.access, id)).value
    },
    assets: {
      type: listOf(type.PortfolioAsset),
      description: 'Assets, optionally of one portfolio and one type' + PORTFOLIO_CREDENTIAL,
      args: { portfolioId: { type: GraphQLID }, type: { type: types.enumOf(AssetTypeSchema) }, ...pageArgs },
      extensions: { complexity: listCost(GRAPHQL_PAGE_SIZE) },
      resolve: async (_root, args: Args, ctx) => {
        const query = readArguments.assets(args)
        return await ctx.domain.assets.list(ctx.access, query, query)
      }
    },
    // Resolved by its loader: every quote of a document in one provider batch.
    quote: {
      type: type.AssetQuote,
      description: 'The current quote of a ticker; null when the provider has none' + PORTFOLIO_CREDENTIAL,
      args: { symbol: { type: new GraphQLNonNull(GraphQLString) } },
      extensions: { complexity: QUERY_QUOTE_COST }
    },
    stats: {
      type: new GraphQLNonNull(type.SystemStats),
      description: 'Counts and total value of the store (x-api-key: a trusted server\'s)',
      resolve: async (_root, _args, ctx) => await ctx.domain.stats.get(ctx.access)
    },
    me: {
      type: type.Principal,
      description: 'The calling principal with its claims (Bearer token)',
      resolve: async (_root, _args, ctx) => await ctx.domain.principals.me(ctx.access)
    },
    excludedTransactions: {
      type: listOf(type.ExcludedTransaction),
      description: 'Excluded transactions of one client; a client principal sees only its own (Bearer token)',
      args: { clientId: { type: new GraphQLNonNull(GraphQLID) }, ...pageArgs },
      extensions: { complexity: listCost(GRAPHQL_PAGE_SIZE) },
      resolve: async (_root, args: Args, ctx) => {
        const query = readArguments.excludedTransactions(args)
        return await ctx.domain.exclusions.list(ctx.access, query.client_id, query)
      }
    }
  })
}

/** The root mutation fields (docs/api.md#graphql). */
export function mutationFields ({ types, ...type }: SchemaTypes): Record<string, Field> {
  return nullWhereNotFound<GraphqlContext>({
    createPortfolio: {
      type: new GraphQLNonNull(type.Portfolio),
      description: 'Create a portfolio' + PORTFOLIO_CREDENTIAL,
      args: { input: { type: new GraphQLNonNull(types.inputType(CreatePortfolioInputSchema)) } },
      resolve: async (_root, args: Args, ctx) =>
        await ctx.domain.portfolios.create(ctx.access, readArguments.createPortfolio(args))
    },
    updatePortfolio: {
      type: type.Portfolio,
      description: 'Rename or describe a portfolio; null when no portfolio has this id' + PORTFOLIO_CREDENTIAL,
      args: { ...idArg, input: { type: new GraphQLNonNull(types.inputType(UpdatePortfolioInputSchema)) } },
      resolve: async (_root, args: IdArgs, ctx) => {
        const input = readArguments.updatePortfolio(args)
        return (await ctx.domain.portfolios.update(ctx.access, args.id, input)).portfolio
      }
    },
    deletePortfolio: {
      type: new GraphQLNonNull(GraphQLBoolean),
      description: 'Delete a portfolio and its assets; false when no portfolio has this id' + PORTFOLIO_CREDENTIAL,
      args: idArg,
      resolve: async (_root, { id }: IdArgs, ctx) => await orFalse(ctx.domain.portfolios.delete(ctx.access, id))
    },
    createAsset: {
      type: new GraphQLNonNull(type.PortfolioAsset),
      description: 'Add an asset to a portfolio' + PORTFOLIO_CREDENTIAL,
      args: { input: { type: new GraphQLNonNull(types.inputType(CreateAssetInputSchema)) } },
      resolve: async (_root, args: Args, ctx) =>
        await ctx.domain.assets.create(ctx.access, readArguments.createAsset(args))
    },
    updateAsset: {
      type: type.PortfolioAsset,
      description: 'Change the quantity or price of an asset; null when no asset has this id' + PORTFOLIO_CREDENTIAL,
      args: { ...idArg, input: { type: new GraphQLNonNull(types.inputType(UpdateAssetInputSchema)) } },
      resolve: async (_root, args: IdArgs, ctx) =>
        (await ctx.domain.assets.update(ctx.access, args.id, readArguments.updateAsset(args))).value
    },
    deleteAsset: {
      type: new GraphQLNonNull(GraphQLBoolean),
      description: 'Remove an asset; false when no asset has this id' + PORTFOLIO_CREDENTIAL,
      args: idArg,
      resolve: async (_root, { id }: IdArgs, ctx) => await orFalse(ctx.domain.assets.delete(ctx.access, id))
    },
    addTransaction: {
      type: new GraphQLNonNull(type.AssetTransaction),
      description: 'Record a dated buy or sale of an asset; its quantity, price (average price) and totalValue ' +
        'follow; a sale of more than is held at its date is refused with INSUFFICIENT_QUANTITY' + PORTFOLIO_CREDENTIAL,
      args: {
        assetId: { type: new GraphQLNonNull(GraphQLID) },
        input: { type: new GraphQLNonNull(types.inputType(CreateTransactionInputSchema)) }
      },
      resolve: async (_root, args: Args, ctx) => await ctx.domain.transactions.add(
        ctx.access, String(args.assetId), readArguments.addTransaction(args))
    },
    removeTransaction: {
      type: new GraphQLNonNull(GraphQLBoolean),
      description: 'Undo a buy or sale of an asset; false when there is no such asset or transaction; refused ' +
        'with INSUFFICIENT_QUANTITY when that would leave less than nothing held at some date' + PORTFOLIO_CREDENTIAL,
      args: { assetId: { type: new GraphQLNonNull(GraphQLID) }, ...idArg },
      resolve: async (_root, { assetId, id }: IdArgs, ctx) =>
        await orFalse(ctx.domain.transactions.remove(ctx.access, String(assetId), id))
    },
    excludeTransaction: {
      type: new GraphQLNonNull(type.ExcludedTransaction),
      description: 'Exclude a transaction (idempotent per client and transaction; a client principal only its own) ' +
        '(Bearer token)',
      args: { input: { type: new GraphQLNonNull(types.inputType(CreateExclusionInputSchema)) } },
      resolve: async (_root, args: Args, ctx) =>
        (await ctx.domain.exclusions.create(ctx.access, readArguments.excludeTransaction(args))).record
    },
    deleteExcludedTransaction: {
      type: new GraphQLNonNull(GraphQLBoolean),
      description: 'Remove an exclusion; false when none has this id (a client principal only its own) (Bearer token)',
      args: idArg,
      resolve: async (_root, { id }: IdArgs, ctx) => await orFalse(ctx.domain.exclusions.delete(ctx.access, id))
    }
  })
}

/** A subscription's iterator, or its refusal formatted (Mercurius sends a refusal unformatted). */
async function subscription (field: string, ctx: GraphqlContext, open: () => Promise<AsyncIterator<unknown>>) {
  try {
    return await open()
  } catch (error) {
    throw formattedSubscriptionError(error, field, ctx.log)
  }
}

/** The subscription fields (docs/api.md#graphql). */
export function subscriptionFields (type: SchemaTypes): Record<string, Field> {
  return {
    aggregatorItem: {
      type: new GraphQLNonNull(type.AggregatorItemStatus),
      description: 'The verified status of an aggregator item, each time a webhook about it arrives at any ' +
        'instance (Bearer token; a client only its own items)',
      args: { itemId: { type: new GraphQLNonNull(GraphQLID) } },
      subscribe: async (_root, args: unknown, ctx: GraphqlContext) => await subscription('aggregatorItem', ctx,
        async () => await ctx.domain.aggregatorItems.subscribe(ctx.access, readArguments.aggregatorItem(args).itemId,
          ctx.log)),
      resolve: (status: unknown) => status
    },
    portfolioValuation: {
      type: new GraphQLNonNull(type.PortfolioValuation),
      description: 'The portfolio\'s valuation at once, then each time a value changes; when the portfolio is ' +
        'deleted, an error NOT_FOUND and the end' + PORTFOLIO_CREDENTIAL,
      args: idArg,
      subscribe: async (_root, args: unknown, ctx: GraphqlContext) => await subscription('portfolioValuation', ctx,
        async () => await ctx.domain.liveValuations.open(ctx.access, (args as IdArgs).id)),
      resolve: (event: unknown) => {
        const delivered = event as ValuationEvent
        if (delivered.kind === 'deleted') throw new NotFoundError('Portfolio')
        return delivered.valuation
      }
    }
  }
}
