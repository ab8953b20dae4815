import { sql, type Kysely } from 'kysely'
import { TABLES, type Database } from './database.js'

/**
 * Where the service's tables are, checked at start-up on PostgreSQL (docs/deploy.md#poolers).
 *
 * DATABASE_SCHEMA is named in every statement rather than set as the session's `search_path`: a
 * pooler in transaction mode lends a server connection per transaction, so a session setting does not
 * hold, and PgBouncer refuses `options=-c search_path=…` in the URL (or, told to ignore it, drops it:
 * the tables would land in `public`). The alternative, `SET LOCAL search_path` at the start of every
 * transaction, costs a round trip per transaction and makes each single-statement read a transaction
 * of three round trips more: measured on the detail read (`bench/feed-costs.ts`, PostgreSQL on the
 * same busy two-core machine, medians of 9 rounds of 1 000 reads), 0.19 ms a read alone against
 * 0.38 ms wrapped as `begin; set local search_path; select; commit` — twice the read. Named tables
 * cost the statements nothing (qualified once, when their repository is made) and the builder's
 * queries Kysely's `withSchema`: 2.2 µs of CPU more per built query (9.0 against 6.8 µs for the asset
 * list's query, medians of 9 rounds of 1 000 builds).
 */

/** The schema the store's statements name: DATABASE_SCHEMA, else the session's current one. */
export async function storeSchema (db: Kysely<Database>, url: string, schema: string | undefined): Promise<string> {
  if (schema !== undefined) {
    const { rows } = await sql<{ found: boolean }>`select exists (
      select 1 from pg_namespace where nspname = ${schema}) as found`.execute(db)
    // A mistyped name must not start an empty store beside the real one.
    if (rows[0]?.found !== true) {
      throw new Error(`DATABASE_SCHEMA=${schema}: no such schema in the database (an administrator creates it once: ` +
        `create schema ${schema} authorization <the service's role>)`)
    }
    return schema
  }
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db)
  const current = rows[0]?.schema ?? ''
  const asked = searchPathOf(url)
  // PgBouncer told to ignore `options` drops it without a word: the tables would go to another schema.
  if (asked !== undefined && asked !== current) {
    const session = current === '' ? 'no schema that exists' : `"${current}"`
    throw new Error(`DATABASE_URL asks for search_path=${asked} but the session is in ${session} (a pooler drops the ` +
      `options parameter): name the schema with DATABASE_SCHEMA=${asked} instead (docs/deploy.md#poolers)`)
  }
  return current
}

/**
 * The first schema of `options=-c search_path=…` in a PostgreSQL URL, if it has one.
 * @internal Test seam: URLs of every form are tested directly.
 */
export function searchPathOf (url: string): string | undefined {
  const options = new URL(url).searchParams.get('options') ?? ''
  const match = /(?:-c\s*|--)search_path=([^\s,]+)/.exec(options)
  return match?.[1]?.replace(/^"(.*)"$/, '$1')
}

/** After the migrations: every table of the service is in `schema`, or the start stops, naming what is missing. */
export async function checkTablesIn (db: Kysely<Database>, schema: string): Promise<void> {
  const { rows } = await sql<{ name: string }>`select tablename as name from pg_tables
    where schemaname = ${schema} and tablename = any(${[...TABLES]}::text[])`.execute(db)
  const found = new Set(rows.map(row => row.name))
  const missing = TABLES.filter(table => !found.has(table))
  if (missing.length > 0) {
    throw new Error(`the service's tables are not all in schema "${schema}" after migrating: ${missing.join(', ')} ` +
      'missing (were they moved or dropped by hand?)')
  }
}

/** A pooler's refusal of the URL's `options`, or of every transaction (statement mode), told with what to do. */
export function poolerHint (reason: string): string {
  if (/unsupported startup parameter/i.test(reason)) {
    return `${reason} (a pooler such as PgBouncer refuses options=… in DATABASE_URL: name the schema with ` +
      'DATABASE_SCHEMA instead, docs/deploy.md#poolers)'
  }
  return /in statement pooling mode/i.test(reason)
    ? `${reason} (DATABASE_URL goes through a pooler in statement mode, where no write of several statements can ` +
      'run: use its transaction or session mode, docs/deploy.md#poolers)'
    : reason
}
