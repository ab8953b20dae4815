import t from 'tap'
import { mkdtempSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify from 'fastify'
import SqliteDatabase from 'better-sqlite3'
import pg from 'pg'
import { Store } from '../../src/store/store.js'
import { withAssetsSql } from '../../src/store/portfolios.js'
import storePlugin from '../../src/plugins/store.js'
import { DEMO_PORTFOLIOS } from '../../src/store/demo-data.js'
import { MIGRATION_NAMES } from '../../src/store/migrations.js'
import type { PortfolioChange } from '../../src/change-feed/change-events.js'
import { replay } from '../../src/domain/replay.js'
import { averagePrice } from '../../src/schemas/average-cost.js'
import { forEachEngine, freshDatabase } from '../helper.js'
import { domainOver, TRUSTED } from '../fixtures/store-domain.js'

const page = { limit: 1000, offset: 0 }
/** A position computed with no corporate events. */
const NO_EVENT_COLUMNS = { eventsDigest: '', eventsUnapplied: false, eventsAsOf: null }

t.test('a SQLite file keeps its data across restarts and migrates once', async t => {
  const url = `sqlite:${join(mkdtempSync(join(tmpdir(), 'bff-store-')), 'nested', 'bff.sqlite')}`
  const first = await Store.open(url, { demoData: true })
  const created = await first.portfolios.create({ name: 'Mine', userId: 'me' })
  await first.close()

  const second = await Store.open(url, { demoData: true })
  t.teardown(() => second.close())
  const all = await second.portfolios.list({}, page)
  t.equal(all.length, DEMO_PORTFOLIOS.length + 1, 'demo data is loaded once, the new portfolio kept')
  t.ok(all.some(p => p.id === created.id))
  t.same(await second.appliedMigrations(), MIGRATION_NAMES, 'each migration recorded once')
  // WAL is a property of the file itself: read it from a connection of the test's own.
  const raw = new SqliteDatabase(url.slice('sqlite:'.length), { readonly: true })
  t.teardown(() => raw.close())
  t.equal(raw.pragma('journal_mode', { simple: true }), 'wal')
})

t.test('the demo data states the positions the domain replays from its lots and sales', async t => {
  const store = await Store.open('sqlite::memory:', { demoData: true })
  t.teardown(() => store.close())
  const portfolioIds = (await store.portfolios.list({}, page)).map(portfolio => portfolio.id)
  const holdings = [...(await store.assets.holdingsOfPortfolios(portfolioIds)).values()].flat()
  const declared = new Map(DEMO_PORTFOLIOS.flatMap(portfolio => portfolio.assets).map(asset => [asset.symbol, asset]))
  t.equal(holdings.length, declared.size, 'every demo asset, each of its own symbol')
  for (const { asset, transactions } of holdings) {
    const { after, shortAt } = replay(transactions)
    const average = averagePrice(after).toNumber()
    const stated = declared.get(asset.symbol)
    t.same([shortAt, after.quantity.toNumber(), average], [undefined, asset.quantity, stated?.averagePrice],
      `${asset.symbol}: its quantity and average price`)
    t.equal(asset.price, stated?.price ?? average, `${asset.symbol}: its price`)
  }
})

t.test('an unknown DATABASE_URL scheme is refused', async t => {
  await t.rejects(Store.open('mysql://x'), /DATABASE_URL must start with sqlite: or postgres:\/\//)
})

forEachEngine(t, 'instances starting together migrate once and load the demo once', async (t, engine) => {
  const { url, schema } = await freshDatabase(t, engine)
  if (engine === 'sqlite') {
    // Each in-memory SQLite database belongs to one connection: nothing to race; check idempotence instead.
    const store = await Store.open(url, { demoData: true })
    t.teardown(() => store.close())
    t.equal(await store.demo.loadOnce(), false)
    t.equal((await store.stats.get()).totalPortfolios, DEMO_PORTFOLIOS.length)
    return
  }
  const stores = await Promise.all(
    Array.from({ length: 4 }, async () => await Store.open(url, { demoData: true, poolSize: 2, schema }))
  )
  t.teardown(async () => { await Promise.all(stores.map(async store => { await store.close() })) })
  const [store] = stores
  if (store === undefined) throw new Error('no store')
  t.same(await store.appliedMigrations(), MIGRATION_NAMES, 'each migration ran once')
  t.equal((await store.stats.get()).totalPortfolios, DEMO_PORTFOLIOS.length, 'demo data loaded once')
})

/** Makes every delete of a portfolio fail, from a connection of the test's own (after its assets are gone). */
async function refusePortfolioDeletes (url: string): Promise<void> {
  if (url.startsWith('sqlite:')) {
    const raw = new SqliteDatabase(url.slice('sqlite:'.length))
    raw.exec(
      "create trigger refuse_delete before delete on portfolios begin select raise(abort, 'refused by the test'); end"
    )
    raw.close()
    return
  }
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  await client.query(`create function refuse_delete() returns trigger language plpgsql as $$
      begin raise exception 'refused by the test'; end $$;
    create trigger refuse_delete before delete on portfolios for each row execute function refuse_delete()`)
  await client.end()
}

forEachEngine(t, 'deleting a portfolio is atomic: a failure keeps it and its assets', async (t, engine) => {
  // A file, so that a second connection sees the same SQLite database.
  const file = `sqlite:${join(mkdtempSync(join(tmpdir(), 'bff-atomic-')), 'bff.sqlite')}`
  const { url, schema, searchPathUrl } =
    engine === 'sqlite' ? { url: file, schema: undefined, searchPathUrl: file } : await freshDatabase(t, engine)
  const store = await Store.open(url, { schema })
  t.teardown(() => store.close())
  const portfolio = await store.portfolios.create({ name: 'P', userId: 'u' })
  const domain = domainOver(store)
  const asset = await domain.assets.create(TRUSTED, {
    name: 'A',
    symbol: 'A',
    type: 'STOCK',
    quantity: 1,
    price: 1,
    portfolioId: portfolio.id
  })
  await refusePortfolioDeletes(searchPathUrl)
  await t.rejects(domain.portfolios.delete(TRUSTED, portfolio.id), /refused by the test/)
  t.same(
    (await store.assets.list({ portfolioId: portfolio.id }, page)).map(a => a.id),
    [asset.id],
    'the rolled-back delete removed no asset'
  )
  t.same((await store.transactions.list(asset.id, page))?.length, 1, '…and no transaction')
  t.equal((await store.portfolios.portfolioOnly(portfolio.id))?.totalValue, 1)
})

forEachEngine(t, 'a write of the domain commits its rows together or not at all, and tells its changes once ' +
  'committed', async (t, engine) => {
  const { url, schema } = await freshDatabase(t, engine)
  const store = await Store.open(url, { schema })
  t.teardown(() => store.close())
  const told: PortfolioChange[] = []
  store.onPortfolioChange(change => { told.push(change) })
  const { id } = await store.portfolios.create({ name: 'P', userId: 'u' })
  const asset = { portfolioId: id, name: 'A', symbol: 'A', type: 'STOCK' as const, quantity: 2, price: 3 }
  await t.rejects(store.write(async work => {
    await work.portfolios.touch(id)
    await work.assets.insert({ ...asset, valueCents: 600, ...NO_EVENT_COLUMNS })
    throw new Error('refused by the test')
  }), /refused by the test/)
  t.same(await store.assets.list({ portfolioId: id }, page), [], 'the insert rolled back')
  t.equal((await store.portfolios.portfolioAndAssets(id))?.version, 1, 'and the touch')
  t.same(told, [], 'nothing told')

  const inserted = await store.write(async work => {
    await work.portfolios.touch(id)
    const written = await work.assets.insert({ ...asset, valueCents: 600, ...NO_EVENT_COLUMNS })
    t.same(told, [], 'nothing told before the commit')
    return written
  })
  t.same(told, [{ kind: 'portfolio', portfolioId: id, deleted: false }], 'its portfolio\'s change, once committed')
  t.same((await store.portfolios.portfolioAndAssets(id))?.assets.map(a => a.id), [inserted.id])
})

t.test('the store plugin accepts a store opened by the host and leaves it open', async t => {
  const store = await Store.open('sqlite::memory:')
  t.teardown(() => store.close())
  const app = Fastify()
  await app.register(storePlugin, { store })
  await app.ready()
  t.equal(app.store, store)
  await app.close()
  await t.resolves(store.ping(), 'the host\'s store is still open after the app closed')
})

t.test('statistics are shared for a moment, but never hide this instance\'s own writes', async t => {
  const url = `sqlite:${join(mkdtempSync(join(tmpdir(), 'bff-stats-')), 'bff.sqlite')}`
  const mine = await Store.open(url)
  const other = await Store.open(url)
  t.teardown(async () => { await mine.close(); await other.close() })
  t.equal((await mine.stats.get()).totalPortfolios, 0)
  await other.portfolios.create({ name: 'Theirs', userId: 'o' })
  t.equal((await mine.stats.get()).totalPortfolios, 0, 'another instance\'s write shows after the TTL')
  t.equal((await other.stats.get()).totalPortfolios, 1)
  await mine.portfolios.create({ name: 'Mine', userId: 'm' })
  const stats = await mine.stats.get()
  t.equal(stats.totalPortfolios, 2, 'a write of this instance refreshes at once')
  t.equal(stats.activeUsers, 2)
  const [a, b] = await Promise.all([mine.stats.get(), mine.stats.get()])
  t.same(a, b)
})

t.test('a portfolio detail reads its assets in index order, with assets in order, ' +
  'and sorts nothing in a temporary B-tree', async t => {
  const url = `sqlite:${join(mkdtempSync(join(tmpdir(), 'bff-store-')), 'bff.sqlite')}`
  const store = await Store.open(url)
  t.teardown(() => store.close())
  const portfolio = await store.portfolios.create({ name: 'Ordered', userId: 'o' })
  const names = ['c', 'a', 'b']
  for (const name of names) {
    await domainOver(store).assets.create(TRUSTED, {
      name,
      symbol: 'PETR4',
      type: 'STOCK',
      quantity: 1,
      price: 2,
      portfolioId: portfolio.id
    })
    // Assets of one millisecond are ordered by id: each gets a millisecond of its own.
    const created = Date.now()
    while (Date.now() === created) await new Promise(resolve => setTimeout(resolve, 1))
  }
  t.same(
    (await store.portfolios.portfolioAndAssets(portfolio.id))?.assets.map(asset => asset.name),
    names,
    'in the order they were added'
  )

  const raw = new SqliteDatabase(url.slice('sqlite:'.length), { readonly: true })
  t.teardown(() => raw.close())
  const plan = raw
    .prepare(`explain query plan ${withAssetsSql('sqlite')}`)
    .all(portfolio.id) as Array<{ detail: string }>
  t.notOk(plan.some(step => step.detail.includes('TEMP B-TREE')), plan.map(step => step.detail).join(' | '))
})

t.test('a SQLite file is checkpointed by a thread of its own, not by the connection that serves', async t => {
  const file = join(mkdtempSync(join(tmpdir(), 'bff-store-')), 'bff.sqlite')
  const store = await Store.open(`sqlite:${file}`)
  const raw = new SqliteDatabase(file)
  t.teardown(() => raw.close())
  // The serving connection's setting is not visible from here; a fresh connection's is SQLite's default.
  t.equal(raw.pragma('wal_autocheckpoint', { simple: true }), 1000)
  const before = statSync(file).size
  for (let index = 0; index < 300; index++) {
    await store.portfolios.create({ name: `Checkpointed ${index}`, userId: 'cp' })
  }
  // The worker copies committed pages into the database file on its own.
  while (statSync(file).size === before) await new Promise(resolve => setTimeout(resolve, 50))
  t.ok(statSync(file).size > before, 'pages reached the database file without a checkpoint from this thread')
  await store.close()
  t.same(
    raw.prepare("select count(*) as n from portfolios where user_id = 'cp'").get(),
    { n: 300 },
    'every write is there after close'
  )
})
