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
export interface StoreMetaTable {
  key: string
  value: string
}

export interface AggregatorWebhookEventsTable {
  id: string
  event_key: string
  event: string
  item_id: string | null
  payload: string
  received_at: string
}

/** The state of each aggregator item as the aggregator reported it when a webhook named it. */
export interface AggregatorItemsTable {
  item_id: string
  status: string | null
  /** The aggregator's `clientUserId` of the item (migration 5). */
  client_user_id: string | null
  last_event: string
  updated_at: string
  /** When the aggregator confirmed the item deleted (migration 8); null while it exists. */
  deleted_at: string | null
}

/**
 * A webhook item verification that failed and is retried (migration 6): one row per item, claimed
 * by one instance at a time through a lease (`claimed_by` until `claimed_until`).
 */
export interface AggregatorItemVerificationsTable {
  item_id: string
  /** The latest event about the item; it becomes the item's `last_event` once verified. */
  event: string
  /** When that event's verification began: one that began before it does not settle the entry. */
  queued_at: string
  /** Failed attempts so far. */
  attempts: number
  next_attempt_at: string
  expires_at: string
  /** Why the latest attempt failed, for operators. */
  last_error: string | null
  claimed_by: string | null
  claimed_until: string | null
}

/**
 * A request made with an `Idempotency-Key` (migration 7): one row per credential and key, inserted
 * in flight before the request runs (`status_code` null) and completed with its answer after.
 */
export interface IdempotencyKeysTable {
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
}

export interface Database {
  asset_transactions: AssetTransactionsTable
  aggregator_webhook_events: AggregatorWebhookEventsTable
  aggregator_items: AggregatorItemsTable
  aggregator_item_verifications: AggregatorItemVerificationsTable
  portfolios: PortfoliosTable
  portfolio_assets: PortfolioAssetsTable
  excluded_transactions: ExcludedTransactionsTable
  bff_store_meta: StoreMetaTable
  idempotency_keys: IdempotencyKeysTable
}

/**
 * Every table of {@link Database}, as values: the statements written as text name their tables in the
 * schema of DATABASE_SCHEMA through this list ({@link qualifiedTables}). The type below fails to
 * compile while the list and the interface differ.
 */
export const TABLES = [
  'asset_transactions', 'aggregator_webhook_events', 'aggregator_items', 'aggregator_item_verifications', 'portfolios',
  'portfolio_assets', 'excluded_transactions', 'bff_store_meta', 'idempotency_keys'
] as const
type Listed = typeof TABLES[number]
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never
export const EVERY_TABLE_LISTED: Same<keyof Database, Listed> = true

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
