import type { BaseLogger, Bindings, ChildLoggerOptions } from 'pino'
import type { Versioned } from '../http/entity-tag.js'
import type { Asset, AssetType, CreateAssetInput } from '../schemas/asset.js'
import type { Trade } from '../schemas/average-cost.js'
import type { Page } from '../schemas/common.js'
import type {
  CreateExclusionInput, ExcludedTransaction, ExcludedTransactionRecord
} from '../schemas/excluded-transaction.js'
import type {
  CreatePortfolioInput, Portfolio, UpdatePortfolioInput
} from '../schemas/portfolio.js'
import type { Stats } from '../schemas/stats.js'
import type { AssetTransaction } from '../schemas/transaction.js'
import type { ImportRows, ImportStore, ItemStore, JobRows, JobStore } from './background-ports.js'
import type { Owners } from './ownership.js'

/*
 * The ports: what the domain needs of the adapters, declared here and implemented below it — src/store implements
 * DataStore without importing any of it, and the wiring (src/domain/index.ts, src/plugins/domain.ts) type checks
 * that it fits. The store holds no rule: it reads and writes rows; every decision is the services'.
 */

type LogLevels = 'level' | 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'

/**
 * The request's logger, which the domain hands on to the adapters so that their lines carry the
 * request's id: pino's, as Fastify's `request.log` is (the domain names no Fastify type).
 */
export interface Log extends Pick<BaseLogger, LogLevels> {
  child (bindings: Bindings, options?: ChildLoggerOptions): Log
}

/**
 * A portfolio and its whole assets, read in one snapshot (its total is the sum of theirs), and the
 * version its row has: the one read of a portfolio by id, from which its detail, its value and its
 * valuation are all made.
 */
export interface PortfolioAndAssets {
  portfolio: Portfolio
  assets: Asset[]
  version: number
}

/** An asset with its transactions, in the order they count. */
export interface Holding {
  asset: Asset
  transactions: AssetTransaction[]
}

/** Portfolios, their totals summed by the store. */
export interface PortfolioStore extends Owners {
  list: (filter: { userId?: string }, page: Page) => Promise<Portfolio[]>
  portfolioAndAssets: (id: string) => Promise<PortfolioAndAssets | undefined>
  /** The portfolio's row alone: an import reads it, uncached, to learn its owner. */
  portfolioOnly: (id: string) => Promise<Portfolio | undefined>
  /** Stores a new portfolio (a single statement: SQLite commits those of one event-loop turn together). */
  create: (input: CreatePortfolioInput) => Promise<Portfolio>
}

export interface AssetStore extends Owners {
  /** A page, oldest first; `userId`: only the assets of that user's portfolios. */
  list: (filter: { portfolioId?: string, type?: AssetType, userId?: string }, page: Page) => Promise<Asset[]>
  versioned: (id: string) => Promise<Versioned<Asset> | undefined>
  /** The assets of several portfolios, each portfolio's oldest first. */
  ofPortfolios: (portfolioIds: readonly string[]) => Promise<Map<string, Asset[]>>
  /** The asset's holding, and every holding of its portfolio (it included); undefined for no such asset. */
  portfolioHoldingsOf: (assetId: string) => Promise<{ holding: Holding, portfolio: Holding[] } | undefined>
  holdingsOfPortfolios: (portfolioIds: readonly string[]) => Promise<Map<string, Holding[]>>
  /** The symbol of every asset, each once. */
  symbols: () => Promise<string[]>
  /** The ids of the assets of `symbol` whose position was not computed with the events `digest` names. */
  staleForEvents: (symbol: string, digest: string) => Promise<string[]>
}

interface TransactionStore {
  /** A page of the asset's transactions in the order they count; undefined for no such asset. */
  list: (assetId: string, page: Page) => Promise<AssetTransaction[] | undefined>
  ofAssets: (assetIds: readonly string[]) => Promise<Map<string, AssetTransaction[]>>
}

export interface ExclusionStore {
  /** Stores the exclusion once per (client_id, transaction_id): a repeat answers the stored record. */
  create: (input: CreateExclusionInput) => Promise<{ record: ExcludedTransactionRecord, created: boolean }>
  list: (clientId: string, page: Page) => Promise<ExcludedTransaction[]>
  get: (id: string) => Promise<ExcludedTransactionRecord | undefined>
  delete: (id: string) => Promise<boolean>
}

/** The store the services stand on: a store per domain to read, and {@link DataStore.write} to change them. */
export interface DataStore {
  readonly portfolios: PortfolioStore
  readonly assets: AssetStore
  readonly transactions: TransactionStore
  readonly exclusions: ExclusionStore
  readonly jobs: JobStore
  readonly imports: ImportStore
  readonly aggregatorEvents: ItemStore
  readonly stats: { get: () => Promise<Stats> }
  /**
   * A write of portfolios, assets and their transactions, in one transaction of the store: `work` reads through
   * the unit of work what it needs, under the locks the write takes, decides, and writes rows through it. It
   * commits when `work` settles; an error it throws rolls everything back, and nothing of it is told.
   */
  write: <T>(work: (work: UnitOfWork) => Promise<T>) => Promise<T>
}

/**
 * One write, open. A row read through it is read in its transaction, locked until the write ends (PostgreSQL's row
 * locks, taken in the order every write takes them, so that no two writes deadlock; SQLite runs one transaction at
 * a time): what the service decides on it stays true until the write commits. Each change of a portfolio — of its
 * row, or of an asset it holds through `touch` — is told to every instance (the change feed) once the write commits.
 */
