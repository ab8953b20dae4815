import t from 'tap'
import { entitlements, eventAnswer } from '../../src/domain/asset-events.js'
import { digestOf, eventBookOf, type EventBook } from '../../src/domain/corporate-events.js'
import { EventBooks } from '../../src/domain/event-books.js'
import { positionWithEvents } from '../../src/domain/holdings.js'
import type { QuoteProvider } from '../../src/quotes/provider.js'
import { replay } from '../../src/domain/replay.js'
import { averagePrice, type Trade } from '../../src/schemas/average-cost.js'
import {
  labelOf, type ProviderCashEvent, type ProviderStockEvent
} from '../../src/schemas/corporate-events.js'
import { capturedLog } from '../fixtures/captured-log.js'

/*
 * docs/api.md#corporate-events, rule by rule, on the domain's pure functions: the labels, the ratio and its
 * fallbacks, what is left unapplied, the entitlement at the data com, the cash of each kind.
 */

const TODAY = '2026-11-20'

const buy = (date: string, quantity: number, price = 10): Trade => ({ type: 'BUY', date, quantity, price, fee: 0 })
const sell = (date: string, quantity: number, price = 10): Trade => ({ type: 'SELL', date, quantity, price, fee: 0 })

function stock (label: string, fields: Partial<ProviderStockEvent> = {}): ProviderStockEvent {
  return {
    label: labelOf(label),
    factor: null,
    completeFactor: null,
    lastDatePrior: '2026-03-13',
    exDate: '2026-03-16',
    approvedOn: null,
    isinCode: null,
    assetIssued: null,
    remarks: null,
    ...fields
  }
}

function cash (label: string, fields: Partial<ProviderCashEvent> = {}): ProviderCashEvent {
  return {
    label: labelOf(label),
    rate: null,
    rawRate: 1,
    lastDatePrior: '2026-04-15',
    exDate: '2026-04-16',
    paymentDate: '2026-05-20',
    approvedOn: null,
    relatedTo: null,
    isinCode: null,
    assetIssued: null,
    remarks: null,
    ...fields
  }
}

function bookOf (stockEvents: ProviderStockEvent[], cashEvents: ProviderCashEvent[] = []): EventBook {
  return eventBookOf({ events: { stock: stockEvents, cash: cashEvents }, asOf: `${TODAY}T09:00:00.000Z` })
}

/** The ratio the service applies to one stock event, or why it does not. */
function ratioOf (event: ProviderStockEvent): number | string {
  const book = bookOf([event])
  const [applied] = book.stock
  if (applied === undefined) return (book.unapplied[0] as { why: string }).why
  return applied.ratio.after.div(applied.ratio.before).toNumber()
}

t.test('labels are matched without regard to case or accents', async t => {
  t.equal(labelOf(' Bonificação '), 'BONIFICACAO')
  t.equal(labelOf('desdobramento'), 'DESDOBRAMENTO')
  const book = bookOf([stock('Desdobramento', { factor: 2 }), stock('grupamento', { factor: 0.5 }),
    stock('BONIFICAÇÃO', { factor: 0.1 })], [cash('Dividendo'), cash('jcp'), cash('Rendimento')])
  t.same(book.stock.map(event => event.type).sort(), ['BONUS', 'REVERSE_SPLIT', 'SPLIT'])
  t.same(book.cash.map(event => event.type), ['DIVIDEND', 'JCP', 'INCOME'])
  t.same(book.unapplied, [])
})

t.test('the ratio: completeFactor "a para b", else factor as its label reads it', async t => {
  t.equal(ratioOf(stock('DESDOBRAMENTO', { completeFactor: '2 para 1', factor: 7 })), 2, 'completeFactor first')
  t.equal(ratioOf(stock('GRUPAMENTO', { completeFactor: '1 para 10' })), 0.1)
  t.equal(ratioOf(stock('BONIFICACAO', { completeFactor: '11 para 10' })), 1.1)
  t.equal(ratioOf(stock('DESDOBRAMENTO', { completeFactor: '2,5 para 1' })), 2.5, 'a decimal comma')
  t.equal(ratioOf(stock('DESDOBRAMENTO', { factor: 2 })), 2, 'a split\'s factor is its ratio')
  t.equal(ratioOf(stock('GRUPAMENTO', { factor: 0.1 })), 0.1, 'a grouping\'s factor is its ratio')
  t.equal(ratioOf(stock('BONIFICACAO', { factor: 0.1 })), 1.1, 'a bonus issue\'s factor is new shares per share')
  t.equal(ratioOf(stock('BONIFICACAO', { factor: 10 })), 1.1, 'above 1, a percent')
  t.equal(ratioOf(stock('DESDOBRAMENTO', { completeFactor: 'dois para um', factor: 3 })), 3, 'unreadable: factor')
})

