import type { QuoteProvider } from '../quotes/provider.js'
import type { Store } from '../store/store.js'
import type { ItemStatusFeed } from '../item-status.js'
import { AggregatorItemService, type ItemOwners } from './aggregator-items.js'
import { AssetService } from './assets.js'
import { DashboardService } from './dashboards.js'
import { ExclusionService } from './exclusions.js'
import { PortfolioService } from './portfolios.js'
import { PrincipalService } from './principals.js'
import { QuoteService } from './quotes.js'
import { StatsService } from './stats.js'

export type { Access } from './access.js'

/** Every domain service, for an interface that serves them all (GraphQL); REST modules make their own. */
export interface Domain {
  portfolios: PortfolioService
  assets: AssetService
  quotes: QuoteService
  dashboards: DashboardService
  exclusions: ExclusionService
  aggregatorItems: AggregatorItemService
  stats: StatsService
  principals: PrincipalService
}

export interface DomainDependencies {
  store: Store
  quotes: QuoteProvider
  owners: ItemOwners
  itemStatus: Pick<ItemStatusFeed, 'subscribe'>
}

/** The services over one store, quote provider and aggregator: they hold no state of their own. */
export function createDomain ({ store, quotes, owners, itemStatus }: DomainDependencies): Domain {
  return {
    portfolios: new PortfolioService(store.portfolios),
    assets: new AssetService(store.assets),
    quotes: new QuoteService(quotes),
    dashboards: new DashboardService(store.assets, quotes),
    exclusions: new ExclusionService(store.exclusions),
    aggregatorItems: new AggregatorItemService(owners, itemStatus),
    stats: new StatsService(store.stats),
    principals: new PrincipalService()
  }
}
