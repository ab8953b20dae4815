import t from 'tap'
import fc from 'fast-check'
import { entitlements } from '../../src/domain/asset-events.js'
import { eventBookOf } from '../../src/domain/corporate-events.js'
import { replay } from '../../src/domain/replay.js'
import { addDays } from '../../src/schemas/calendar.js'
import { averagePrice, type Trade } from '../../src/schemas/average-cost.js'
import type { ProviderCashEvent, ProviderStockEvent } from '../../src/schemas/corporate-events.js'
import { averagePriceOf } from '../fixtures/average-cost.js'
import {
  referenceWithEvents, type ReferenceCashEvent, type ReferenceStockEvent
} from '../fixtures/corporate-events.js'

/*
 * Over random trades and corporate events as brapi gives them, an asset's quantity, cost, average price, realized
 * result and income are what a straightforward day-by-day recomputation in exact fractions makes of them
 * (test/fixtures/corporate-events.ts, no code of src/), and a sale or grouping of more than is held is found at
 * the same point by both.
 */

const TODAY = '2026-11-20'
const FIRST = '2025-01-01'
const dayOf = (offset: number): string => addDays(FIRST, offset)
const DAYS = 700

const eightPlaces = (min: number, max: number): fc.Arbitrary<number> =>
  fc.integer({ min: Math.round(min * 1e8), max: Math.round(max * 1e8) }).map(units => units / 1e8)

/** Days from FIRST to TODAY: a trade is dated today at the latest, as the service accepts it (events may be later). */
const TRADE_DAYS = Math.round((Date.parse(TODAY) - Date.parse(FIRST)) / 86_400_000)

const trade = fc.record({
  type: fc.constantFrom('BUY' as const, 'BUY' as const, 'BUY' as const, 'SELL' as const),
  date: fc.integer({ min: 0, max: TRADE_DAYS }).map(dayOf),
  quantity: fc.oneof(fc.integer({ min: 1, max: 500 }), eightPlaces(0.00000001, 50)),
  price: eightPlaces(0.01, 200),
  fee: fc.integer({ min: 0, max: 500 }).map(cents => cents / 100)
})

/** A stock event: its shares `after` for `before`, written as completeFactor or as its label's factor. */
const stockEvent = fc.record({
  dataCom: fc.integer({ min: 0, max: DAYS }),
  gap: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
  after: fc.integer({ min: 1, max: 12 }),
  before: fc.integer({ min: 1, max: 12 }),
  written: fc.constantFrom('completeFactor', 'factor')
}).filter(event => event.after !== event.before)

const cashEvent = fc.record({
  label: fc.constantFrom('DIVIDENDO', 'JCP', 'RENDIMENTO'),
  dataCom: fc.integer({ min: 0, max: DAYS }),
  gap: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
  payment: fc.option(fc.integer({ min: 1, max: 90 }), { nil: undefined }),
  rate: eightPlaces(0.00000001, 3),
  raw: fc.boolean()
})

type GeneratedStock = typeof stockEvent extends fc.Arbitrary<infer S> ? S : never
type GeneratedCash = typeof cashEvent extends fc.Arbitrary<infer C> ? C : never

/** As brapi writes it: a split (or a bonus issue, when it raises the count and its factor says so) or a grouping. */
function providerStock (event: GeneratedStock): ProviderStockEvent {
  const lastDatePrior = dayOf(event.dataCom)
  const exDate = event.gap === undefined ? null : addDays(lastDatePrior, event.gap)
  const common = { lastDatePrior, exDate, approvedOn: null, isinCode: null, assetIssued: null, remarks: null }
  const label = event.after > event.before ? 'DESDOBRAMENTO' : 'GRUPAMENTO'
  if (event.written === 'completeFactor') {
    return { ...common, label, factor: null, completeFactor: `${event.after} para ${event.before}` }
  }
  // A bonus issue's factor is the new shares per share: after ÷ before − 1, exact when before divides it.
  if (label === 'DESDOBRAMENTO' && event.before === 1) {
    return { ...common, label: 'BONIFICACAO', factor: event.after - 1, completeFactor: null }
  }
  return { ...common, label, factor: event.after / event.before, completeFactor: null }
}

/** The ratio the provider's figures say, as the reference reads them. */
function referenceStock (event: GeneratedStock, provider: ProviderStockEvent): ReferenceStockEvent {
  const dataCom = provider.lastDatePrior as string
  const effective = provider.exDate ?? addDays(dataCom, 1)
  if (provider.completeFactor !== null) return { dataCom, effective, after: event.after, before: event.before }
  const factor = provider.factor as number
  if (provider.label === 'BONIFICACAO') {
    // New shares per share; above 1, a percent.
    return { dataCom, effective, after: factor > 1 ? 1 + factor / 100 : 1 + factor, before: 1 }
  }
  return { dataCom, effective, after: factor, before: 1 }
}

