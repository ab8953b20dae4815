import { Type } from '@sinclair/typebox'
import { AssetSchema } from '../schemas/asset.js'
import { AssetEventSchema } from '../schemas/corporate-events.js'
import { DashboardSchema } from '../schemas/dashboard.js'
import { QuoteSchema } from '../schemas/quote.js'
import { AssetTransactionSchema } from '../schemas/transaction.js'
import { batched } from './operation.js'

/*
 * The fields GraphQL adds to an asset (`PortfolioAsset`), each a batch: one domain call for every asset of an
 * answer. GraphQL's alone, so no module registers a route of them; GraphQL lists them after the asset's own
 * declarations (./portfolio-assets.ts), in this order.
 */

/** An asset's transactions are unbounded; cost estimates assume this many. */
const TRANSACTIONS_PER_ASSET_ESTIMATE = 20
/** An asset's corporate events: a year of monthly rendimentos and a few more. */
const EVENTS_PER_ASSET_ESTIMATE = 20

export const assetFieldOperations = [
  // The transactions of every asset of an answer in one statement.
  batched({
    output: Type.Array(AssetTransactionSchema),
    scope: 'portfolio',
    batch: async (domain, call, assets) => {
      const byAsset = await domain.transactions.ofAssets(call.access, assets.map(asset => asset.id))
      return assets.map(asset => byAsset.get(asset.id) ?? [])
    },
    graphql: {
      field: 'transactions',
      of: AssetSchema,
      description: 'The asset\'s buys and sales, by date then as recorded',
      cost: { items: TRANSACTIONS_PER_ASSET_ESTIMATE }
    }
  }),

  // The quotes of every asset of an answer in one provider batch (shared with REST's cache and single flight).
  batched({
    output: QuoteSchema,
    scope: 'portfolio',
    batch: async (domain, call, assets) => await domain.quotes.ofAssets(call.access, assets, call.log),
    graphql: {
      field: 'quote',
      of: AssetSchema,
      nullable: true,
      description: 'The current quote of the asset\'s symbol; null when the provider has none',
      cost: 5
    }
  }),

  // The dashboards of every asset of an answer from one read of their portfolios' holdings and one batch of quotes.
  batched({
    output: DashboardSchema,
    scope: 'portfolio',
    batch: async (domain, call, assets) => await domain.dashboards.ofAssets(call.access, assets, call.log),
    graphql: {
      field: 'dashboard',
      of: AssetSchema,
      nullable: true,
      description: 'Position, monthly history, buys and sales of the asset',
      cost: 25
    }
  }),

  // The corporate events of every asset of an answer from one read of their transactions and one batch of events.
  batched({
    output: Type.Array(AssetEventSchema),
    scope: 'portfolio',
    batch: async (domain, call, assets) => await domain.events.ofAssets(call.access, assets, call.log),
    graphql: {
      field: 'events',
      of: AssetSchema,
      description: 'The corporate events the asset was entitled to, by data com',
      cost: { items: EVENTS_PER_ASSET_ESTIMATE }
    }
  })
]