t.test('an implausible or unknown event is left unapplied, each with why', async t => {
  t.equal(ratioOf(stock('DESDOBRAMENTO', { factor: 1001 })), 'a ratio outside 1/1000 to 1000')
  t.equal(ratioOf(stock('GRUPAMENTO', { completeFactor: '1 para 1001' })), 'a ratio outside 1/1000 to 1000')
  t.equal(ratioOf(stock('DESDOBRAMENTO', { factor: 1000 })), 1000, '1000 itself is applied')
  t.equal(ratioOf(stock('DESDOBRAMENTO', { factor: 0.5 })), 'a ratio against its label')
  t.equal(ratioOf(stock('GRUPAMENTO', { factor: 2 })), 'a ratio against its label')
  t.equal(ratioOf(stock('SUBSCRICAO', { factor: 2 })), 'an unknown label')
  t.equal(ratioOf(stock('DESDOBRAMENTO')), 'no ratio')
  t.equal(ratioOf(stock('DESDOBRAMENTO', { factor: 2, lastDatePrior: null, exDate: null })), 'no data com')
  const book = bookOf([], [cash('AMORTIZACAO'), cash('JCP', { rate: null, rawRate: null })])
  t.same(book.unapplied.map(event => event.why), ['an unknown label', 'no rate'])
  t.not(digestOf(book, TODAY), '', 'what is unapplied is part of what a position was computed with')
  t.equal(digestOf(bookOf([]), TODAY), '', 'no events: the digest of every position before them')
})

t.test('the effect: the ex-date, else the day after the data com', async t => {
  const [withEx, without] = bookOf([stock('DESDOBRAMENTO', { factor: 2 }),
    stock('DESDOBRAMENTO', { factor: 2, lastDatePrior: '2026-06-12', exDate: null })]).stock
  t.same([withEx?.dataCom, withEx?.effective], ['2026-03-13', '2026-03-16'])
  t.same([without?.dataCom, without?.effective], ['2026-06-12', '2026-06-13'])
})

t.test('a buy on the data com is entitled, one the day after is not', async t => {
  const book = bookOf([stock('DESDOBRAMENTO', { factor: 2 })], [cash('DIVIDENDO', { rawRate: 0.5 })])
  const onDataCom = replay([buy('2026-01-10', 100), buy('2026-03-13', 50)], { book, today: TODAY })
  t.equal(onDataCom.after.quantity.toNumber(), 300, '150 held at the end of the data com, doubled')
  const dayAfter = replay([buy('2026-01-10', 100), buy('2026-03-14', 50)], { book, today: TODAY })
  t.equal(dayAfter.after.quantity.toNumber(), 250, '100 doubled, and 50 bought after it')
  const onCashDataCom = entitlements([buy('2026-04-15', 10)], { book, today: TODAY })
  t.same(onCashDataCom.map(({ held, cash }) => [held.toNumber(), cash?.gross.toNumber()]), [[10, 5]])
  t.same(entitlements([buy('2026-04-16', 10)], { book, today: TODAY }), [], 'bought on the ex-date: nothing')
})

t.test('the cost is unchanged: the average price divided by the ratio, the realized result kept', async t => {
  const book = bookOf([stock('DESDOBRAMENTO', { completeFactor: '2 para 1' })])
  const trades = [buy('2026-01-10', 100, 30), sell('2026-02-10', 20, 35), sell('2026-04-10', 40, 20)]
  const { after } = replay(trades, { book, today: TODAY })
  t.equal(after.quantity.toNumber(), 120, '80 doubled to 160, 40 sold')
  t.equal(averagePrice(after).toNumber(), 15)
  t.equal(after.cost.toNumber(), 1800)
  t.equal(after.realized.toNumber(), 20 * 5 + 40 * 5, 'each sale over the average price of its day')
  const before = replay(trades.slice(0, 2), { book, today: '2026-03-13' })
  t.equal(averagePrice(before.after).toNumber(), 30, 'before its effect, the old basis')
})

