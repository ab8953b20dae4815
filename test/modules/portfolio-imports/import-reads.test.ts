import t from 'tap'
import { buildDataApp, buildTestApp, forEachEngine } from '../../helper.js'
import { startFakePluggy, type FakePluggy } from '../../fixtures/fake-pluggy.js'
import { sendJson } from '../../fixtures/fake-server.js'
import { pluggyInvestment, pluggyInvestmentTransaction, tooManyRequests } from '../../fixtures/pluggy-shapes.js'
import { ANA, asUser, BIA } from '../../fixtures/owners.js'
import { until } from '../../fixtures/until.js'
import { captureLog } from '../aggregator/verification-helpers.js'
import type { InvestmentImport } from '../../../src/schemas/import.js'
import { askImport, ended, holdingsOf, imported, importConfig, portfolioOf } from './import-helpers.js'

/** `count` buys of one share each, a day apart from 2024-01-01. */
function dailyBuys (investmentId: string, count: number): Array<Record<string, unknown>> {
  return Array.from({ length: count }, (_, index) => {
    const date = new Date(Date.UTC(2024, 0, 1 + index)).toISOString()
    return pluggyInvestmentTransaction(`${investmentId}-t${index}`, investmentId, {
      quantity: 1, value: 10 + index / 100, amount: null, date, tradeDate: date
    })
  })
}

/*
 * The fake institution's histories know no corporate events: their symbols are ones the offline provider gives none
 * of (its ITUB4, BBAS3 and HGLG11 have some: docs/api.md#corporate-events).
 */

/** An item of ana's with two equities: inv-a (two buys) and inv-b (a buy), each held in full by its history. */
function twoEquities (pluggy: FakePluggy): void {
  pluggy.items.set('item-ana', ANA)
  pluggy.investments.set('inv-a', pluggyInvestment('inv-a', 'item-ana', { code: 'PETR4', quantity: 20 }))
  pluggy.investments.set('inv-b', pluggyInvestment('inv-b', 'item-ana', { code: 'WEGE3', quantity: 5 }))
  pluggy.investmentTransactions.set('inv-a', [
    pluggyInvestmentTransaction('a-1', 'inv-a', { quantity: 15 }),
    pluggyInvestmentTransaction('a-2', 'inv-a', { quantity: 5, tradeDate: '2025-07-01T00:00:00.000Z' })
  ])
  pluggy.investmentTransactions.set('inv-b', [pluggyInvestmentTransaction('b-1', 'inv-b', { quantity: 5 })])
}

const pagesAsked = (pluggy: FakePluggy, path: string): string[] => pluggy.received
  .filter(request => request.path === path)
  .map(request => `${request.query.get('page')}/${request.query.get('pageSize')}`)

forEachEngine(t, 'every page is read: 600 transactions of one investment, in pages of 500', async (t, engine) => {
  const pluggy = await startFakePluggy(t)
  pluggy.items.set('item-ana', ANA)
  pluggy.investments.set('inv-long', pluggyInvestment('inv-long', 'item-ana', { code: 'VALE3', quantity: 600 }))
  pluggy.investmentTransactions.set('inv-long', dailyBuys('inv-long', 600))
  const app = await buildDataApp(t, engine, importConfig(pluggy))
  const portfolioId = await portfolioOf(app, ANA)
  const done = await imported(app, ANA, portfolioId, 'item-ana')
  t.match(done, { status: 'done', counts: { investments: 1, assetsCreated: 1, transactionsRecorded: 600, skipped: 0 } })
  t.same(pagesAsked(pluggy, '/investments/inv-long/transactions'), ['1/500', '2/500'], 'two pages, as Pluggy pages')
  t.same(pagesAsked(pluggy, '/investments'), ['1/500'])
  const held = (await holdingsOf(app, ANA, portfolioId)).get('inv-long')
  t.equal(held?.asset.quantity, 600, 'every buy: no opening needed')
  t.equal(held?.transactions.length, 600)
  t.notOk(held?.transactions.some(transaction => transaction.estimated))
})

