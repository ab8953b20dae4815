import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { sql } from 'kysely'
import { connect } from '../../src/store/connect.js'
import { Store } from '../../src/store/store.js'
import { forEachEngine, freshDatabase, type Engine } from '../helper.js'
import { domainOver, TRUSTED } from '../fixtures/store-domain.js'

const page = { limit: 1000, offset: 0 }
const today = (): string => new Date().toISOString().slice(0, 10)

/** A store, and a connection of its own to the same database: the previous version's, writing lots. */
async function storeAndPreviousVersion (t: Test, engine: Engine): Promise<{
  store: Store
  previous: (statement: ReturnType<typeof sql>) => Promise<void>
}> {
  const url = engine === 'sqlite'
    ? `sqlite:${join(mkdtempSync(join(tmpdir(), 'bff-transactions-')), 'bff.sqlite')}`
    : (await freshDatabase(t, engine)).searchPathUrl
  const store = await Store.open(url)
  t.teardown(() => store.close())
  const { db, release } = await connect(url)
  t.teardown(async () => {
    await db.destroy()
    await release?.()
  })
  return { store, previous: async statement => { await statement.execute(db) } }
}

forEachEngine(t, 'what the previous version wrote during a rolling deployment is recorded at the next write, ' +
  'as a PATCH of quantity records it now', async (t, engine) => {
  const { store, previous } = await storeAndPreviousVersion(t, engine)
  const { assets, transactions } = domainOver(store)
  const portfolio = await store.portfolios.create({ name: 'Rolling', userId: 'u' })
  const input = {
    name: 'A', symbol: 'PETR4', type: 'STOCK' as const, quantity: 100, price: 32, portfolioId: portfolio.id
  }
  const assetId = (await assets.create(TRUSTED, { ...input, date: '2025-01-10' })).id
  const stamp = new Date().toISOString()

  // The previous version's PATCH {quantity: 130, price: 35}: the asset's row, and a lot.
  await previous(sql`update portfolio_assets set quantity = 130, price = 35, value_cents = 455000
    where id = ${assetId}`)
  await previous(sql`insert into asset_lots (id, asset_id, date, seq, quantity, price, created_at)
    values ('lot-1', ${assetId}, ${today()}, 2, 30, 35, ${stamp})`)
  const sale = await transactions.add(TRUSTED, assetId, { type: 'SELL', date: today(), quantity: 10, price: 40 })
  const listed = await transactions.list(TRUSTED, assetId, page)
  t.same(listed.map(tx => [tx.type, tx.date, tx.quantity, tx.price]), [
    ['BUY', '2025-01-10', 100, 32], ['BUY', today(), 30, 35], ['SELL', today(), 10, 40]
  ], 'the 30 bought meanwhile, at the asset\'s price, before the sale')
  t.equal(listed.at(-1)?.id, sale.id)
  // (3200 + 1050) / 130 = 32.69230769
  t.match((await assets.get(TRUSTED, assetId)).value, { quantity: 120, price: 32.69230769 })

  // The previous version's PATCH {quantity: 50}: FIFO on its lots, the asset's row.
  await previous(sql`update portfolio_assets set quantity = 50, value_cents = 163462 where id = ${assetId}`)
  await transactions.remove(TRUSTED, assetId, sale.id)
  t.same((await transactions.list(TRUSTED, assetId, page)).map(tx => [tx.type, tx.quantity, tx.price]), [
    ['BUY', 100, 32], ['BUY', 30, 35], ['SELL', 70, 32.69230769]
  ], 'the 70 sold meanwhile, at the asset\'s price; the sale undone')
  t.match((await assets.get(TRUSTED, assetId)).value, { quantity: 60, price: 32.69230769 })

  // The previous version's create: an asset and its lot, no transaction; then this version's PATCH.
  await previous(sql`insert into portfolio_assets
    (id, portfolio_id, name, symbol, type, quantity, price, value_cents, created_at, updated_at, version)
    values ('old-asset', ${portfolio.id}, 'B', 'VALE3', 'STOCK', 5, 10, 5000, ${stamp}, ${stamp}, 1)`)
  await previous(sql`insert into asset_lots (id, asset_id, date, seq, quantity, price, created_at)
    values ('lot-2', 'old-asset', ${today()}, 1, 5, 10, ${stamp})`)
  t.match((await assets.update(TRUSTED, 'old-asset', { quantity: 3, price: 12 })).value, { quantity: 3, price: 12 })
  t.same((await transactions.list(TRUSTED, 'old-asset', page)).map(tx => [tx.type, tx.quantity, tx.price]), [
    ['BUY', 5, 10], ['SELL', 2, 12]
  ], 'the create, at the price the asset had, then the PATCH\'s sale at its own price')
})
