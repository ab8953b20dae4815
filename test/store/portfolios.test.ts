import t, { type Test } from 'tap'
import { Store } from '../../src/store/store.js'
import { PreconditionFailedError } from '../../src/errors.js'
import { forEachEngine, freshStore, type Engine } from '../helper.js'

const page = { limit: 1000, offset: 0 }
const never = (): boolean => false
const always = (): boolean => true

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

  const renamed = await store.portfolios.change(id, { name: 'N1' })
  t.same(await fields(), ['N1', 'D0'], 'the name alone')
  t.equal(renamed?.portfolio.name, 'N1', 'the answer is the row after the change')
  await store.portfolios.change(id, { description: 'D1' })
  t.same(await fields(), ['N1', 'D1'], 'the description alone')
  await store.portfolios.change(id, { description: null })
  t.same(await fields(), ['N1', null], 'a null description clears it')
  const both = await store.portfolios.change(id, { name: 'N2', description: 'D2' })
  t.same(await fields(), ['N2', 'D2'], 'both')
  const after = await store.portfolios.portfolioOnly(id)
  t.equal(after?.updatedAt, both?.portfolio.updatedAt, 'updated_at is the change\'s')
  t.equal(both?.etag, (await store.portfolios.taggedDetail(id))?.etag, 'the tag read in the transaction')

  t.equal(await store.portfolios.change('nope', { name: 'x' }), undefined, 'no such portfolio')
  t.equal(await store.portfolios.change('nope', { name: 'x' }, never), undefined, 'a missing one passes the check')
  await t.rejects(store.portfolios.change(id, { name: 'N3' }, never), PreconditionFailedError)
  t.same(await fields(), ['N2', 'D2'], 'a failed precondition changes nothing')
})

forEachEngine(t, 'a delete takes the transactions, assets and portfolio if its precondition holds', async (
  t, engine
) => {
  const store = await openStore(t, engine)
  const portfolio = await store.portfolios.create({ name: 'P', userId: 'u' })
  const kept = await store.portfolios.create({ name: 'Kept', userId: 'u' })
  const input = { name: 'A', symbol: 'A', type: 'STOCK' as const, quantity: 2, price: 3 }
  const asset = await store.assets.create({ ...input, portfolioId: portfolio.id })
  const other = await store.assets.create({ ...input, portfolioId: kept.id })
  t.ok(asset !== undefined && other !== undefined)
  const assetId = String(asset?.id)
  const transactionsOf = async (id: string): Promise<unknown[] | undefined> =>
    await store.transactions.list(id, { limit: 10, offset: 0 })
  t.equal((await transactionsOf(assetId))?.length, 1)
  t.equal((await store.stats.get()).totalPortfolios, 2)

  await t.rejects(store.portfolios.delete(portfolio.id, never), PreconditionFailedError)
  t.equal((await transactionsOf(assetId))?.length, 1, 'a failed precondition deletes nothing')
  t.equal((await store.portfolios.taggedDetail(portfolio.id))?.value.assets.length, 1)

  t.equal(await store.portfolios.delete(portfolio.id, always), true)
  t.equal(await store.portfolios.portfolioOnly(portfolio.id), undefined)
  t.equal(await store.assets.get(assetId), undefined)
  t.same(await store.transactions.ofAssets([assetId]), new Map([[assetId, []]]), 'its transactions went with it')
  t.equal((await transactionsOf(String(other?.id)))?.length, 1, 'another portfolio\'s transactions stay')
  t.equal((await store.stats.get()).totalPortfolios, 1, 'a delete refreshes the statistics at once')
  t.equal(await store.portfolios.delete(portfolio.id), false, 'gone already')
})

forEachEngine(t, 'asset writes touch their portfolio; an asset of no portfolio is not stored', async (t, engine) => {
  const store = await openStore(t, engine)
  const portfolio = await store.portfolios.create({ name: 'P', userId: 'u' })
  const input = { name: 'A', symbol: 'A', type: 'STOCK' as const, quantity: 1, price: 10 }
  t.equal(await store.assets.create({ ...input, portfolioId: 'nope' }), undefined)
  t.same(await store.assets.list({}, page), [])
  const asset = await store.assets.create({ ...input, portfolioId: portfolio.id })
  t.equal((await store.portfolios.portfolioOnly(portfolio.id))?.updatedAt, asset?.updatedAt, 'the create touched it')
  const updated = await store.assets.update(String(asset?.id), { quantity: 3 })
  const after = await store.portfolios.portfolioOnly(portfolio.id)
  t.equal(after?.updatedAt, updated?.value.updatedAt, 'the update touched it')
  t.equal(after?.totalValue, 30)
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