t.test('an answer lists the first 1 000 entries left out, and counts them all', async t => {
  const pluggy = await startFakePluggy(t)
  pluggy.items.set('item-ana', ANA)
  pluggy.investments.set('inv-taxed', pluggyInvestment('inv-taxed', 'item-ana', { code: 'VALE3', quantity: 1 }))
  const taxes = Array.from({ length: 1002 }, (_, index) => pluggyInvestmentTransaction(`tax-${index}`, 'inv-taxed', {
    type: 'TAX', quantity: null, value: null, amount: 1
  }))
  pluggy.investmentTransactions.set('inv-taxed', [...dailyBuys('inv-taxed', 1), ...taxes])
  const app = await buildTestApp(t, importConfig(pluggy))
  const portfolioId = await portfolioOf(app, ANA)
  const done = await imported(app, ANA, portfolioId, 'item-ana')
  t.match(done.counts, { transactionsRecorded: 1, skipped: 1002 })
  t.equal(done.skipped.length, 1000)
  t.equal(done.skipped[0]?.transactionId, 'tax-0', 'the first ones, in the order they were left out')
})

t.test('a 429 with Retry-After and a 5xx mid-import: tried again, nothing written twice', async t => {
  const pluggy = await startFakePluggy(t)
  twoEquities(pluggy)
  pluggy.once('/investments/inv-b/transactions', async (_request, res) => { tooManyRequests('1')(res) })
  pluggy.once('/investments/inv-b/transactions', async (_request, res) => {
    sendJson(res, 503, { code: 503, message: 'unavailable' })
  })
  const app = await buildTestApp(t, importConfig(pluggy))
  const portfolioId = await portfolioOf(app, ANA)
  const done = await imported(app, ANA, portfolioId, 'item-ana')
  t.match(done, { status: 'done', error: null, counts: { assetsCreated: 2, transactionsRecorded: 3 } })
  t.equal(pluggy.received.filter(request => request.path === '/investments/inv-b/transactions').length, 3,
    'the 429, the 503, then the answer')
  t.equal(pluggy.received.filter(request => request.path === '/investments/inv-a/transactions').length, 1,
    'what the first attempt wrote is not read again')
  const held = await holdingsOf(app, ANA, portfolioId)
  t.same([...held.values()].map(({ asset, transactions }) => [asset.symbol, asset.quantity, transactions.length])
    .sort(), [['PETR4', 20, 2], ['WEGE3', 5, 1]])
})

t.test('failing reads end the import failed after IMPORT_ATTEMPTS, keeping what it wrote', async t => {
  const pluggy = await startFakePluggy(t)
  twoEquities(pluggy)
  pluggy.on('/investments/inv-b/transactions', async (_request, res) => {
    sendJson(res, 500, { code: 500, message: 'down' })
  })
  const { lines, logger } = captureLog()
  const app = await buildTestApp(t, importConfig(pluggy, { IMPORT_ATTEMPTS: '3', METRICS_PORT: '0' }), { logger })
  const portfolioId = await portfolioOf(app, ANA)
  const failed = await imported(app, ANA, portfolioId, 'item-ana')
  t.match(failed, { status: 'failed', error: /^UPSTREAM_UNAVAILABLE: /, counts: { assetsCreated: 1 } })
  t.equal(pluggy.received.filter(request => request.path === '/investments/inv-b/transactions').length, 3)
  t.same([...(await holdingsOf(app, ANA, portfolioId)).keys()], ['inv-a'], 'the investment it finished stands')
  t.equal(await app.store.jobs.count('import'), 0, 'nothing left queued')
  t.equal(lines.filter(line => line.msg === 'investment import attempt failed').length, 3)
  t.match(lines.filter(line => /^investment import (done|failed)$/.test(String(line.msg))), [{
    level: 40,
    msg: 'investment import failed',
    importId: failed.id,
    portfolioId,
    itemId: 'item-ana',
    status: 'failed',
    counts: { investments: 2, assetsCreated: 1 },
    error: failed.error,
    durationMs: Number
  }], 'one line for the import, with its counts')
  const metrics = async (): Promise<string> => await (await fetch(`${app.metricsAddress() ?? ''}/metrics`)).text()
  t.match(await metrics(), /^bff_imports_total\{outcome="failed"\} 1$/m)
  t.match(await metrics(), /^bff_import_duration_seconds_count\{outcome="failed"\} 1$/m)
  t.match(await metrics(), /^bff_import_investments_total 2$/m)

  // The next import completes the rest.
  pluggy.on('/investments/inv-b/transactions', async (_request, res) => {
    const results = [pluggyInvestmentTransaction('b-1', 'inv-b', { quantity: 5 })]
    sendJson(res, 200, { results, page: 1, total: 1, totalPages: 1 })
  })
  const next = await imported(app, ANA, portfolioId, 'item-ana')
  t.match(next, { status: 'done', counts: { assetsCreated: 1, assetsUpdated: 0, transactionsRecorded: 1 } })
  t.match(await metrics(), /^bff_imports_total\{outcome="done"\} 1$/m)
  t.match(await metrics(), /^bff_import_investments_total 4$/m)
  t.same([...(await holdingsOf(app, ANA, portfolioId)).keys()].sort(), ['inv-a', 'inv-b'])
})

