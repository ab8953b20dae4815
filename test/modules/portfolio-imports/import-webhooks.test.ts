import t from 'tap'
import type { ServerResponse } from 'node:http'
import { buildDataApp, buildTestApp, forEachEngine, freshDatabase, NEEDS_POSTGRES, testNeeding } from '../../helper.js'
import { startFakePluggy, type FakePluggy } from '../../fixtures/fake-pluggy.js'
import { sendJson } from '../../fixtures/fake-server.js'
import { pluggyInvestment, pluggyInvestmentTransaction } from '../../fixtures/pluggy-shapes.js'
import { ANA, asUser } from '../../fixtures/owners.js'
import { until } from '../../fixtures/until.js'
import { Store } from '../../../src/store/store.js'
import type { App } from '../../../src/app.js'
import type { InvestmentImport } from '../../../src/schemas/import.js'
import { ended, holdingsOf, imported, importConfig, portfolioOf } from './import-helpers.js'

/** An item of ana's with one equity of `count` investments, each bought once and held in full. */
function equities (pluggy: FakePluggy, count: number): void {
  pluggy.items.set('item-ana', ANA)
  for (let index = 0; index < count; index++) {
    const id = `inv-${index}`
    pluggy.investments.set(id, pluggyInvestment(id, 'item-ana', { code: `ABCD${index + 3}`, quantity: 10 }))
    pluggy.investmentTransactions.set(id, [pluggyInvestmentTransaction(`${id}-t0`, id, { quantity: 10 })])
  }
}

async function webhook (app: App, eventId: string): Promise<void> {
  const res = await app.inject({
    method: 'POST', url: '/aggregator/webhook', payload: { event: 'item/updated', eventId, itemId: 'item-ana' }
  })
  if (res.statusCode !== 200) throw new Error(`webhook answered ${res.statusCode}: ${res.body}`)
}

/** The portfolio's imports, latest first, read from the store (a poll through the routes would meet their limit). */
async function importsOf (app: App, portfolioId: string): Promise<InvestmentImport[]> {
  return await app.store.imports.ofPortfolio(portfolioId, { limit: 10, offset: 0 })
}

forEachEngine(t, 'a verified item/updated imports a linked item again', async (t, engine) => {
  const pluggy = await startFakePluggy(t)
  equities(pluggy, 1)
  const app = await buildDataApp(t, engine, importConfig(pluggy, { IMPORT_DELAY_MS: '0' }))
  const portfolioId = await portfolioOf(app, ANA)
  await imported(app, ANA, portfolioId, 'item-ana')
  pluggy.investments.set('inv-0', pluggyInvestment('inv-0', 'item-ana', { code: 'ABCD3', quantity: 15 }))
  pluggy.investmentTransactions.get('inv-0')?.push(pluggyInvestmentTransaction('inv-0-t1', 'inv-0', {
    quantity: 5, tradeDate: '2025-09-01T00:00:00.000Z'
  }))
  await webhook(app, 'e-1')
  let seen: InvestmentImport[] = []
  await until('a second import done', async () => {
    seen = await importsOf(app, portfolioId)
    return seen.length === 2 && seen[0]?.status === 'done'
  }, () => seen)
  t.match(seen[0], { itemId: 'item-ana', counts: { assetsUpdated: 1, transactionsRecorded: 1 } })
  const held = (await holdingsOf(app, ANA, portfolioId)).get('inv-0')
  t.equal(held?.asset.quantity, 15)
  t.same(held?.transactions.map(transaction => transaction.investmentTransactionId), ['inv-0-t0', 'inv-0-t1'])
})

testNeeding(t, 'two instances, one webhook (redelivered, sent to both): one import', [NEEDS_POSTGRES], async t => {
  const pluggy = await startFakePluggy(t)
  equities(pluggy, 1)
  const { env: database } = await freshDatabase(t, 'postgres')
  // A minute's delay: the import is queued, not run, while the events arrive.
  const config = { ...database, ...importConfig(pluggy) }
  const [a, b] = [await buildTestApp(t, config), await buildTestApp(t, config)]
  const portfolioId = await portfolioOf(a, ANA)
  await imported(a, ANA, portfolioId, 'item-ana')
  const lookups = (): number => pluggy.received.filter(request => request.path === '/items/item-ana').length
  const before = lookups()
  await Promise.all([webhook(a, 'e-1'), webhook(b, 'e-1'), webhook(a, 'e-2'), webhook(b, 'e-3')])
  // A redelivery is not verified again: three distinct events, three lookups.
  await until('each event verified', () => lookups() === before + 3, lookups)
  // Closing waits for the verifications and what follows them: after it no instance can still be asking.
  await Promise.all([a.close(), b.close()])
  const store = await Store.open(database.DATABASE_URL, { schema: database.DATABASE_SCHEMA })
  t.teardown(() => store.close())
  const all = await store.imports.ofPortfolio(portfolioId, { limit: 10, offset: 0 })
  t.same(all.map(({ status }) => status), ['queued', 'done'], 'one import queued after the first')
  const job = await store.jobs.entry('import', 'item-ana')
  t.equal(job?.state, 'queued')
  t.ok(Date.parse(job?.nextAttemptAt ?? '') > Date.now() + 30_000, 'due a minute after the events')
})

testNeeding(t, 'SIGTERM mid-import: the other instance finishes it, nothing twice', [NEEDS_POSTGRES], async t => {
  const pluggy = await startFakePluggy(t)
  equities(pluggy, 3)
  let answer: (() => void) | undefined
  // The second investment's read waits until the test lets it answer, so that the instance closes mid-import.
  pluggy.once('/investments/inv-1/transactions', async (_request, res: ServerResponse) => {
    await new Promise<void>(resolve => { answer = resolve })
    const results = pluggy.investmentTransactions.get('inv-1') ?? []
    sendJson(res, 200, { results, page: 1, total: results.length, totalPages: 1 })
  })
  const { env: database } = await freshDatabase(t, 'postgres')
  const config = { ...database, ...importConfig(pluggy), JOB_LEASE_MS: '3000' }
  const first = await buildTestApp(t, config)
  const portfolioId = await portfolioOf(first, ANA)
  const asked = await first.inject({
    method: 'POST', url: `/portfolios/${portfolioId}/imports`, headers: asUser(ANA), payload: { itemId: 'item-ana' }
  })
  const importId = (asked.json() as InvestmentImport).id
  await until('the first instance mid-import', () => answer !== undefined)
  const second = await buildTestApp(t, config)
  const closing = first.close()
  answer?.()
  await closing
  const done = await ended(second, ANA, portfolioId, importId)
  t.match(done, { status: 'done', counts: { investments: 3, assetsCreated: 3, transactionsRecorded: 3 } })
  for (const id of ['inv-0', 'inv-1', 'inv-2']) {
    t.equal(pluggy.received.filter(request => request.path === `/investments/${id}/transactions`).length, 1,
      `${id} read once, by one instance`)
  }
  const held = await holdingsOf(second, ANA, portfolioId)
  t.same([...held.values()].map(({ transactions }) => transactions.length), [1, 1, 1])
})
