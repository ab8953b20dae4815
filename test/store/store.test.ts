import t from 'tap'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify from 'fastify'
import { sql } from 'kysely'
import { Store } from '../../src/store/store.js'
import storePlugin from '../../src/plugins/store.js'
import { DEMO_PORTFOLIOS } from '../../src/store/demo-data.js'
import { MIGRATION_NAMES } from '../../src/store/migrations.js'
import { forEachEngine, freshDatabaseUrl } from '../helper.js'

const page = { limit: 1000, offset: 0 }

t.test('a SQLite file keeps its data across restarts and migrates once', async t => {
  const url = `sqlite:${join(mkdtempSync(join(tmpdir(), 'bff-store-')), 'nested', 'bff.sqlite')}`
  const first = await Store.open(url, { demoData: true })
  const created = await first.createPortfolio({ name: 'Mine', userId: 'me' })
  await first.close()

  const second = await Store.open(url, { demoData: true })
  t.teardown(() => second.close())
  const all = await second.listPortfolios({}, page)
  t.equal(all.length, DEMO_PORTFOLIOS.length + 1, 'demo data is loaded once, the new portfolio kept')
  t.ok(all.some(p => p.id === created.id))
  const migrations = await sql<{ n: number }>`select count(*) as n from kysely_migration`.execute(second.db)
  t.equal(Number(migrations.rows[0]?.n), MIGRATION_NAMES.length, 'each migration recorded once')
  const journal = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(second.db)
  t.equal(journal.rows[0]?.journal_mode, 'wal')
})

t.test('an unknown DATABASE_URL scheme is refused', async t => {
  await t.rejects(Store.open('mysql://x'), /DATABASE_URL must start with sqlite: or postgres:\/\//)
})

forEachEngine(t, 'instances starting together migrate once and load the demo once', async (t, engine) => {
  const url = await freshDatabaseUrl(t, engine)
  if (engine === 'sqlite') {
    // Each in-memory SQLite database belongs to one connection: nothing to race; check idempotence instead.
    const store = await Store.open(url, { demoData: true })
    t.teardown(() => store.close())
    t.equal(await store.loadDemoDataOnce(), false)
    t.equal((await store.stats()).totalPortfolios, DEMO_PORTFOLIOS.length)
    return
  }
  const stores = await Promise.all(Array.from({ length: 4 }, async () => await Store.open(url, { demoData: true, poolSize: 2 })))
  t.teardown(async () => { await Promise.all(stores.map(async store => { await store.close() })) })
  const [store] = stores
  if (store === undefined) throw new Error('no store')
  const migrations = await sql<{ n: number }>`select cast(count(*) as integer) as n from kysely_migration`.execute(store.db)
  t.equal(migrations.rows[0]?.n, MIGRATION_NAMES.length, 'each migration ran once')
  t.equal((await store.stats()).totalPortfolios, DEMO_PORTFOLIOS.length, 'demo data loaded once')
})

forEachEngine(t, 'deleting a portfolio is atomic: a failure keeps it and its assets', async (t, engine) => {
  const store = await Store.open(await freshDatabaseUrl(t, engine))
  t.teardown(() => store.close())
  const portfolio = await store.createPortfolio({ name: 'P', userId: 'u' })
  await store.createAsset({ name: 'A', symbol: 'A', type: 'STOCK', quantity: 1, price: 1, portfolioId: portfolio.id })
  // Make the second statement of the transaction fail after the first one ran.
  await t.rejects(store.db.transaction().execute(async trx => {
    await trx.deleteFrom('portfolio_assets').where('portfolio_id', '=', portfolio.id).execute()
    await sql`select * from no_such_table`.execute(trx)
  }))
  t.equal((await store.listAssets({ portfolioId: portfolio.id }, page)).length, 1, 'the rolled-back delete removed nothing')
  t.ok(await store.deletePortfolio(portfolio.id))
  t.same(await store.listAssets({ portfolioId: portfolio.id }, page), [])
  t.equal(await store.getPortfolio(portfolio.id), undefined)
})

t.test('the store plugin accepts a store opened by the host and leaves it open', async t => {
  const store = await Store.open('sqlite::memory:')
  t.teardown(() => store.close())
  const app = Fastify()
  await app.register(storePlugin, { store })
  await app.ready()
  t.equal(app.store, store)
  await app.close()
  await store.ping()
  t.pass('the host\'s store is still open after the app closed')
})

t.test('statistics are shared for a moment, but never hide this instance\'s own writes', async t => {
  const url = `sqlite:${join(mkdtempSync(join(tmpdir(), 'bff-stats-')), 'bff.sqlite')}`
  const mine = await Store.open(url)
  const other = await Store.open(url)
  t.teardown(async () => { await mine.close(); await other.close() })
  t.equal((await mine.stats()).totalPortfolios, 0)
  await other.createPortfolio({ name: 'Theirs', userId: 'o' })
  t.equal((await mine.stats()).totalPortfolios, 0, 'another instance\'s write shows after the TTL')
  t.equal((await other.stats()).totalPortfolios, 1)
  await mine.createPortfolio({ name: 'Mine', userId: 'm' })
  const stats = await mine.stats()
  t.equal(stats.totalPortfolios, 2, 'a write of this instance refreshes at once')
  t.equal(stats.activeUsers, 2)
  const [a, b] = await Promise.all([mine.stats(), mine.stats()])
  t.same(a, b)
})