t.test('a grouping that leaves a fraction keeps it exactly', async t => {
  const book = bookOf([stock('GRUPAMENTO', { completeFactor: '1 para 10' })])
  const { after } = replay([buy('2026-01-10', 15, 2), buy('2026-02-10', 0.5, 3)], { book, today: TODAY })
  t.equal(after.quantity.toNumber(), 1.55, '15.5 ÷ 10')
  t.equal(after.cost.toNumber(), 31.5)
  t.equal(averagePrice(after).toNumber(), 20.32258065)
  // The auctioned fraction, recorded by the investor as a sale, leaves the whole share.
  const auctioned = replay([buy('2026-01-10', 15, 2), sell('2026-04-01', 0.5, 21)], { book, today: TODAY })
  t.equal(auctioned.after.quantity.toNumber(), 1)
  t.equal(auctioned.after.realized.toNumber(), 0.5 * (21 - 20), 'over the new average price, 30 ÷ 1.5 = 20')
})

t.test('a sale between the data com and the ex-date is on the old basis', async t => {
  const book = bookOf([stock('DESDOBRAMENTO', {
    completeFactor: '2 para 1', lastDatePrior: '2026-03-13', exDate: '2026-03-18'
  })])
  const trades = [buy('2026-01-10', 100, 30), sell('2026-03-16', 40, 32)]
  const { after } = replay(trades, { book, today: TODAY })
  t.equal(after.quantity.toNumber(), 160, '100 entitled at the data com: 60 kept and the 100 the split adds')
  t.equal(after.realized.toNumber(), 40 * 2, 'sold at the old average price')
  t.equal(averagePrice(after).toNumber(), 11.25, 'the cost of the 60 kept, 1 800, over 160')
  const [event] = entitlements(trades, { book, today: TODAY }).map(eventAnswer)
  t.match(event, { type: 'SPLIT', quantityBefore: 100, quantityAfter: 200, ratio: 2 })
})

t.test('a sale counts the quantity the events left at its date: 422 beyond a grouping\'s', async t => {
  const book = bookOf([stock('GRUPAMENTO', { completeFactor: '1 para 10' }), stock('BONIFICACAO', {
    factor: 0.5, lastDatePrior: '2026-06-12', exDate: '2026-06-15'
  })])
  const events = { book, today: TODAY }
  const recorded = [buy('2026-01-10', 100)]
  const bonus = positionWithEvents(recorded, [...recorded, sell('2026-07-01', 15)], events)
  t.equal(bonus.position.quantity.toNumber(), 0, 'the 10 the grouping left, and 5 of the bonus issue, sold')
  t.throws(() => positionWithEvents(recorded, [...recorded, sell('2026-04-01', 11)], events),
    { code: 'INSUFFICIENT_QUANTITY' }, 'more than the grouping left')
  const early = positionWithEvents(recorded, [...recorded, sell('2026-03-01', 100)], events)
  t.equal(early.position.quantity.toNumber(), 0, 'before the grouping, all of it')
  t.equal(early.events.eventsUnapplied, false)
})

t.test('sales recorded before a grouping was known leave its stock events unapplied, and say so', async t => {
  const book = bookOf([stock('GRUPAMENTO', { completeFactor: '1 para 10' })])
  const recorded = [buy('2026-01-10', 100), sell('2026-04-01', 50)]
  const held = positionWithEvents(recorded, recorded, { book, today: TODAY })
  t.equal(held.position.quantity.toNumber(), 50, 'the trades as recorded')
  t.equal(held.events.eventsUnapplied, true)
})

t.test('sales recorded before a grouping was known: the cash events are counted on the trades as recorded', async t => {
  const book = bookOf([stock('GRUPAMENTO', { completeFactor: '1 para 10' })], [cash('DIVIDENDO', { rawRate: 1 })])
  const answers = entitlements([buy('2026-01-10', 100), sell('2026-04-01', 50)], { book, today: TODAY })
    .map(eventAnswer)
  t.same(answers.map(({ type, quantityBefore, gross }) => ({ type, quantityBefore, gross })),
    [{ type: 'DIVIDEND', quantityBefore: 50, gross: 50 }], 'no grouping; 50 held at the data com, not 10 − 50')
})