t.test('an item deleted during an import ends it failed, keeping what it wrote', async t => {
  const pluggy = await startFakePluggy(t)
  twoEquities(pluggy)
  pluggy.once('/investments/inv-b/transactions', async (_request, res) => {
    // Deleted at the aggregator between two reads: its investments are gone with it.
    pluggy.items.delete('item-ana')
    sendJson(res, 404, { code: 404, message: 'Investment not found' })
  })
  const app = await buildTestApp(t, importConfig(pluggy))
  const portfolioId = await portfolioOf(app, ANA)
  const failed = await imported(app, ANA, portfolioId, 'item-ana')
  t.match(failed, { status: 'failed', error: /^NOT_FOUND: /, counts: { assetsCreated: 1 } })
  t.same([...(await holdingsOf(app, ANA, portfolioId)).keys()], ['inv-a'])
  const again = await askImport(app, ANA, portfolioId, 'item-ana')
  t.equal(again.statusCode, 404, 'asked again: the item is unknown')
  t.match(again.json(), { code: 'NOT_FOUND' })
})

t.test('another\'s item is refused when asked for, and when run', async t => {
  const pluggy = await startFakePluggy(t)
  twoEquities(pluggy)
  pluggy.items.set('item-bia', BIA)
  const app = await buildTestApp(t, importConfig(pluggy))
  const portfolioId = await portfolioOf(app, ANA)
  const refused = await askImport(app, ANA, portfolioId, 'item-bia')
  t.equal(refused.statusCode, 403)
  t.match(refused.json(), { code: 'FORBIDDEN_PRINCIPAL' })
  t.equal((await askImport(app, ANA, portfolioId, 'item-nobody')).statusCode, 404, 'an unknown item')
  t.equal((await askImport(app, BIA, portfolioId, 'item-bia')).statusCode, 404, 'another\'s portfolio is not found')

  // The item changes hands between the request and the run: the run checks again.
  let lookups = 0
  pluggy.on('/items/item-ana', async (_request, res) => {
    sendJson(res, 200, { id: 'item-ana', status: 'UPDATED', clientUserId: lookups++ === 0 ? ANA : BIA })
  })
  const failed = await imported(app, ANA, portfolioId, 'item-ana')
  t.match(failed, { status: 'failed', error: /^FORBIDDEN_PRINCIPAL: /, counts: { investments: 0 } })
  t.equal(pluggy.received.filter(request => request.path === '/investments').length, 0, 'nothing of it read')
  t.same([...(await holdingsOf(app, ANA, portfolioId)).keys()], [])
})

t.test('odd answers: an investment no longer listed is skipped; an unusable page is tried again', async t => {
  const pluggy = await startFakePluggy(t)
  twoEquities(pluggy)
  pluggy.once('/investments', async (_request, res) => { sendJson(res, 408, { code: 408, message: 'timeout' }) })
  pluggy.once('/investments', async (_request, res) => { sendJson(res, 200, { results: 'none' }) })
  pluggy.once('/investments', async (_request, res) => {
    res.writeHead(200, { 'content-type': 'text/html' })
    res.end('<html>maintenance</html>')
  })
  // A page without its count is the last when it is not full (the older envelope).
  pluggy.once('/investments', async (_request, res) => {
    sendJson(res, 200, { results: [...pluggy.investments.values()] })
  })
  pluggy.once('/investments/inv-b/transactions', async (_request, res) => {
    sendJson(res, 404, { code: 404, message: 'Investment not found' })
  })
  const app = await buildTestApp(t, importConfig(pluggy))
  const portfolioId = await portfolioOf(app, ANA)
  const done = await imported(app, ANA, portfolioId, 'item-ana')
  t.match(done, {
    status: 'done',
    counts: { investments: 2, assetsCreated: 1, skipped: 1 },
    skipped: [{ investmentId: 'inv-b', transactionId: null, reason: /não lista mais/ }]
  })
  t.equal(pluggy.received.filter(request => request.path === '/investments').length, 4,
    'a 408 and two unusable pages, then one')
})

