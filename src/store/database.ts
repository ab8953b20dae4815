import type { ColumnType, Generated } from 'kysely'
import type { Asset } from '../schemas/asset.js'
import type { Portfolio } from '../schemas/portfolio.js'
import type { TransactionType } from '../schemas/transaction.js'
import type { ColumnsOf } from './columns.js'

/**
 * Tables as the database holds them; timestamps are ISO 8601 UTC text in both engines. A resource's table
 * is its schema's fields under their columns' names (columns.ts), but those computed, and the columns the
 * schema does not show: adding a field is its migration and its schema.
 */
export type PortfoliosTable = ColumnsOf<Omit<Portfolio, 'totalValue'>> & {
  /** Bumped by every write of the portfolio or of one of its assets (migration 9): its ETag's. */
  version: Generated<number>
}

export type PortfolioAssetsTable = ColumnsOf<Omit<Asset, 'totalValue' | 'eventsUnapplied'>> & {
  /**
   * `quantity × price` in integer cents, rounded half away from zero from the exact product
   * (docs/api.md#money), kept so that every sum is exact in SQL; the asset's `totalValue`. PostgreSQL
   * answers a bigint as text.
   */
  value_cents: ColumnType<number | string, number, number>
  /** Bumped by every write of the asset (migration 9): its ETag's. */
  version: Generated<number>
  /**
   * What the position was computed with (migration 11): a digest of its symbol's corporate events ('' for none),
   * and the version it was written at — another is a write that knew nothing of them (docs/api.md#corporate-events).
   */
  events_digest: Generated<string>
  events_version: Generated<number>
  /** 1 when an event was left unapplied (the asset's `eventsUnapplied`), else 0: one type on both engines. */
  events_unapplied: Generated<number>
}

export interface ExcludedTransactionsTable {
  id: string
  client_id: string
  transaction_id: string
  reason: string
  excluded_at: string
  created_at: string
}

/** Facts about the store itself, such as when demo data was first loaded. */
interface StoreMetaTable {
  key: string
  value: string
}

interface AggregatorWebhookEventsTable {
  id: string
  event_key: string
  event: string
  item_id: string | null
  payload: string
  received_at: string
}

/** The state of each aggregator item as the aggregator reported it when a webhook named it. */
interface AggregatorItemsTable {
  item_id: string
  status: string | null
  /** The aggregator's `clientUserId` of the item (migration 5). */
  client_user_id: string | null
  last_event: string
  updated_at: string
  /** When the aggregator confirmed the item deleted (migration 8); null while it exists. */
  deleted_at: string | null
}

/** Where a job stands (migration 11): waiting for its next attempt, or held by an instance's lease while it runs. */
export type JobState = 'queued' | 'running'

/**
 * Work done in the background by whichever instance claims it first (migration 11, which carried over the queued
 * webhook verifications of migration 6's `aggregator_item_verifications`): one row per kind of work and key (an
 * item's verification, an item's import), held by one instance at a time through a lease (`lease_holder` until
 * `lease_until`, renewed while it runs).
 */
export interface JobsTable {
  /** What the work is, which decides who does it: `verify-item`, `import`. */
  kind: string
  /** What it is about (an item's id): one job per kind and key. */
  key: string
  /** A JSON object of strings: what the work needs beside its key (a verification's event). */
  payload: string
  state: JobState
  /** Failed attempts so far (those that count: a spent budget does not). */
  attempts: number
  /** When it is due; a running job's is when it was claimed. */
  next_attempt_at: string
  /** When it is dropped if still not done; null: never. */
  expires_at: string | null
  /** Why the latest attempt failed, for operators. */
  last_error: string | null
  /** When it was last asked for: one asked again while it runs is queued again when the run ends. */
  requested_at: string
  lease_holder: string | null
  lease_until: string | null
}

/** How an investment import stands (migration 12): docs/api.md#imports. */
export type ImportStatus = 'queued' | 'running' | 'done' | 'failed'

