import t from 'tap'
import pg from 'pg'
import { randomBytes } from 'node:crypto'
import { Store } from '../../src/store/store.js'
import { qualifiedTables } from '../../src/store/database.js'
import { poolerHint, searchPathOf } from '../../src/store/postgres-schema.js'
import { MIGRATION_NAMES } from '../../src/store/migrations.js'
import { freshDatabase, NEEDS_POSTGRES, POSTGRES_URL, testNeeding } from '../helper.js'
import { domainOver, TRUSTED } from '../fixtures/store-domain.js'

/*
 * DATABASE_SCHEMA (docs/deploy.md#poolers): every statement names the schema, so the store is in it
 * whatever the session's search_path; the start stops, with one line, when the tables could land
 * elsewhere than the setting says.
 */

const page = { limit: 10, offset: 0 }

t.test('statement texts name the schema of each table, and nothing else', async t => {
  t.equal(qualifiedTables('select portfolios.*, (select sum(pa.value_cents) from portfolio_assets pa where ' +
    'pa.portfolio_id = portfolios.id) from portfolios where id = ?', 'bff'),
  'select bff.portfolios.*, (select sum(pa.value_cents) from bff.portfolio_assets pa where ' +
    'pa.portfolio_id = bff.portfolios.id) from bff.portfolios where id = ?')
  const untouched = 'select \'portfolios\', "portfolios", portfolios_x, x.portfolios, asset_lots_id'
  t.equal(qualifiedTables(untouched, 'bff'), untouched, 'strings, quoted and longer names')
})

t.test('a SQLite store sends no notification', async t => {
  const store = await Store.open('sqlite::memory:')
  t.teardown(() => store.close())
  await t.rejects(store.notify('bff_changes', '{}'), /notifications need a PostgreSQL store/)
})

t.test('the search_path of a URL\'s options, and a pooler\'s refusal told with what to do', async t => {
  t.equal(searchPathOf('postgres://h/db?options=-c%20search_path%3Dbff'), 'bff')
  t.equal(searchPathOf('postgres://h/db?options=--search_path=a,b'), 'a')
  t.equal(searchPathOf('postgres://h/db?options=-c search_path="x"'), 'x')
  t.equal(searchPathOf('postgres://h/db'), undefined)
  t.match(poolerHint('unsupported startup parameter: options'), /DATABASE_SCHEMA instead/)
  t.match(poolerHint('transaction blocks not allowed in statement pooling mode'), /use its transaction or session mode/)
  t.equal(poolerHint('password authentication failed'), 'password authentication failed')
})

testNeeding(t, 'a store in DATABASE_SCHEMA works whatever the session\'s search_path: every repository\'s ' +
  'statements and the migrations name it', [NEEDS_POSTGRES], async t => {
  const { schema } = await freshDatabase(t, 'postgres')
  const decoy = await freshDatabase(t, 'postgres')
  // The session looks in another (empty) schema first: a statement that did not name its schema fails.
  const url = new URL(POSTGRES_URL ?? '')
  url.searchParams.set('options', `-c search_path=${decoy.schema ?? ''}`)
  const store = await Store.open(url.href, { schema })
  t.teardown(() => store.close())
  t.same(await store.appliedMigrations(), MIGRATION_NAMES)
  const domain = domainOver(store)
  const portfolio = await store.portfolios.create({ name: 'P', userId: 'u' })
  const input = { name: 'A', symbol: 'A', type: 'STOCK' as const, quantity: 2, price: 3, portfolioId: portfolio.id }
  const asset = await domain.assets.create(TRUSTED, input)
  t.equal((await store.portfolios.portfolioOnly(portfolio.id))?.totalValue, 6)
  t.equal((await store.assets.list({ portfolioId: portfolio.id }, page)).length, 1)
  t.match(await domain.assets.update(TRUSTED, asset.id, { quantity: 1 }), { value: { quantity: 1 } })
  const sale = { type: 'SELL' as const, date: asset.createdAt.slice(0, 10), quantity: 1, price: 4 }
  const { id } = await domain.transactions.add(TRUSTED, asset.id, sale)
  await domain.transactions.remove(TRUSTED, asset.id, id)
  await domain.portfolios.update(TRUSTED, portfolio.id, { name: 'Q' })
  t.equal((await store.stats.get()).totalAssets, 1)
  t.equal(await store.idempotency.count(), 0)
  await domain.assets.delete(TRUSTED, asset.id)
  await domain.portfolios.delete(TRUSTED, portfolio.id)
  t.equal(await store.portfolios.portfolioOnly(portfolio.id), undefined)
  const admin = new pg.Client({ connectionString: POSTGRES_URL })
  await admin.connect()
  t.teardown(async () => { await admin.end() })
  const { rows } = await admin.query('select count(*)::int as n from pg_tables where schemaname = $1', [decoy.schema])
  t.equal(rows[0].n, 0, 'nothing landed in the session\'s schema')
})

testNeeding(t, 'start-up stops with one line when the tables could land elsewhere than the setting says',
  [NEEDS_POSTGRES], async t => {
    const missing = `nope_${randomBytes(4).toString('hex')}`
    await t.rejects(Store.open(POSTGRES_URL ?? '', { schema: missing }),
      {
        message: `Cannot open the database of DATABASE_URL (postgres): DATABASE_SCHEMA=${missing}: no such schema ` +
        `in the database (an administrator creates it once: create schema ${missing} authorization <the service's ` +
        'role>)'
      })
    // A pooler told to ignore `options` drops the search_path: the session is in another schema.
    const url = new URL(POSTGRES_URL ?? '')
    url.searchParams.set('options', `-c search_path=${missing}`)
    const dropped = `DATABASE_URL asks for search_path=${missing} but the session is in no schema that exists (a ` +
      `pooler drops the options parameter): name the schema with DATABASE_SCHEMA=${missing} instead`
    await t.rejects(Store.open(url.href), { message: new RegExp(dropped.replace(/[()]/g, '\\$&')) })
    // A table dropped by hand from a migrated schema.
    const { schema } = await freshDatabase(t, 'postgres')
    const store = await Store.open(POSTGRES_URL ?? '', { schema })
    await store.close()
    const admin = new pg.Client({ connectionString: POSTGRES_URL })
    await admin.connect()
    await admin.query(`drop table ${schema ?? ''}.idempotency_keys`)
    await admin.end()
    await t.rejects(Store.open(POSTGRES_URL ?? '', { schema }),
      { message: /the service's tables are not all in schema "t_[0-9a-f]+" after migrating: idempotency_keys missing/ })
  })
