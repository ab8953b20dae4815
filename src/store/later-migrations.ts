import { sql, type Kysely } from 'kysely'

/*
 * The bodies of the migrations from 0011 on, which src/store/migrations.ts lists in order (append-only, like it).
 * Each runs inside the one transaction of src/store/migrate.ts, on both engines.
 */

/** The rows of migration 6's queue of failed webhook verifications, as 0011 reads them. */
interface QueuedVerificationRow {
  item_id: string
  event: string
  queued_at: string
  attempts: number
  next_attempt_at: string
  expires_at: string
  last_error: string | null
}

interface JobRow {
  kind: string
  key: string
  payload: string
  state: string
  attempts: number
  next_attempt_at: string
  expires_at: string | null
  last_error: string | null
  requested_at: string
  lease_holder: string | null
  lease_until: string | null
}

/**
 * One queue of background work for every kind of it (docs/deploy.md#background-work): a row per kind and key. The
 * failed webhook verifications queued in `aggregator_item_verifications` become jobs of kind `verify-item`, keyed
 * by their item, with their event, attempts, schedule, expiry and error; a lease they held is dropped (at worst an
 * item is verified once more). The old table stays, unused, for the previous version during a rolling deployment
 * (docs/deploy.md#migrations).
 */
export async function upJobs (untyped: Kysely<unknown>): Promise<void> {
  await untyped.schema.createTable('jobs')
    .addColumn('kind', 'text', col => col.notNull())
    .addColumn('key', 'text', col => col.notNull())
    .addColumn('payload', 'text', col => col.notNull())
    .addColumn('state', 'text', col => col.notNull().check(sql`state in ('queued', 'running')`))
    .addColumn('attempts', 'integer', col => col.notNull())
    .addColumn('next_attempt_at', 'text', col => col.notNull())
    .addColumn('expires_at', 'text')
    .addColumn('last_error', 'text')
    .addColumn('requested_at', 'text', col => col.notNull())
    .addColumn('lease_holder', 'text')
    .addColumn('lease_until', 'text')
    .addPrimaryKeyConstraint('jobs_pkey', ['kind', 'key'])
    .execute()
  // Instances look for the jobs due first.
  await untyped.schema.createIndex('jobs_due_idx').on('jobs').column('next_attempt_at').execute()
  const db = untyped as Kysely<{ aggregator_item_verifications: QueuedVerificationRow, jobs: JobRow }>
  const queued = await db.selectFrom('aggregator_item_verifications').selectAll().execute()
  for (const row of queued) {
    await db.insertInto('jobs').values({
      kind: 'verify-item',
      key: row.item_id,
      payload: JSON.stringify({ event: row.event }),
      state: 'queued',
      attempts: Number(row.attempts),
      next_attempt_at: row.next_attempt_at,
      expires_at: row.expires_at,
      last_error: row.last_error,
      requested_at: row.queued_at,
      lease_holder: null,
      lease_until: null
    }).execute()
  }
}

/**
 * Investments imported through the aggregator (docs/api.md#imports): the imports, an asset's investment (its id,
 * unique in a portfolio) and what its institution says of it, and a transaction's investment transaction (its id,
 * unique in its asset) and whether it is estimated.
 */
export async function upImports (db: Kysely<unknown>): Promise<void> {
  await db.schema.createTable('imports')
    .addColumn('id', 'text', col => col.primaryKey())
    .addColumn('portfolio_id', 'text', col => col.notNull().references('portfolios.id').onDelete('cascade'))
    .addColumn('item_id', 'text', col => col.notNull())
    .addColumn('status', 'text', col => col.notNull().check(sql`status in ('queued', 'running', 'done', 'failed')`))
    .addColumn('created_at', 'text', col => col.notNull())
    .addColumn('started_at', 'text')
    .addColumn('finished_at', 'text')
    .addColumn('investments', 'integer', col => col.notNull().defaultTo(0))
    .addColumn('assets_created', 'integer', col => col.notNull().defaultTo(0))
    .addColumn('assets_updated', 'integer', col => col.notNull().defaultTo(0))
    .addColumn('transactions_recorded', 'integer', col => col.notNull().defaultTo(0))
    .addColumn('skipped', 'text', col => col.notNull().defaultTo('[]'))
    .addColumn('written', 'text', col => col.notNull().defaultTo('[]'))
    .addColumn('error', 'text')
    .execute()
  // A portfolio's imports are listed newest first; an item's pending one and its portfolio are looked for by item.
  await db.schema.createIndex('imports_portfolio_idx').on('imports').columns(['portfolio_id', 'created_at', 'id'])
    .execute()
  await db.schema.createIndex('imports_item_idx').on('imports').columns(['item_id', 'created_at', 'id']).execute()

  for (const [column, type] of [
    ['investment_id', 'text'], ['price_source', 'text'], ['as_of', 'text'], ['issuer', 'text'], ['due_date', 'text'],
    ['rate', 'double precision'], ['rate_type', 'text'], ['isin', 'text']
  ] as const) {
    await db.schema.alterTable('portfolio_assets').addColumn(column, type).execute()
  }
  // Each investment is one asset of a portfolio (several null ids never collide, on either engine).
  await db.schema.createIndex('portfolio_assets_investment_idx').on('portfolio_assets').unique()
    .columns(['portfolio_id', 'investment_id']).execute()

  await db.schema.alterTable('asset_transactions').addColumn('investment_transaction_id', 'text').execute()
  await db.schema.alterTable('asset_transactions')
    .addColumn('estimated', 'integer', col => col.notNull().defaultTo(0)).execute()
  // Importing again records nothing twice.
  await db.schema.createIndex('asset_transactions_investment_idx').on('asset_transactions').unique()
    .columns(['asset_id', 'investment_transaction_id']).execute()
}

/**
 * What each asset's stored position was computed with (docs/api.md#corporate-events): a digest of its symbol's
 * events then ('' for none, as every position before them was computed), the version of the row it was written
 * with (a write of the previous version, during a rolling deployment, bumps the version alone: the position is
 * computed again), whether an event was left unapplied, and when the events were read. The refresh looks assets
 * up by symbol.
 */
export async function upCorporateEvents (db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('portfolio_assets')
    .addColumn('events_digest', 'text', col => col.notNull().defaultTo('')).execute()
  await db.schema.alterTable('portfolio_assets')
    .addColumn('events_version', 'integer', col => col.notNull().defaultTo(0)).execute()
  await db.schema.alterTable('portfolio_assets')
    .addColumn('events_unapplied', 'integer', col => col.notNull().defaultTo(0)).execute()
  await db.schema.alterTable('portfolio_assets').addColumn('events_as_of', 'text').execute()
  await (db as Kysely<{ portfolio_assets: { version: number, events_version: number } }>)
    .updateTable('portfolio_assets').set(eb => ({ events_version: eb.ref('version') })).execute()
  await db.schema.createIndex('portfolio_assets_symbol_idx').on('portfolio_assets').column('symbol').execute()
}