/**
 * An import of an aggregator item's investments into a portfolio (migration 12): asked by `POST
 * /portfolios/:id/imports` or by a verified `item/updated` of an item imported before; its counts and skipped
 * investments grow as each investment is written, in the investment's own transaction.
 */
export interface ImportsTable {
  id: string
  portfolio_id: string
  item_id: string
  status: ImportStatus
  created_at: string
  started_at: string | null
  finished_at: string | null
  investments: number
  assets_created: number
  assets_updated: number
  transactions_recorded: number
  /** JSON: `[{investmentId, transactionId, reason}]`. */
  skipped: string
  /** JSON: the ids of the investments this import has written, which an attempt after a failure goes on after. */
  written: string
  error: string | null
}

/**
 * A request made with an `Idempotency-Key` (migration 7): one row per credential and key, inserted
 * in flight before the request runs (`status_code` null) and completed with its answer after.
 */
interface IdempotencyKeysTable {
  /** Whose key: `apikey:<sha-256 of the API key>` or the principal, `user:42` / `client:7`. */
  scope: string
  key: string
  /** sha-256 of the method, path and canonical body: the same key with another request is refused. */
  fingerprint: string
  /** A random id of the execution holding the row: only it completes or releases it. */
  claim: string
  /** The kept answer; null while in flight. */
  status_code: number | null
  /** JSON object of the kept headers (content-type, etag). */
  headers: string | null
  body: string | null
  /** While in flight, after this the execution is taken for dead and the key may run again. */
  locked_until: string
  expires_at: string
  created_at: string
}

/**
 * A dated buy or sale of an asset (migration 10, which made the buy lots of migration 3 buys): the
 * asset's quantity and average price, and the dashboard's transactions and history, come from these.
 */
export interface AssetTransactionsTable {
  id: string
  asset_id: string
  type: TransactionType
  /** YYYY-MM-DD (UTC). */
  date: string
  /** 1, 2, … per asset, in the order they were recorded: of one date, the first recorded counts first. */
  seq: number
  quantity: number
  price: number
  /** Money, at most 2 decimals. */
  fee: number
  created_at: string
  /** The aggregator's id of the investment transaction it was imported from (migration 12); null when not imported. */
  investment_transaction_id: string | null
  /** 1 when no institution reported it: an import's opening buy or closing sale (migration 12); else 0. */
  estimated: Generated<number>
}

export interface Database {
  asset_transactions: AssetTransactionsTable
  aggregator_webhook_events: AggregatorWebhookEventsTable
  aggregator_items: AggregatorItemsTable
  jobs: JobsTable
  imports: ImportsTable
  portfolios: PortfoliosTable
  portfolio_assets: PortfolioAssetsTable
  excluded_transactions: ExcludedTransactionsTable
  bff_store_meta: StoreMetaTable
  idempotency_keys: IdempotencyKeysTable
}

/**
 * Every table of {@link Database}, as values: the statements written as text name their tables in the
 * schema of DATABASE_SCHEMA through this list ({@link qualifiedTables}). The record fails to compile
 * while it and the interface differ: a table missing, or one more.
 */
const LISTED: Record<keyof Database, true> = {
  asset_transactions: true,
  aggregator_webhook_events: true,
  aggregator_items: true,
  jobs: true,
  imports: true,
  portfolios: true,
  portfolio_assets: true,
  excluded_transactions: true,
  bff_store_meta: true,
  idempotency_keys: true
}
export const TABLES = Object.keys(LISTED) as Array<keyof Database>

/** A table name standing alone in SQL text: not part of a longer name, a quoted name or a string. */
const TABLE_NAME = new RegExp(`(?<![\\w."'$])(${TABLES.join('|')})(?![\\w"'$])`, 'g')

/**
 * `text` with each of the service's tables named in `schema` (`portfolios` → `bff.portfolios`). Applied
 * once to each statement when its repository is made (docs/style.md#query-style), so a request pays
 * nothing for it; the builder's queries get the same from Kysely's `withSchema`.
 */
export function qualifiedTables (text: string, schema: string): string {
  return text.replace(TABLE_NAME, name => `${schema}.${name}`)
}
