import t from 'tap'
import { ValuationStream } from '../../src/domain/live-valuation-stream.js'
import { sameValuation, valuate } from '../../src/domain/portfolio-valuation.js'
import type { PortfolioValuation } from '../../src/schemas/valuation.js'
import type { Asset } from '../../src/schemas/asset.js'
import { RECORDED_BY_HAND } from '../fixtures/portfolios.js'

function valuation (marketValue: number, updatedAt = new Date().toISOString()): PortfolioValuation {
  return {
    portfolioId: 'p1',
    currency: 'BRL',
    bookValue: 100,
    marketValue,
    result: marketValue - 100,
    resultPercent: marketValue - 100,
    quotedAt: null,
    quoteSource: null,
    unquotedSymbols: [],
    updatedAt
  }
}

t.test('the first valuation at once; a value equal but for updatedAt is never sent', async t => {
  let ended = 0
  const stream = new ValuationStream(0, valuation(100), () => { ended++ })
  t.match((await stream.next()).value, { kind: 'valuation', valuation: { marketValue: 100 } })
  stream.offer(valuation(100, '2030-01-01T00:00:00.000Z'))
  stream.offer(valuation(120))
  t.match((await stream.next()).value, { kind: 'valuation', valuation: { marketValue: 120 } }, 'only the change')
  await stream.return()
  await stream.return()
  t.equal(ended, 1, 'forgotten once')
  t.same(await stream.next(), { done: true, value: undefined })
})

t.test('within the interval the latest value wins; a reader that is slow gets the newest', async t => {
  const stream = new ValuationStream(50, valuation(100), () => {})
  await stream.next()
  stream.offer(valuation(110))
  stream.offer(valuation(120))
  t.match((await stream.next()).value, { valuation: { marketValue: 120 } }, 'one message, the latest')
  // Offered back to what was sent last: nothing to send.
  stream.offer(valuation(130))
  stream.offer(valuation(120))
  const fresh = new ValuationStream(0, valuation(1), () => {})
  fresh.offer(valuation(2))
  fresh.offer(valuation(3))
  t.match((await fresh.next()).value, { valuation: { marketValue: 3 } }, 'unread values are replaced, never queued')
  stream.deleted('p1')
  t.same((await stream.next()).value, { kind: 'deleted', portfolioId: 'p1' }, 'deleted at once, whatever the interval')
  t.same(await stream.next(), { done: true, value: undefined }, 'then the end')
  stream.offer(valuation(500))
  stream.deleted('p1')
  t.same(await stream.next(), { done: true, value: undefined })
})

t.test('end() finishes a waiting reader (the instance shuts down)', async t => {
  let ended = false
  const stream = new ValuationStream(0, valuation(100), () => { ended = true })
  await stream.next()
  const waiting = stream.next()
  stream.end()
  t.same(await waiting, { done: true, value: undefined })
  t.ok(ended)
  t.equal(stream[Symbol.asyncIterator](), stream)
})

t.test('valuate: exact cents, half away from zero; oldest quote time; unquoted symbols sorted', async t => {
  const asset = (symbol: string, quantity: number, price: number, totalValue: number): Asset => ({
    id: symbol,
    name: symbol,
    symbol,
    type: 'STOCK',
    quantity,
    price,
    totalValue,
    portfolioId: 'p1',
    eventsUnapplied: false,
    eventsAsOf: null,
    createdAt: '',
    updatedAt: '',
    ...RECORDED_BY_HAND
  })
  const quotes = new Map([
    ['A', { symbol: 'A', price: 1.005, currency: 'BRL', lastUpdate: '2026-01-02T00:00:00.000Z' }],
    ['B', { symbol: 'B', price: 0.1, currency: 'BRL', lastUpdate: '2026-01-01T00:00:00.000Z' }]
  ])
  const value = valuate('p1', [asset('A', 1, 1, 1), asset('B', 3, 0.2, 0.6), asset('Z', 1, 5, 5), asset('C', 1, 5, 5)],
    { get: symbol => quotes.get(symbol), source: 'brapi.dev' }, new Date('2026-02-01T00:00:00.000Z'))
  t.same(value, {
    portfolioId: 'p1',
    currency: 'BRL',
    bookValue: 11.6,
    marketValue: 11.31,
    result: -0.29,
    resultPercent: -2.5,
    quotedAt: '2026-01-01T00:00:00.000Z',
    quoteSource: 'brapi.dev',
    unquotedSymbols: ['C', 'Z'],
    updatedAt: '2026-02-01T00:00:00.000Z'
  })
  t.notOk(sameValuation(undefined, value))
  t.notOk(sameValuation({ ...value, unquotedSymbols: ['C'] }, value))
})
