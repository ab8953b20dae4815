import type { QuoteProvider } from '../quotes/provider.js'
import type { ChangeFeed } from '../change-feed/change-feed-core.js'
import type { Telemetry } from '../observability/telemetry.js'
import type { AggregatorApi } from '../upstream/aggregator.js'
import { AggregatorInvestments } from '../upstream/investments.js'
import { AggregatorItemService } from './aggregator-items.js'
import { AssetService } from './assets.js'
import { DashboardService } from './dashboard-service.js'
import { EventBooks } from './event-books.js'
import { EventsRefresh } from './events-refresh.js'
import { EventService } from './income.js'
import { ExclusionService } from './exclusions.js'
import { IMPORT, IMPORT_DEFAULTS, ImportService, type ImportOptions } from './imports.js'
import { ItemOwnership } from './item-ownership.js'
import {
  ItemVerificationService, VERIFICATION_DEFAULTS, VERIFY_ITEM, type VerificationOptions
} from './item-verifications.js'
import { JOB_RUNNER_DEFAULTS, JobRunner, type JobRunnerOptions } from './jobs.js'
import { PortfolioService } from './portfolios.js'
import { PerformanceService } from './performance-service.js'
import { PERFORMANCE_CACHE_DEFAULTS, PerformanceCache, type PerformanceCacheOptions } from './performance-cache.js'
import { PrincipalService } from './principals.js'
import { QuoteService } from './quotes.js'
import { StatsService } from './stats.js'
import { TransactionService } from './transactions.js'
import { ValuationService } from './portfolio-valuation.js'
import { LIVE_VALUATION_DEFAULTS, LiveValuations, type LiveValuationOptions } from './live-valuations.js'
import type { DataStore, Log } from './ports.js'
import {
  CachedPortfolioReads, READ_CACHE_DEFAULTS, type PortfolioReads, type ReadCacheOptions
} from './portfolio-read-cache.js'

export type { Access } from './access.js'
export type { LiveValuationOptions } from './live-valuations.js'
export type { ReadCacheOptions } from './portfolio-read-cache.js'
export type { PerformanceCacheOptions } from './performance-cache.js'

/** Every domain service: what REST, GraphQL and a host app all go through. */
export interface Domain {
  portfolios: PortfolioService
  assets: AssetService
  transactions: TransactionService
  quotes: QuoteService
  dashboards: DashboardService
  exclusions: ExclusionService
  aggregatorItems: AggregatorItemService
  stats: StatsService
  principals: PrincipalService
  valuations: ValuationService
  /** The corporate events of assets and the income of portfolios (docs/api.md#corporate-events). */
  events: EventService
  /** Keeps the stored positions with their symbols' corporate events: started by the app, run at will by a test. */
  eventsRefresh: EventsRefresh
  /** Portfolio performances over ranges, kept per portfolio and range while the feed proves it hears every change. */
  performances: PerformanceService
  /** The live valuations of this instance: one per app (its streams share one quote refresher). */
  liveValuations: LiveValuations
  /** Webhook item verifications, tried at once and queued when they fail. */
  itemVerifications: ItemVerificationService
  /** Investment imports from the aggregator into portfolios. */
  imports: ImportService
  /** This instance's runner of the queue's jobs (verifications, imports): started and closed by the modules. */
  jobs: JobRunner
  /**
   * Ends what the services hold open: the live valuation streams, the read and performance caches, the events'
   * refresh (the app closes).
   */
  close: () => void
}

/** The adapters the services stand on; read when a service is first used. */
export interface DomainAdapters {
  /** src/store's `Store`, which implements the port. */
  readonly store: DataStore
  readonly quotes: QuoteProvider
  readonly aggregator: Pick<AggregatorApi, 'call' | 'configured'>
  /** Absent in a host that mounts portfolios without it: the reads then all go to the store. */
  readonly changeFeed: Pick<ChangeFeed, 'itemStatuses' | 'onPortfolioChange' | 'proven' | 'publishItemStatus'>
  readonly telemetry?: Telemetry
  /** Where work no request asked for logs (the live valuations' quote refresh). */
  readonly log: Log
}

/** The work done in the background (docs/deploy.md#background-work): the queue's runner, and its kinds of jobs. */
export interface BackgroundOptions {
  queue: JobRunnerOptions
  verification: VerificationOptions
  imports: ImportOptions
}

export const BACKGROUND_DEFAULTS: BackgroundOptions = {
  queue: JOB_RUNNER_DEFAULTS, verification: VERIFICATION_DEFAULTS, imports: IMPORT_DEFAULTS
}

/**
 * The services over one set of adapters. Each is made at its first use, so a host that serves
 * only portfolios needs no quote provider nor aggregator; they keep no state but the aggregator
 * items' ownership cache and the live valuations, which every interface of the app shares.
 */
