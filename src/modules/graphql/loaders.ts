import { Kind, type GraphQLResolveInfo, type SelectionNode } from 'graphql'
import type { Asset } from '../../schemas/asset.js'
import type { Dashboard } from '../../schemas/dashboard.js'
import type { Portfolio } from '../../schemas/portfolio.js'
import type { Quote } from '../../schemas/quote.js'
import type { AssetTransaction } from '../../schemas/transaction.js'
import type { PortfolioValuation } from '../../schemas/valuation.js'
import { readArguments } from './arguments.js'
import type { GraphqlContext } from './context.js'
import { eachOrNull } from './not-found.js'

/** The assets read with their portfolio, in the same statement (`Query.portfolio`), so not read again. */
const READ_ASSETS = Symbol('assets read with the portfolio')

export type PortfolioWithAssets = Portfolio & { [READ_ASSETS]?: Asset[] }

/** A portfolio answered with the assets its statement already read. */
export function withReadAssets (portfolio: Portfolio, assets: Asset[]): PortfolioWithAssets {
  return { ...portfolio, [READ_ASSETS]: assets }
}

/** Whether the query selects `name` on the field being resolved, directly or through fragments. */
export function selects (info: GraphQLResolveInfo, name: string): boolean {
  const within = (selections: readonly SelectionNode[]): boolean => selections.some(selection => {
    if (selection.kind === Kind.FIELD) return selection.name.value === name
    if (selection.kind === Kind.INLINE_FRAGMENT) return within(selection.selectionSet.selections)
    const fragment = info.fragments[selection.name.value]
    return fragment !== undefined && within(fragment.selectionSet.selections)
  })
  return info.fieldNodes.some(node => node.selectionSet !== undefined && within(node.selectionSet.selections))
}

/**
 * Batched fields (Mercurius loaders, one call per field per request whatever the number of
 * parents or aliases), each one call of a domain service: every `quote(symbol:)` of a document
 * in one provider batch; the assets of every portfolio in an answer in one statement, and the
 * transactions of every asset in one more; the quotes
 * of every asset in one provider batch (shared with REST's cache and single flight); the
 * dashboards of every asset from one read of their portfolios' holdings and one batch of quotes.
 * A NOT_FOUND item is `null`, as a nullable field answers it.
 */
export const graphqlLoaders = {
  Query: {
    quote: {
      loader: async (
        queries: Array<{ params: Record<string, unknown> }>, ctx: GraphqlContext
      ): Promise<Array<Quote | null>> => {
        const symbols = queries.map(({ params }) => readArguments.quoteSymbol(params))
        return eachOrNull(await ctx.domain.quotes.quotes(ctx.access, symbols, ctx.log))
      },
      opts: { cache: false }
    }
  },
  Portfolio: {
    assets: {
      loader: async (queries: Array<{ obj: PortfolioWithAssets }>, ctx: GraphqlContext): Promise<Asset[][]> => {
        const unread = queries.filter(({ obj }) => obj[READ_ASSETS] === undefined).map(({ obj }) => obj.id)
        const byPortfolio = unread.length === 0 ? undefined : await ctx.domain.assets.ofPortfolios(ctx.access, unread)
        return queries.map(({ obj }) => obj[READ_ASSETS] ?? byPortfolio?.get(obj.id) ?? [])
      },
      opts: { cache: false }
    },
    valuation: {
      loader: async (queries: Array<{ obj: Portfolio }>, ctx: GraphqlContext): Promise<PortfolioValuation[]> =>
        await ctx.domain.valuations.ofPortfolios(ctx.access, queries.map(({ obj }) => obj.id), ctx.log),
      opts: { cache: false }
    }
  },
  PortfolioAsset: {
    transactions: {
      loader: async (queries: Array<{ obj: Asset }>, ctx: GraphqlContext): Promise<AssetTransaction[][]> => {
        const byAsset = await ctx.domain.transactions.ofAssets(ctx.access, queries.map(({ obj }) => obj.id))
        return queries.map(({ obj }) => byAsset.get(obj.id) ?? [])
      },
      opts: { cache: false }
    },
    quote: {
      loader: async (queries: Array<{ obj: Asset }>, ctx: GraphqlContext): Promise<Array<Quote | null>> =>
        eachOrNull(await ctx.domain.quotes.ofAssets(ctx.access, queries.map(({ obj }) => obj), ctx.log)),
      opts: { cache: false }
    },
    dashboard: {
      loader: async (queries: Array<{ obj: Asset }>, ctx: GraphqlContext): Promise<Array<Dashboard | null>> =>
        eachOrNull(await ctx.domain.dashboards.ofAssets(ctx.access, queries.map(({ obj }) => obj), ctx.log)),
      opts: { cache: false }
    }
  }
}
