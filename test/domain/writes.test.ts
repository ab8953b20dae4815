import t from 'tap'
import { Store } from '../../src/store/store.js'
import type { PortfolioChange } from '../../src/change-feed/change-events.js'
import { forEachEngine, freshStore } from '../helper.js'
import { domainOver, ownerAccess, TRUSTED } from '../fixtures/store-domain.js'

/*
 * The services' writes, each one unit of work of the store (src/domain/ports.ts): they decide on the row they read
 * under the write's lock — the scope first, then an If-Match — and what a refused write wrote before refusing is
 * rolled back and told to no one. Through the domain over a store, on both engines.
 */

const stale = (): boolean => false
const missing = (noun: string): { code: string, message: string } =>
  ({ code: 'BFF_NOT_FOUND', message: `${noun} não encontrado` })

forEachEngine(t, 'another user\'s portfolio or asset is NOT_FOUND before its tag is compared, and a refused ' +
  'write leaves nothing written and tells nothing', async (t, engine) => {
  const store = await Store.open(...await freshStore(t, engine))
  t.teardown(() => store.close())
  const domain = domainOver(store)
  const told: PortfolioChange[] = []
  store.onPortfolioChange(change => { told.push(change) })
  const theirs = await store.portfolios.create({ name: 'Theirs', userId: 'bia' })
  const input = { name: 'A', symbol: 'A', type: 'STOCK' as const, quantity: 2, price: 3, portfolioId: theirs.id }
  const asset = await domain.assets.create(TRUSTED, input)
  const [bought] = await domain.transactions.list(TRUSTED, asset.id, {})
  const rows = async (): Promise<unknown> =>
    ({ detail: await store.portfolios.portfolioAndAssets(theirs.id), asset: await store.assets.versioned(asset.id) })
  const before = await rows()
  told.length = 0

  const ana = ownerAccess('ana')
  const sale = { type: 'SELL' as const, date: asset.createdAt.slice(0, 10), quantity: 1, price: 3 }
  await t.rejects(domain.assets.create(ana, input), missing('Portfolio'), 'a create in it: its touch rolled back')
  await t.rejects(domain.assets.update(ana, asset.id, { quantity: 1 }, stale), missing('Ativo'))
  await t.rejects(domain.assets.delete(ana, asset.id, stale), missing('Ativo'))
  await t.rejects(domain.transactions.add(ana, asset.id, sale), missing('Ativo'))
  await t.rejects(domain.transactions.remove(ana, asset.id, String(bought?.id)), missing('Ativo'))
  await t.rejects(domain.portfolios.update(ana, theirs.id, { name: 'Mine' }, stale), missing('Portfolio'))
  await t.rejects(domain.portfolios.delete(ana, theirs.id, stale), missing('Portfolio'))
  await t.rejects(domain.assets.delete(ana, asset.id), missing('Ativo'), 'without If-Match too')
  await t.rejects(domain.portfolios.update(ana, theirs.id, { name: 'Mine' }), missing('Portfolio'))
  await t.rejects(domain.portfolios.delete(ana, theirs.id), missing('Portfolio'))

  const bia = ownerAccess('bia')
  const failed = { code: 'BFF_PRECONDITION_FAILED' }
  await t.rejects(domain.assets.update(bia, asset.id, { quantity: 1 }, stale), failed, 'the owner\'s stale tag: 412')
  await t.rejects(domain.assets.delete(bia, asset.id, stale), failed)
  await t.rejects(domain.portfolios.update(bia, theirs.id, { name: 'Mine' }, stale), failed)
  await t.rejects(domain.portfolios.delete(bia, theirs.id, stale), failed)
  await t.rejects(domain.transactions.add(bia, asset.id, { ...sale, quantity: 3 }),
    { code: 'BFF_INSUFFICIENT_QUANTITY' }, 'a sale of more than is held')
  t.same(await rows(), before, 'nothing written')
  t.same(told, [], 'nothing told')

  const version = (await store.assets.versioned(asset.id))?.version ?? 0
  const changed = await domain.assets.update(bia, asset.id, { quantity: 1 }, tag => tag === `"${asset.id}.${version}"`)
  t.equal(changed.etag, `"${asset.id}.${version + 1}"`, 'the tag the write answers')
  t.same(told, [{ kind: 'portfolio', portfolioId: theirs.id, deleted: false }], 'its portfolio\'s change, told once')
})