export interface UnitOfWork {
  /** The write's instant, ISO 8601: every row it writes is stamped with it. */
  readonly now: string
  readonly portfolios: PortfolioRows
  readonly assets: AssetRows
  readonly trades: TradeRows
  readonly jobs: JobRows
  readonly imports: ImportRows
}

/** A portfolio's row read under the write's lock: its owner (what the scope reaches) and version (its tag's). */
interface LockedPortfolio {
  userId: string
  version: number
}

interface PortfolioRows {
  lockForWrite: (id: string) => Promise<LockedPortfolio | undefined>
  /** Locks what the delete takes first (the assets' transactions, the assets), in the order every delete takes. */
  lockForDelete: (id: string) => Promise<LockedPortfolio | undefined>
  /**
   * Marks a change of what the portfolio holds (an asset's write): its `updatedAt` now, its version bumped (so its
   * detail's tag changes), its change told; answers its owner, undefined when there is no such portfolio. An asset's
   * write touches its portfolio last, after the asset's row; a create first, which locks the portfolio.
   */
  touch: (id: string) => Promise<string | undefined>
  /**
   * Sets the fields `input` gives (its `updatedAt` now, its version bumped): the portfolio after it, its total;
   * undefined when there is no such portfolio.
   */
  change: (id: string, input: UpdatePortfolioInput) => Promise<Versioned<Portfolio> | undefined>
  /** Deletes it, its assets and their transactions, and tells its deletion; false when there was none. */
  delete: (id: string) => Promise<boolean>
}

/** An asset's row read under the write's lock, with its version and its portfolio's owner. */
export interface LockedAsset extends Versioned<Asset> {
  userId: string
  /** The digest of the corporate events its position was computed with ('' for none: corporate-events.ts). */
  eventsDigest: string
  /** Whether its position was written with them: false after a write of a version that knew nothing of events. */
  eventsCurrent: boolean
}

/**
 * What the asset's row keeps of its position: the quantity held, its price, and their value in cents; and of the
 * corporate events it follows (docs/api.md#corporate-events): their digest, whether one was left unapplied, when
 * they were read.
 */
export interface PositionColumns {
  quantity: number
  price: number
  valueCents: number
  eventsDigest: string
  eventsUnapplied: boolean
  eventsAsOf: string | null
}

/** What an institution says of an imported asset (docs/api.md#imports), its price's origin included. */
export type InstitutionFields =
  Pick<Asset, 'priceSource' | 'asOf' | 'issuer' | 'dueDate' | 'rate' | 'rateType' | 'isin'>

/** A new asset's row: what its create names, its first position; an import's, its investment and institution's. */
type NewAsset = Pick<CreateAssetInput, 'portfolioId' | 'name' | 'symbol' | 'type'> & PositionColumns &
  Partial<Pick<Asset, 'investmentId'> & InstitutionFields>

interface AssetRows {
  lockForWrite: (id: string) => Promise<LockedAsset | undefined>
  /** As `lockForWrite`, the portfolio's asset imported from the aggregator's investment `investmentId`. */
  lockByInvestment: (portfolioId: string, investmentId: string) => Promise<LockedAsset | undefined>
  /** Locks its transactions first, as every delete takes them. */
  lockForDelete: (id: string) => Promise<LockedAsset | undefined>
  /** Locks the transaction `tradeId` of the asset first, as every delete takes it. */
  lockForRemoval: (id: string, tradeId: string) => Promise<LockedAsset | undefined>
  insert: (asset: NewAsset) => Promise<Asset>
  /**
   * Sets its position (its `updatedAt` now, its version bumped): the asset after it. Its price is its institution's
   * when `institution` says so (an import's write), else the average price or the investor's own.
   */
  setPosition: (id: string, position: PositionColumns, institution?: InstitutionFields) => Promise<Versioned<Asset>>
  /**
   * Marks the assets of `symbol` computed with the events `digest` names as read at `asOf` (those marked before its
   * day; their versions bumped): their portfolios' ids, sorted, for the write to touch.
   */
  markEventsRead: (symbol: string, digest: string, asOf: string) => Promise<string[]>
  /** Deletes it and its transactions: its portfolio's id, undefined when there was no such asset. */
  delete: (id: string) => Promise<string | undefined>
}

/** Where a transaction came from: the investment transaction an import recorded it as, or an import's estimate. */
interface TradeOrigin {
  investmentTransactionId: string | null
  estimated: boolean
}

/**
 * A transaction of an asset as stored: its trade, its id, `seq`, its place in the order recorded (from 1), and
 * where it came from.
 */
export interface RecordedTrade extends Trade, TradeOrigin {
  id: string
  seq: number
}

interface TradeRows {
  /** The asset's transactions in the order they count: by date, then as recorded. */
  of: (assetId: string) => Promise<RecordedTrade[]>
  /** Records `trade` of the asset at `seq` in the order recorded (an import's, with its origin): as answered. */
  insert: (assetId: string, trade: Trade, seq: number, imported?: TradeOrigin) => Promise<AssetTransaction>
  /** Records an import's trades of the asset, each at its `seq` with its origin. */
  insertAll: (assetId: string, trades: ReadonlyArray<{ trade: Trade, seq: number, imported: TradeOrigin }>) =>
  Promise<void>
  delete: (id: string) => Promise<void>
}
