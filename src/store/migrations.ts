import { sql, type Kysely, type Migration } from 'kysely'
import { positionCents, unitAmount } from '../schemas/money.js'
import { upCorporateEvents, upImports, upJobs } from './later-migrations.js'

/**
 * Versioned schema, the same for SQLite and PostgreSQL. Append new migrations; never edit one
 * that has shipped. `migrate` (src/store/migrate.ts) runs the pending ones in one transaction
 * under a lock and records each in `kysely_migration`, so instances starting together migrate once.
 */
export const MIGRATIONS: Record<string, Migration> = {
  '0001-portfolios-assets-exclusions': {
    async up (db: Kysely<unknown>) {
      await db.schema.createTable('portfolios')
        .addColumn('id', 'text', col => col.primaryKey())
        .addColumn('name', 'text', col => col.notNull())
        .addColumn('description', 'text')
        .addColumn('user_id', 'text', col => col.notNull())
        .addColumn('created_at', 'text', col => col.notNull())
        .addColumn('updated_at', 'text', col => col.notNull())
        .execute()
      // Lists are ordered by (created_at, id): each lookup has an index in that order.
      await db.schema
        .createIndex('portfolios_user_id_idx')
        .on('portfolios')
        .columns(['user_id', 'created_at', 'id'])
        .execute()
      await db.schema.createIndex('portfolios_created_at_idx').on('portfolios').columns(['created_at', 'id']).execute()

      await db.schema.createTable('portfolio_assets')
        .addColumn('id', 'text', col => col.primaryKey())
        .addColumn('portfolio_id', 'text', col => col.notNull().references('portfolios.id').onDelete('cascade'))
        .addColumn('name', 'text', col => col.notNull())
        .addColumn('symbol', 'text', col => col.notNull())
        .addColumn('type', 'text', col => col.notNull())
        .addColumn('quantity', 'double precision', col => col.notNull())
        .addColumn('price', 'double precision', col => col.notNull())
        .addColumn('created_at', 'text', col => col.notNull())
        .addColumn('updated_at', 'text', col => col.notNull())
        .execute()
      await db.schema
        .createIndex('portfolio_assets_portfolio_id_idx')
        .on('portfolio_assets')
        .columns(['portfolio_id', 'created_at', 'id'])
        .execute()
      await db.schema
        .createIndex('portfolio_assets_type_idx')
        .on('portfolio_assets')
        .columns(['type', 'created_at', 'id'])
        .execute()
      await db.schema
        .createIndex('portfolio_assets_created_at_idx')
        .on('portfolio_assets')
        .columns(['created_at', 'id'])
        .execute()

      await db.schema.createTable('excluded_transactions')
        .addColumn('id', 'text', col => col.primaryKey())
        .addColumn('client_id', 'text', col => col.notNull())
        .addColumn('transaction_id', 'text', col => col.notNull())
        .addColumn('reason', 'text', col => col.notNull())
        .addColumn('excluded_at', 'text', col => col.notNull())
        .addColumn('created_at', 'text', col => col.notNull())
        .addUniqueConstraint('excluded_transactions_client_transaction_key', ['client_id', 'transaction_id'])
        .execute()
      // The unique constraint's index starts with client_id, so it also serves lookups by client.

      await db.schema.createTable('bff_store_meta')
        .addColumn('key', 'text', col => col.primaryKey())
        .addColumn('value', 'text', col => col.notNull())
        .execute()
    }
  },
  '0002-aggregator-webhooks': {
    async up (db: Kysely<unknown>) {
      await db.schema.createTable('aggregator_webhook_events')
        .addColumn('id', 'text', col => col.primaryKey())
        // The sender's eventId, or a digest of the payload when it has none: a redelivery collides here.
        .addColumn('event_key', 'text', col => col.notNull().unique())
        .addColumn('event', 'text', col => col.notNull())
        .addColumn('item_id', 'text')
        .addColumn('payload', 'text', col => col.notNull())
        .addColumn('received_at', 'text', col => col.notNull())
        .execute()
      await db.schema
        .createIndex('aggregator_webhook_events_item_id_idx')
        .on('aggregator_webhook_events')
        .columns(['item_id', 'received_at'])
        .execute()

      await db.schema.createTable('aggregator_items')
        .addColumn('item_id', 'text', col => col.primaryKey())
        .addColumn('status', 'text')
        .addColumn('last_event', 'text', col => col.notNull())
        .addColumn('updated_at', 'text', col => col.notNull())
        .execute()
    }
  },
  '0003-asset-lots': {
    async up (db: Kysely<unknown>) {
      await db.schema.createTable('asset_lots')
        .addColumn('id', 'text', col => col.primaryKey())
        .addColumn('asset_id', 'text', col => col.notNull().references('portfolio_assets.id').onDelete('cascade'))
        .addColumn('date', 'text', col => col.notNull())
        // Order of the buys of one asset: lots of one day (or one millisecond) still have a first.
        .addColumn('seq', 'integer', col => col.notNull())
        .addColumn('quantity', 'double precision', col => col.notNull())
        .addColumn('price', 'double precision', col => col.notNull())
        .addColumn('created_at', 'text', col => col.notNull())
        .execute()
      await db.schema
        .createIndex('asset_lots_asset_id_idx')
        .on('asset_lots')
        .columns(['asset_id', 'date', 'seq'])
        .execute()
      // Assets stored before lots existed become one lot each, bought when they were created. Built
      // rather than written as text (the same statement), so that DATABASE_SCHEMA names its tables.
      interface Lot { id: string, asset_id: string, date: string, seq: number, quantity: number, price: number }
      const typed = db as Kysely<{
        portfolio_assets: { id: string, quantity: number, price: number, created_at: string }
        asset_lots: Lot & { created_at: string }
      }>
      await typed.insertInto('asset_lots')
        .columns(['id', 'asset_id', 'date', 'seq', 'quantity', 'price', 'created_at'])
        .expression(typed.selectFrom('portfolio_assets').select([
          'id', 'id as asset_id', sql<string>`substr(created_at, 1, 10)`.as('date'), sql<number>`1`.as('seq'),
          'quantity', 'price', 'created_at'
        ]))
        .execute()
    }
  },
  '0004-exact-money': {
    /**
     * Exact money (docs/api.md#money): quantities and prices at most 8 decimals (lots split by float subtraction
     * had more), and each asset's value in integer cents, computed here as the service does.
     */
    async up (untyped: Kysely<unknown>) {
      const db = untyped as Kysely<{
        portfolio_assets: { id: string, quantity: number, price: number, value_cents: number }
        asset_lots: { id: string, quantity: number, price: number }
      }>
      await db.schema
        .alterTable('portfolio_assets')
        .addColumn('value_cents', 'bigint', col => col.notNull().defaultTo(0))
        .execute()
      for (const asset of await db.selectFrom('portfolio_assets').select(['id', 'quantity', 'price']).execute()) {
        const quantity = unitAmount(asset.quantity)
        const price = unitAmount(asset.price)
        await db
          .updateTable('portfolio_assets')
          .set({ quantity, price, value_cents: positionCents(quantity, price) })
          .where('id', '=', asset.id)
          .execute()
      }
      for (const lot of await db.selectFrom('asset_lots').select(['id', 'quantity', 'price']).execute()) {
        await db
          .updateTable('asset_lots')
          .set({ quantity: unitAmount(lot.quantity), price: unitAmount(lot.price) })
          .where('id', '=', lot.id)
          .execute()
      }
    }
  },
  '0005-verified-aggregator-items': {
    /** Items are now what the aggregator reports: its `clientUserId` too. */
    async up (db: Kysely<unknown>) {
      await db.schema.alterTable('aggregator_items').addColumn('client_user_id', 'text').execute()
    }
  },
  '0006-aggregator-item-verifications': {
    /** Failed webhook verifications, retried by whichever instance claims them first. */
    async up (db: Kysely<unknown>) {
      await db.schema.createTable('aggregator_item_verifications')
        .addColumn('item_id', 'text', col => col.primaryKey())
        .addColumn('event', 'text', col => col.notNull())
        .addColumn('queued_at', 'text', col => col.notNull())
        .addColumn('attempts', 'integer', col => col.notNull())
        .addColumn('next_attempt_at', 'text', col => col.notNull())
        .addColumn('expires_at', 'text', col => col.notNull())
        .addColumn('last_error', 'text')
        .addColumn('claimed_by', 'text')
        .addColumn('claimed_until', 'text')
        .execute()
      // Workers look for the entries due first.
      await db.schema.createIndex('aggregator_item_verifications_due_idx')
        .on('aggregator_item_verifications').column('next_attempt_at').execute()
    }
  },
  '0007-idempotency-keys': {
    /** Answers kept per credential and `Idempotency-Key`: the key is unique in its scope on every instance. */
    async up (db: Kysely<unknown>) {
      await db.schema.createTable('idempotency_keys')
        .addColumn('scope', 'text', col => col.notNull())
        .addColumn('key', 'text', col => col.notNull())
        .addColumn('fingerprint', 'text', col => col.notNull())
        .addColumn('claim', 'text', col => col.notNull())
        .addColumn('status_code', 'integer')
        .addColumn('headers', 'text')
        .addColumn('body', 'text')
        .addColumn('locked_until', 'text', col => col.notNull())
        .addColumn('expires_at', 'text', col => col.notNull())
        .addColumn('created_at', 'text', col => col.notNull())
        .addPrimaryKeyConstraint('idempotency_keys_pkey', ['scope', 'key'])
        .execute()
      // The sweep deletes the expired entries.
      await db.schema
        .createIndex('idempotency_keys_expires_at_idx')
        .on('idempotency_keys')
        .column('expires_at')
        .execute()
    }
  },
  '0008-deleted-aggregator-items': {
    /** An item the aggregator confirmed deleted keeps its row, marked (docs/aggregator.md). */
    async up (db: Kysely<unknown>) {
      await db.schema.alterTable('aggregator_items').addColumn('deleted_at', 'text').execute()
    }
  },
  '0009-versions': {
    /**
     * A version per portfolio and per asset, bumped by every write in its transaction: their ETags
     * derive from it (docs/api.md#safe-retries), and If-Match compares it.
     */
    async up (db: Kysely<unknown>) {
      for (const table of ['portfolios', 'portfolio_assets']) {
        await db.schema.alterTable(table).addColumn('version', 'integer', col => col.notNull().defaultTo(1)).execute()
      }
    }
  },
  '0010-asset-transactions': {
    /**
     * Dated buys and sales (docs/api.md#transactions). Each buy lot becomes a BUY of the quantity
     * it still held, at its price, on its date, with its id, order and creation time, and no fee;
     * the assets keep their quantity, price and value as they are. `asset_lots` stays, unused, for
     * the previous version during a rolling deployment (docs/deploy.md#migrations). In one
     * transaction on both engines (Kysely's Migrator, which ran the migrations before `migrate`, ran
     * SQLite's outside one).
     */
    async up (db: Kysely<unknown>) {
      await (db.isTransaction ? up0010(db) : db.transaction().execute(up0010))
    }
  },
  // Their bodies, in src/store/later-migrations.ts.
  '0011-jobs': { up: upJobs },
  '0012-investment-imports': { up: upImports },
  '0013-corporate-events': { up: upCorporateEvents }
}