export function createDomain (
  adapters: DomainAdapters,
  liveValuations: LiveValuationOptions = LIVE_VALUATION_DEFAULTS,
  readCache: ReadCacheOptions = READ_CACHE_DEFAULTS,
  performanceCache: PerformanceCacheOptions = PERFORMANCE_CACHE_DEFAULTS,
  background: BackgroundOptions = BACKGROUND_DEFAULTS
): Domain {
  const made = new Map<keyof Domain, unknown>()
  function once<K extends keyof Domain> (name: K, make: () => Domain[K]): Domain[K] {
    if (!made.has(name)) made.set(name, make())
    return made.get(name) as Domain[K]
  }
  let cache: CachedPortfolioReads | undefined
  let performances: PerformanceCache | undefined
  let books: EventBooks | undefined
  /** The events of symbols every service shares (one warning per unapplied event), made at first use. */
  function eventBooks (): EventBooks {
    books ??= new EventBooks(adapters.quotes as DomainAdapters['quotes'] | undefined, adapters.log)
    return books
  }
  /** The portfolio reads every service shares: cached when there is a change feed to keep them true. */
  function reads (): PortfolioReads {
    const feed = adapters.changeFeed as DomainAdapters['changeFeed'] | undefined
    const off = readCache.maxEntries === 0 || readCache.ttlMs === 0
    if (feed === undefined || off) return adapters.store.portfolios
    cache ??= new CachedPortfolioReads(adapters.store.portfolios, feed, readCache, adapters.telemetry)
    return cache
  }
  const domain: Domain = {
    get portfolios () { return once('portfolios', () => new PortfolioService(adapters.store, reads())) },
    get assets () { return once('assets', () => new AssetService(adapters.store, eventBooks())) },
    get transactions () { return once('transactions', () => new TransactionService(adapters.store, eventBooks())) },
    get quotes () { return once('quotes', () => new QuoteService(adapters.quotes)) },
    get dashboards () {
      return once('dashboards', () => new DashboardService(adapters.store.assets, adapters.quotes, eventBooks()))
    },
    get exclusions () { return once('exclusions', () => new ExclusionService(adapters.store.exclusions)) },
    get aggregatorItems () {
      return once('aggregatorItems', () => new AggregatorItemService(
        new ItemOwnership(adapters.aggregator, adapters.telemetry), adapters.changeFeed
      ))
    },
    get stats () { return once('stats', () => new StatsService(adapters.store.stats)) },
    get principals () { return once('principals', () => new PrincipalService()) },
    get valuations () {
      return once('valuations', () =>
        new ValuationService(reads(), adapters.store.assets, adapters.quotes, adapters.store.portfolios))
    },
    get performances () {
      return once('performances', () => {
        // Without a change feed nothing tells a portfolio's change: nothing is kept.
        const feed = adapters.changeFeed as DomainAdapters['changeFeed'] | undefined
        if (feed !== undefined && performanceCache.maxEntries > 0) {
          performances = new PerformanceCache(feed, performanceCache, adapters.telemetry)
        }
        return new PerformanceService(reads(), adapters.store.assets, adapters.quotes, eventBooks(), performances)
      })
    },
    get events () { return once('events', () => new EventService(adapters.store, eventBooks())) },
    get eventsRefresh () {
      return once('eventsRefresh', () => new EventsRefresh(adapters.store, eventBooks(), adapters.log))
    },
    get liveValuations () {
      return once('liveValuations', () => new LiveValuations(
        reads(), adapters.quotes, adapters.changeFeed, adapters.log, liveValuations
      ))
    },
    get itemVerifications () {
      return once('itemVerifications', () => new ItemVerificationService({
        aggregator: adapters.aggregator,
        store: adapters.store,
        changeFeed: adapters.changeFeed,
        runner: () => domain.jobs,
        afterUpdate: async (itemId, log) => { await domain.imports.afterItemUpdated(itemId, log) }
      }, background.verification))
    },
    get imports () {
      return once('imports', () => new ImportService({
        store: adapters.store,
        investments: new AggregatorInvestments(adapters.aggregator),
        runner: () => domain.jobs,
        events: eventBooks(),
        telemetry: adapters.telemetry
      }, background.imports))
    },
    get jobs () {
      return once('jobs', () => new JobRunner(adapters.store.jobs, new Map([
        [VERIFY_ITEM, domain.itemVerifications.kind],
        [IMPORT, domain.imports.kind]
      ]), adapters.log, background.queue))
    },
    close: () => {
      const open = [made.get('liveValuations'), made.get('eventsRefresh')] as Array<{ close: () => void } | undefined>
      for (const service of open) service?.close()
      cache?.close()
      performances?.close()
    }
  }
  return domain
}
