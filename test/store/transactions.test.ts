import t from 'tap'
import { Store } from '../../src/store/store.js'
import { forEachEngine, freshDatabase } from '../helper.js'
import { domainOver, TRUSTED } from '../fixtures/store-domain.js'
import { NOT_IMPORTED } from '../fixtures/portfolios.js'

const page = { limit: 1000, offset: 0 }

forEachEngine(t, 'the assets\' transactions in one read, each asset\'s in order', async (t, engine) => {
  const store = await Store.open((await freshDatabase(t, engine)).searchPathUrl)
  t.teardown(() => store.close())
  const domain = domainOver(store)
  const portfolio = await store.portfolios.create({ name: 'Many', userId: 'u' })
  const input = { name: 'A', symbol: 'A', type: 'STOCK' as const, quantity: 1, price: 1, portfolioId: portfolio.id }
  const first = (await domain.assets.create(TRUSTED, { ...input, date: '2024-05-01' })).id
  const second = (await domain.assets.create(TRUSTED, input)).id
  await domain.transactions.add(TRUSTED, first, { type: 'BUY', date: '2024-01-01', quantity: 2, price: 3, fee: 0.5 })
  const read = await store.transactions.ofAssets([first, second, 'none'])
  t.same([...read.keys()], [first, second, 'none'])
  t.same(read.get(first)?.map(tx => tx.date), ['2024-01-01', '2024-05-01'])
  t.equal(read.get(second)?.length, 1)
  t.same(read.get('none'), [])
  t.same(await store.transactions.ofAssets([]), new Map())
  t.equal(await store.transactions.list('none', page), undefined)
})

forEachEngine(t, 'a write reads an asset\'s transactions in the order they count, each with its place as recorded, ' +
  'and records and deletes rows as it is told', async (t, engine) => {
  const store = await Store.open((await freshDatabase(t, engine)).searchPathUrl)
  t.teardown(() => store.close())
  const portfolio = await store.portfolios.create({ name: 'Rows', userId: 'u' })
  const asset = await domainOver(store).assets.create(TRUSTED, {
    name: 'A', symbol: 'A', type: 'STOCK', quantity: 10, price: 2, portfolioId: portfolio.id, date: '2024-03-01'
  })
  const trade = (date: string, quantity: number) => ({ type: 'SELL' as const, date, quantity, price: 3, fee: 0.25 })
  const recorded = await store.write(async work => {
    const sale = await work.trades.insert(asset.id, trade('2024-02-01', 1), 2)
    await work.trades.insert(asset.id, trade('2024-03-01', 2), 3)
    t.same(sale, {
      ...trade('2024-02-01', 1), id: sale.id, assetId: asset.id, totalValue: 3, createdAt: work.now, ...NOT_IMPORTED
    }, 'the transaction as answered: the write\'s instant, quantity × price, recorded here')
    return await work.trades.of(asset.id)
  })
  t.same(recorded.map(({ date, seq, quantity }) => [date, seq, quantity]),
    [['2024-02-01', 2, 1], ['2024-03-01', 1, 10], ['2024-03-01', 3, 2]], 'by date, then as recorded: no rule applied')
  t.match(recorded[0], { type: 'SELL', price: 3, fee: 0.25 })
  await store.write(async work => { await work.trades.delete(String(recorded[0]?.id)) })
  t.same((await store.transactions.list(asset.id, page))?.map(tx => tx.date), ['2024-03-01', '2024-03-01'])

  // An import's trades, more than one statement's worth, each with its origin.
  const imported = Array.from({ length: 501 }, (_, index) => ({
    trade: { ...trade('2024-04-01', 0.01), type: 'BUY' as const },
    seq: 10 + index,
    imported: { investmentTransactionId: `it-${index}`, estimated: index === 0 }
  }))
  const rows = await store.write(async work => {
    await work.trades.insertAll(asset.id, imported)
    return await work.trades.of(asset.id)
  })
  t.equal(rows.length, 503)
  t.same(rows.slice(2, 4).map(({ seq, investmentTransactionId: id, estimated }) => [seq, id, estimated]),
    [[10, 'it-0', true], [11, 'it-1', false]])
  t.match(rows.at(-1), { seq: 510, investmentTransactionId: 'it-500', estimated: false, quantity: 0.01 })
})