t.test('cash: JCP withholds 15 %, dividends and rendimentos nothing; paid once its payment date has come', async t => {
  const book = bookOf([], [
    cash('JCP', { rawRate: 0.3125, lastDatePrior: '2026-09-30', exDate: '2026-10-01', paymentDate: '2026-12-30' }),
    cash('DIVIDENDO', { rawRate: 0.12345678, paymentDate: TODAY }),
    cash('RENDIMENTO', { rawRate: 1.1, lastDatePrior: '2026-06-30', exDate: null, paymentDate: null })
  ])
  const answers = entitlements([buy('2026-01-10', 220)], { book, today: TODAY }).map(eventAnswer)
  t.same(answers.map(({ type, gross, withheld, net, status, paymentDate, exDate }) =>
    ({ type, gross, withheld, net, status, paymentDate, exDate })), [
    {
      type: 'DIVIDEND', gross: 27.16, withheld: 0, net: 27.16, status: 'paid', paymentDate: TODAY, exDate: '2026-04-16'
    },
    { type: 'INCOME', gross: 242, withheld: 0, net: 242, status: 'announced', paymentDate: null, exDate: '2026-07-01' },
    {
      type: 'JCP',
      gross: 68.75,
      withheld: 10.31,
      net: 58.44,
      status: 'announced',
      paymentDate: '2026-12-30',
      exDate: '2026-10-01'
    }
  ], '220 × 0.12345678 = 27.1604916; 220 × 1.1; 68.75 − 10.3125 rounded once')
})

t.test('cash at brapi\'s rate is on its adjusted scale: the shares restated by the stock events after', async t => {
  const book = bookOf([stock('BONIFICACAO', { factor: 10, lastDatePrior: '2026-06-12', exDate: '2026-06-15' })], [
    cash('DIVIDENDO', { rate: 0.45454545, rawRate: null })
  ])
  const [dividend] = entitlements([buy('2026-01-10', 200)], { book, today: TODAY }).map(eventAnswer)
    .filter(event => event.type === 'DIVIDEND')
  t.match(dividend, { quantityBefore: 200, rate: 0.5, gross: 100, net: 100 }, '200 × 1.1 × 0.45454545 = 99.999999')
  const beforeBonus = entitlements([buy('2026-01-10', 200)], { book, today: '2026-06-14' })
  t.equal(beforeBonus[0]?.cash?.gross.toNumber(), 90.91, 'before the bonus issue took effect: 200 × 0.45454545')
  const raw = bookOf([stock('BONIFICACAO', { factor: 10, lastDatePrior: '2026-06-12', exDate: '2026-06-15' })],
    [cash('DIVIDENDO', { rate: 0.45454545, rawRate: 0.5 })])
  t.equal(entitlements([buy('2026-01-10', 200)], { book: raw, today: TODAY })
    .find(({ cash }) => cash !== undefined)?.cash?.gross.toNumber(), 100, 'rawRate, as paid: 200 × 0.5')
})

t.test('an event left unapplied is named in one warning line per instance, whoever reads it', async t => {
  const { log, lines } = capturedLog()
  const read = {
    events: { stock: [stock('DESDOBRAMENTO', { factor: 5000 })], cash: [cash('AMORTIZACAO')] },
    asOf: `${TODAY}T09:00:00.000Z`
  }
  const quotes = {
    source: 'test',
    quote: async () => undefined,
    history: async () => undefined,
    // A new read each time, as each day's is.
    events: async (symbols: readonly string[]) => new Map(symbols.map(symbol => [symbol, { ...read }])),
    eventsKnown: () => read
  }
  const books = new EventBooks(quotes as unknown as QuoteProvider, log)
  for (let reading = 0; reading < 3; reading++) await books.read(['ODDS3'], log)
  t.same(books.known('ODDS3')?.unapplied.length, 2)
  const warned = lines.filter(line => /not applied/.test(String(line.msg)))
  t.same(warned.map(line => [line.symbol, line.event, line.why]), [
    ['ODDS3', 'DESDOBRAMENTO', 'a ratio outside 1/1000 to 1000'], ['ODDS3', 'AMORTIZACAO', 'an unknown label']
  ], 'once each, naming the symbol and the event')
  t.match(String(warned[0]?.msg), /ODDS3.*DESDOBRAMENTO of 2026-03-13/)
})
