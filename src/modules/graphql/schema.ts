import { GraphQLEnumType, GraphQLNonNull, GraphQLObjectType, GraphQLSchema } from 'graphql'
import { ASSET_TYPES, AssetSchema } from '../../schemas/asset.js'
import {
  PortfolioSchema, PortfolioValueSchema, portfolioValue, type Portfolio, type PortfolioValue
} from '../../schemas/portfolio.js'
import { ExcludedTransactionSchema } from '../../schemas/excluded-transaction.js'
import { DashboardSchema } from '../../schemas/dashboard.js'
import { QuoteSchema } from '../../schemas/quote.js'
import { AssetTransactionSchema, TRANSACTION_TYPES } from '../../schemas/transaction.js'
import { StatsSchema } from '../../schemas/stats.js'
import { MeSchema, PRINCIPAL_TYPES } from '../../schemas/auth.js'
import { ITEM_STATUSES, ItemStatusSchema } from '../../store/item-status.js'
import { PortfolioValuationSchema } from '../../schemas/valuation.js'
import {
  DEFAULT_PERFORMANCE_RANGE, PERFORMANCE_RANGE_NAMES, PERFORMANCE_RANGES, PortfolioPerformanceSchema,
  type PerformanceRange
} from '../../schemas/performance.js'
import { TypeBoxToGraphql } from '../../schemas/graphql.js'
import type { GraphqlContext } from './context.js'
import { listCost } from './guard.js'
import { listOf, mutationFields, queryFields, subscriptionFields, type Field, type SchemaTypes } from './fields.js'

/** A portfolio's assets are unbounded; cost estimates assume this many. */
export const ASSETS_PER_PORTFOLIO_ESTIMATE = 20
/** An asset's transactions too. */
export const TRANSACTIONS_PER_ASSET_ESTIMATE = 20

/** A performance asks the provider for a history per symbol (cached), and IBOVESPA, SELIC and IPCA. */
export const PERFORMANCE_COST = 25

/** The ranges of a performance, by GraphQL names (`ONE_YEAR`) whose values are REST's (`1y`). */
const PerformanceRangeEnum = new GraphQLEnumType({
  name: 'PerformanceRange',
  description: 'The period of a performance (REST\'s `range`: 1m, 3m, 6m, ytd, 1y, 5y, max)',
  values: Object.fromEntries(PERFORMANCE_RANGES.map(range => [PERFORMANCE_RANGE_NAMES[range], { value: range }]))
})

/**
 * The GraphQL schema (docs/api.md#graphql), its types made from the REST TypeBox schemas and its
 * resolvers (fields.ts) over the same domain services as REST. Services come from the context
 * (`ctx.domain`), so the schema itself can be built — and printed to `schema.graphql` — without an app.
 */
export function buildGraphqlSchema (): GraphQLSchema {
  const types = new TypeBoxToGraphql<GraphqlContext>({
    AssetType: ASSET_TYPES,
    PrincipalType: PRINCIPAL_TYPES,
    ItemStatus: ITEM_STATUSES,
    TransactionType: TRANSACTION_TYPES,
    Currency: ['BRL']
  })
  const PortfolioValuation = types.objectType(PortfolioValuationSchema)
  const AssetQuote = types.objectType(QuoteSchema)
  const AssetDashboard = types.objectType(DashboardSchema)
  const AssetTransaction = types.objectType(AssetTransactionSchema)

  const PortfolioAsset = types.objectType(AssetSchema, () => ({
    // Resolved by its loader: the transactions of every asset of an answer in one statement.
    transactions: {
      type: listOf(AssetTransaction),
      description: 'The asset\'s buys and sales, by date then as recorded',
      extensions: { complexity: listCost(TRANSACTIONS_PER_ASSET_ESTIMATE) }
    },
    quote: {
      type: AssetQuote,
      description: 'The current quote of the asset\'s symbol; null when the provider has none',
      extensions: { complexity: 5 }
    },
    dashboard: {
      type: AssetDashboard,
      description: 'Position, monthly history, buys and sales of the asset',
      extensions: { complexity: 25 }
    }
  }))
  const PortfolioPerformance = types.objectType(PortfolioPerformanceSchema, () => ({
    range: { type: new GraphQLNonNull(PerformanceRangeEnum), description: 'The period' }
  }))
  const PortfolioValue = types.objectType(PortfolioValueSchema)
  const Portfolio = types.objectType(PortfolioSchema, () => ({
    assets: {
      type: listOf(PortfolioAsset),
      description: 'The portfolio\'s assets, oldest first',
      extensions: { complexity: listCost(ASSETS_PER_PORTFOLIO_ESTIMATE) }
    },
    value: {
      type: new GraphQLNonNull(PortfolioValue),
      description: 'Total value of the portfolio',
      resolve: (portfolio: Portfolio): PortfolioValue => portfolioValue(portfolio)
    },
    // Resolved by its loader: the valuations of every portfolio of an answer in one provider batch.
    valuation: {
      type: new GraphQLNonNull(PortfolioValuation),
      description: 'What the portfolio is worth at market prices',
      extensions: { complexity: 5 }
    },
    performance: {
      type: new GraphQLNonNull(PortfolioPerformance),
      description: 'How the portfolio did over a range, against IBOVESPA, SELIC and IPCA',
      args: {
        range: { type: PerformanceRangeEnum, defaultValue: DEFAULT_PERFORMANCE_RANGE }
      },
      extensions: { complexity: PERFORMANCE_COST },
      resolve: async (portfolio: Portfolio, args: { range: PerformanceRange | null }, ctx: GraphqlContext) =>
        await ctx.domain.performances.performance(ctx.access, portfolio.id, args.range ?? DEFAULT_PERFORMANCE_RANGE,
          ctx.log)
    }
  }))
  const schemaTypes: SchemaTypes = {
    types,
    Portfolio,
    PortfolioValuation,
    PortfolioAsset,
    AssetTransaction,
    AssetQuote,
    SystemStats: types.objectType(StatsSchema),
    Principal: types.objectType(MeSchema, undefined, 'Principal'),
    ExcludedTransaction: types.objectType(ExcludedTransactionSchema),
    AggregatorItemStatus: types.objectType(ItemStatusSchema)
  }

  return new GraphQLSchema({
    query: new GraphQLObjectType({ name: 'Query', fields: queryFields(schemaTypes) }),
    mutation: new GraphQLObjectType({ name: 'Mutation', fields: mutationFields(schemaTypes) }),
    subscription: new GraphQLObjectType({
      name: 'Subscription',
      fields: subscriptionFields(schemaTypes) as Record<string, Field>
    })
  })
}