async function up0010 (db: Kysely<unknown>): Promise<void> {
  await db.schema.createTable('asset_transactions')
    .addColumn('id', 'text', col => col.primaryKey())
    .addColumn('asset_id', 'text', col => col.notNull().references('portfolio_assets.id').onDelete('cascade'))
    .addColumn('type', 'text', col => col.notNull().check(sql`type in ('BUY', 'SELL')`))
    .addColumn('date', 'text', col => col.notNull())
    .addColumn('seq', 'integer', col => col.notNull())
    .addColumn('quantity', 'double precision', col => col.notNull())
    .addColumn('price', 'double precision', col => col.notNull())
    .addColumn('fee', 'double precision', col => col.notNull().defaultTo(0))
    .addColumn('created_at', 'text', col => col.notNull())
    .execute()
  // An asset's transactions are read in the order they count.
  await db.schema.createIndex('asset_transactions_asset_id_idx').on('asset_transactions')
    .columns(['asset_id', 'date', 'seq']).execute()
  // Built, not written as text: a store's DATABASE_SCHEMA reaches the builder's table names (withSchema).
  interface Row { id: string, asset_id: string, date: string, seq: number, quantity: number, price: number }
  const typed = db as Kysely<{
    asset_lots: Row & { created_at: string }
    asset_transactions: Row & { type: string, fee: number, created_at: string }
  }>
  await typed.insertInto('asset_transactions')
    .columns(['id', 'asset_id', 'type', 'date', 'seq', 'quantity', 'price', 'fee', 'created_at'])
    .expression(typed.selectFrom('asset_lots').select([
      'id', 'asset_id', sql<string>`'BUY'`.as('type'), 'date', 'seq', 'quantity', 'price', sql<number>`0`.as('fee'),
      'created_at'
    ]))
    .execute()
}

/** The names of every migration, in order. */
export const MIGRATION_NAMES = Object.keys(MIGRATIONS)