function providerCash (event: GeneratedCash): ProviderCashEvent {
  const lastDatePrior = dayOf(event.dataCom)
  return {
    label: event.label,
    rate: event.raw ? null : event.rate,
    rawRate: event.raw ? event.rate : null,
    lastDatePrior,
    exDate: event.gap === undefined ? null : addDays(lastDatePrior, event.gap),
    paymentDate: event.payment === undefined ? null : addDays(lastDatePrior, event.payment),
    approvedOn: null,
    relatedTo: null,
    isinCode: null,
    assetIssued: null,
    remarks: null
  }
}

function referenceCash (event: ProviderCashEvent): ReferenceCashEvent {
  return {
    dataCom: event.lastDatePrior as string,
    paymentDate: event.paymentDate,
    jcp: event.label === 'JCP',
    ...(event.rawRate === null ? { rate: event.rate as number } : { rawRate: event.rawRate })
  }
}

const counts: Record<string, number> = {}
const count = (what: string): void => { counts[what] = (counts[what] ?? 0) + 1 }

t.test('quantity, cost, average price, realized result and income are the day-by-day recomputation\'s', async t => {
  fc.assert(fc.property(
    fc.array(trade, { minLength: 1, maxLength: 12 }),
    // Stock events on distinct effect days: the order of two of one day is the provider's, not a rule.
    fc.uniqueArray(stockEvent, { maxLength: 3, selector: event => event.dataCom + (event.gap ?? 1) }),
    fc.array(cashEvent, { maxLength: 4 }),
    (trades: Trade[], stocks, cashes) => {
      const stock = stocks.map(providerStock)
      // By data com (of one, as given), as the answers list them.
      const cash = cashes.map(providerCash)
        .sort((a, b) => (a.lastDatePrior as string).localeCompare(b.lastDatePrior as string))
      const book = eventBookOf({ events: { stock, cash }, asOf: `${TODAY}T12:00:00.000Z` })
      if (book.unapplied.length > 0) return // a factor like 7 ÷ 3, outside what brapi writes: not this property's
      const sorted = [...trades].sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0))
      const expected = referenceWithEvents(sorted, stocks.map((event, index) =>
        referenceStock(event, stock[index] as ProviderStockEvent)), cash.map(referenceCash), TODAY)
      const events = { book, today: TODAY }
      const replayed = replay(trades, events)
      if (expected.position === undefined) {
        count('short')
        if (replayed.shortAt === undefined) throw new Error('the service found no sale of more than is held')
        return
      }
      if (replayed.shortAt !== undefined) throw new Error(`the service found a short position at ${replayed.shortAt}`)
      const { after } = replayed
      const exact = expected.position
      t.equal(after.quantity.toNumber(), exact.quantity.rounded(8), 'quantity')
      t.equal(Number(after.cost.toFixed(8)), exact.cost.rounded(8), 'cost')
      t.equal(averagePrice(after).toNumber(), averagePriceOf(exact).rounded(8), 'average price')
      t.equal(Number(after.realized.minus(after.fees).toFixed(2)), exact.realized.minus(exact.fees).rounded(2),
        'realized result')
      const paid = entitlements(trades, events).flatMap(({ cash }) => cash === undefined ? [] : [cash])
      const net = (status: string): number =>
        paid.reduce((sum, cash) => cash.status === status ? sum + Math.round(cash.net.toNumber() * 100) : sum, 0) / 100
      t.same({ paid: net('paid'), announced: net('announced') }, expected.income, 'income')
      t.same(paid.map(cash => [cash.gross.toNumber(), cash.withheld.toNumber(), cash.net.toNumber()]),
        expected.cash.flatMap(cash => cash === undefined ? [] : [[cash.gross, cash.withheld, cash.net]]),
        'each cash event')
      if (book.stock.length > 0) count('stock events')
      if (paid.length > 0) count('cash paid')
      if (after.quantity.toString().includes('.')) count('fractions')
    }
  ), { numRuns: 400 })
  t.comment(JSON.stringify(counts))
  t.ok((counts['stock events'] ?? 0) > 50 && (counts['cash paid'] ?? 0) > 50 && (counts.short ?? 0) > 10,
    'the generator reaches stock events, cash paid and short positions')
})