t.test('a portfolio deleted during an import ends it: nothing written after, nothing left queued', async t => {
  const pluggy = await startFakePluggy(t)
  twoEquities(pluggy)
  const app = await buildTestApp(t, importConfig(pluggy))
  const portfolioId = await portfolioOf(app, ANA)
  pluggy.once('/investments/inv-b/transactions', async (_request, res) => {
    const deleted = await app.inject({ method: 'DELETE', url: `/portfolios/${portfolioId}`, headers: asUser(ANA) })
    t.equal(deleted.statusCode, 200)
    sendJson(res, 200, { results: [], page: 1, total: 0, totalPages: 0 })
  })
  const asked = await askImport(app, ANA, portfolioId, 'item-ana')
  const importId = (asked.json() as { id: string }).id
  await until('the import gone with its portfolio, and its job', async () =>
    await app.store.imports.get(importId) === undefined && await app.store.jobs.count('import') === 0)
  t.equal((await app.inject({ url: '/portfolio-assets', headers: asUser(ANA) })).json<unknown[]>().length, 0)
})

t.test('an investment whose position is past the bounds is skipped with its reason, the others written', async t => {
  const pluggy = await startFakePluggy(t)
  twoEquities(pluggy)
  // A trillion shares opened at the first trade's price: worth more than an asset may be.
  pluggy.investments.set('inv-b', pluggyInvestment('inv-b', 'item-ana', { code: 'WEGE3', quantity: 1e12 }))
  const app = await buildTestApp(t, importConfig(pluggy))
  const portfolioId = await portfolioOf(app, ANA)
  const done = await imported(app, ANA, portfolioId, 'item-ana')
  t.match(done, {
    status: 'done',
    counts: { investments: 2, assetsCreated: 1, skipped: 1 },
    skipped: [{ investmentId: 'inv-b', transactionId: null, reason: /^BAD_REQUEST: / }]
  })
  t.same([...(await holdingsOf(app, ANA, portfolioId)).keys()], ['inv-a'], 'nothing of it written')
})

t.test('asked again while one runs: one queued after it; for another portfolio, the queued one replaced', async t => {
  const pluggy = await startFakePluggy(t)
  twoEquities(pluggy)
  let release = (): void => {}
  pluggy.once('/investments/inv-b/transactions', async (_request, res) => {
    await new Promise<void>(resolve => { release = resolve })
    sendJson(res, 500, { code: 500, message: 'down' })
  })
  const app = await buildTestApp(t, importConfig(pluggy))
  const [first, second] = [await portfolioOf(app, ANA), await portfolioOf(app, ANA)]
  const running = (await askImport(app, ANA, first, 'item-ana')).json() as InvestmentImport
  await until('the first import mid-way', async () =>
    (await app.store.imports.get(running.id))?.counts.assetsCreated === 1)
  const again = (await askImport(app, ANA, first, 'item-ana')).json() as InvestmentImport
  t.not(again.id, running.id, 'a new import, queued after the one running')
  t.equal(((await askImport(app, ANA, first, 'item-ana')).json() as InvestmentImport).id, again.id,
    'asked once more: the queued one is answered')
  const elsewhere = (await askImport(app, ANA, second, 'item-ana')).json() as InvestmentImport
  t.match(await app.store.imports.get(again.id), { status: 'failed', error: /^Substituída/ },
    'the item now goes to the other portfolio: its queued import there replaces this one')
  release()
  // The running attempt fails with a newer import queued: it ends failed, no retry, and the newer one runs.
  t.match(await ended(app, ANA, first, running.id), { status: 'failed', error: /^UPSTREAM_UNAVAILABLE: / })
  t.match(await ended(app, ANA, second, elsewhere.id), { status: 'done', counts: { assetsCreated: 2 } })
  t.equal(await app.store.jobs.count('import'), 0)
})
