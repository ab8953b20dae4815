import t, { type Test } from 'tap'
import { Store } from '../../src/store/store.js'
import { forEachEngine, freshStore, type Engine } from '../helper.js'
import { domainOver, TRUSTED } from '../fixtures/store-domain.js'

const page = { limit: 1000, offset: 0 }

async function openStore (t: Test, engine: Engine): Promise<Store> {
  const store = await Store.open(...await freshStore(t, engine))
  t.teardown(() => store.close())
  return store
}

forEachEngine(t, 'a change sets only the fields it is given; a null description clears it', async (t, engine) => {
  const store = await openStore(t, engine)
  const { id } = await store.portfolios.create({ name: 'N0', description: 'D0', userId: 'u' })
  const fields = async (): Promise<[string, string | null]> => {
    const portfolio = await store.portfolios.portfolioOnly(id)
    return [String(portfolio?.name), portfolio?.description ?? null]
  }
  const change = async (input: { name?: string, description?: string | null }) =>
    await store.write(async work => await work.portfolios.change(id, input))

  const renamed = await change({ name: 'N1' })
  t.same(await fields(), ['N1', 'D0'], 'the name alone')
  t.equal(renamed?.value.name, 'N1', 'the answer is the row after the change')
  await change({ description: 'D1' })
  t.same(await fields(), ['N1', 'D1'], 'the description alone')
  await change({ description: null })
  t.same(await fields(), ['N1', null], 'a null description clears it')
  const both = await change({ name: 'N2', description: 'D2' })
  t.same(await fields(), ['N2', 'D2'], 'both')
  const after = await store.portfolios.portfolioOnly(id)
  t.equal(after?.updatedAt, both?.value.updatedAt, 'updated_at is the change\'s')
  t.equal(both?.version, (await store.portfolios.portfolioAndAssets(id))?.version,
    'the version read in the transaction')
  t.equal(both?.version, 5, 'each change bumps it')
  t.equal(await store.write(async work => await work.portfolios.change('nope', { name: 'x' })), undefined,
    'no such portfolio')
})

forEachEngine(t, 'a write reads a portfolio\'s owner and version under its lock; a touch bumps the version and ' +
  'answers the owner', async (t, engine) => {
  const store = await openStore(t, engine)
  const { id } = await store.portfolios.create({ name: 'P', userId: 'ana' })
  t.same(await store.write(async work => await work.portfolios.lockForWrite(id)), { userId: 'ana', version: 1 })
  t.same(await store.write(async work => await work.portfolios.lockForDelete(id)), { userId: 'ana', version: 1 })
  t.equal(await store.write(async work => await work.portfolios.lockForWrite('nope')), undefined)
  t.equal(await store.write(async work => await work.portfolios.lockForDelete('nope')), undefined)

  const touched = await store.write(async work => ({ owner: await work.portfolios.touch(id), now: work.now }))
  t.equal(touched.owner, 'ana')
  t.equal((await store.portfolios.portfolioOnly(id))?.updatedAt, touched.now, 'updated_at is the write\'s instant')
  t.equal((await store.portfolios.portfolioAndAssets(id))?.version, 2, 'its read\'s version bumped')
  t.equal(await store.write(async work => await work.portfolios.touch('nope')), undefined, 'no such portfolio')
})

forEachEngine(t, 'a delete takes the portfolio\'s transactions and assets, and no other\'s', async (t, engine) => {
  const store = await openStore(t, engine)
  const domain = domainOver(store)
  const portfolio = await store.portfolios.create({ name: 'P', userId: 'u' })
  const kept = await store.portfolios.create({ name: 'Kept', userId: 'u' })
  const input = { name: 'A', symbol: 'A', type: 'STOCK' as const, quantity: 2, price: 3 }
  const asset = await domain.assets.create(TRUSTED, { ...input, portfolioId: portfolio.id })
  const other = await domain.assets.create(TRUSTED, { ...input, portfolioId: kept.id })
  const transactionsOf = async (id: string): Promise<unknown[] | undefined> =>
    await store.transactions.list(id, { limit: 10, offset: 0 })
  t.equal((await transactionsOf(asset.id))?.length, 1)
  t.equal((await store.stats.get()).totalPortfolios, 2)

  t.equal(await store.write(async work => await work.portfolios.delete(portfolio.id)), true)
  t.equal(await store.write(async work => await work.portfolios.delete(portfolio.id)), false, 'gone already')
  t.equal(await store.portfolios.portfolioOnly(portfolio.id), undefined)
  t.equal(await store.assets.versioned(asset.id), undefined)
  t.same(await store.transactions.ofAssets([asset.id]), new Map([[asset.id, []]]), 'its transactions went with it')
  t.equal((await transactionsOf(other.id))?.length, 1, 'another portfolio\'s transactions stay')
  t.equal((await store.stats.get()).totalPortfolios, 1, 'a delete refreshes the statistics at once')
})

forEachEngine(t, 'lists: every portfolio or a user\'s, oldest first, paged', async (t, engine) => {
  const store = await openStore(t, engine)
  const names = ['a1', 'b1', 'a2', 'a3']
  for (const name of names) await store.portfolios.create({ name, userId: name.slice(0, 1) })
  const before = (await store.stats.get()).totalPortfolios
  await store.portfolios.create({ name: 'a4', userId: 'a' })
  t.equal((await store.stats.get()).totalPortfolios, before + 1, 'a create refreshes the statistics at once')
  const all = await store.portfolios.list({}, page)
  t.same(all.map(p => p.name).sort(), [...names, 'a4'].sort())
  const created = all.map(p => p.createdAt)
  t.same(created, [...created].sort(), 'oldest first')
  const mine = (await store.portfolios.list({ userId: 'a' }, page)).map(p => p.name)
  t.same([...mine].sort(), ['a1', 'a2', 'a3', 'a4'], 'a user\'s only')
  t.same((await store.portfolios.list({ userId: 'a' }, { limit: 2, offset: 1 })).map(p => p.name), mine.slice(1, 3))
  t.same((await store.portfolios.list({}, { limit: 1, offset: 4 })).map(p => p.name), [all[4]?.name])
})
