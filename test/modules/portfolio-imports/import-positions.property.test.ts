import t from 'tap'
import fc from 'fast-check'
import { buildTestApp } from '../../helper.js'
import { exactPosition, averagePriceOf, type ReferenceTrade } from '../../fixtures/average-cost.js'
import { startFakePluggy } from '../../fixtures/fake-pluggy.js'
import { pluggyInvestment, pluggyInvestmentTransaction } from '../../fixtures/pluggy-shapes.js'
import { ANA } from '../../fixtures/owners.js'
import { Rational } from '../../fixtures/rational.js'
import { holdingsOf, imported, importConfig, portfolioOf } from './import-helpers.js'

/*
 * Random histories of one investment at the fake Pluggy — buys and sales on distinct days (sales of more than the
 * history holds too), a tax entry here and there, an institution's quantity above, at or below what the history
 * explains, withdrawn or not, with or without what was put in and a purchase date — imported through the API: the
 * asset's transactions and position are what a recomputation written here makes of the fake's own figures, in exact
 * fractions (test/fixtures/rational.ts, test/fixtures/average-cost.ts), with no code of src/.
 */

const FIRST_DAY = Date.UTC(2025, 0, 2)
const DAY = 86_400_000
const dayOf = (offset: number): string => new Date(FIRST_DAY + offset * DAY).toISOString().slice(0, 10)
const cents = (min: number, max: number) => fc.integer({ min: min * 100, max: max * 100 }).map(value => value / 100)

const history = fc.record({
  trades: fc.uniqueArray(fc.record({
    day: fc.integer({ min: 0, max: 360 }),
    sale: fc.boolean(),
    quantity: cents(0.01, 500),
    price: cents(0.01, 200),
    brokerage: fc.integer({ min: 0, max: 2000 }),
    custody: fc.option(fc.integer({ min: 0, max: 500 }), { nil: null })
  }), { maxLength: 10, selector: trade => trade.day }),
  taxOn: fc.option(fc.integer({ min: 0, max: 360 }), { nil: undefined }),
  /** The institution's quantity: what the history explains plus this (negative: less than it explains). */
  beyond: fc.oneof(fc.constant(0), cents(-300, 300)),
  withdrawn: fc.boolean(),
  amountOriginal: fc.option(cents(1, 50_000), { nil: undefined }),
  /** Days before the first trade the purchase was (negative: after it, so not the opening's date). */
  purchasedBefore: fc.option(fc.integer({ min: -30, max: 900 }), { nil: undefined })
})
type History = typeof history extends fc.Arbitrary<infer T> ? T : never

interface Expected { quantity: number, averagePrice: number, transactions: Array<[string, string, number, number]> }

/** The plain recomputation: the institution's trades, and the least opening buy (or closing sale) they need. */
function expectedOf (h: History, today: string): Expected {
  const trades: ReferenceTrade[] = [...h.trades].sort((a, b) => a.day - b.day).map(trade => ({
    type: trade.sale ? 'SELL' : 'BUY',
    date: dayOf(trade.day),
    quantity: trade.quantity,
    price: trade.price,
    fee: Rational.of(trade.brokerage).plus(trade.custody ?? 0).div(100).rounded(2)
  }))
  // The least opening with which no sale goes short: the deepest the running quantity falls below zero.
  let running = Rational.of(0)
  let least = Rational.of(0)
  for (const trade of trades) {
    running = trade.type === 'BUY' ? running.plus(trade.quantity) : running.minus(trade.quantity)
    if (running.compare(least.times(-1)) < 0) least = running.times(-1)
  }
  const institution = institutionQuantity(h)
  const held = h.withdrawn ? Rational.of(0) : institution
  const first = trades[0]?.date
  const purchase = purchaseDay(h)
  const openedOn = first === undefined
    ? purchase ?? today
    : purchase !== undefined && purchase < first
      ? purchase
      : new Date(Date.parse(first) - DAY).toISOString().slice(0, 10)
  const openingPrice = h.amountOriginal !== undefined && institution.compare(0) > 0
    ? Rational.of(h.amountOriginal).div(institution).rounded(8)
    : trades[0]?.price ?? 0
  const opening = held.minus(running).compare(least) >= 0 ? held.minus(running) : least
  const all: ReferenceTrade[] = [
    ...(opening.compare(0) > 0
      ? [{ type: 'BUY' as const, date: openedOn, quantity: opening.rounded(8), price: openingPrice, fee: 0 }]
      : []),
    ...trades
  ]
  const before = exactPosition(all)
  if (before === undefined) throw new Error('the oracle\'s opening leaves a sale short')
  const closing = before.quantity.minus(held)
  if (closing.compare(0) > 0) {
    const last = trades.at(-1)?.date ?? openedOn
    const asOf = '2026-01-15'
    const price = averagePriceOf(before).rounded(8)
    all.push({ type: 'SELL', date: asOf > last ? asOf : last, quantity: closing.rounded(8), price, fee: 0 })
  }
  const after = exactPosition(all)
  if (after === undefined) throw new Error('the oracle\'s closing sale is short')
  return {
    quantity: after.quantity.rounded(8),
    averagePrice: averagePriceOf(after).rounded(8),
    transactions: all.map(trade => [trade.type, trade.date, trade.quantity, trade.price])
  }
}

/** What the history explains, plus `beyond`, never below nothing. */
function institutionQuantity (h: History): Rational {
  let net = Rational.of(0)
  for (const trade of h.trades) net = trade.sale ? net.minus(trade.quantity) : net.plus(trade.quantity)
  const quantity = net.plus(h.beyond)
  return quantity.compare(0) < 0 ? Rational.of(0) : quantity
}

function purchaseDay (h: History): string | undefined {
  if (h.purchasedBefore === undefined) return undefined
  const first = Math.min(...h.trades.map(trade => trade.day), 0)
  return dayOf(first - h.purchasedBefore)
}

t.test('positions after an import are a recomputation from the institution\'s figures', async t => {
  const pluggy = await startFakePluggy(t)
  // Forty imports of one user's spend more than a minute's share of the aggregator's budget and of the requests.
  const app = await buildTestApp(t, importConfig(pluggy, {
    AGGREGATOR_REQUESTS_PER_MINUTE: '100000',
    AGGREGATOR_REQUESTS_PER_PRINCIPAL_PER_MINUTE: '100000',
    RATE_LIMIT_MAX: '100000'
  }))
  let run = 0
  await fc.assert(fc.asyncProperty(history, async h => {
    run++
    const itemId = `item-${run}`
    const investmentId = `inv-${run}`
    pluggy.items.set(itemId, ANA)
    const quantity = institutionQuantity(h).rounded(2)
    pluggy.investments.set(investmentId, pluggyInvestment(investmentId, itemId, {
      code: 'PETR4',
      quantity,
      status: h.withdrawn ? 'TOTAL_WITHDRAWAL' : 'ACTIVE',
      amountOriginal: h.amountOriginal ?? null,
      purchaseDate: purchaseDay(h) === undefined ? null : `${purchaseDay(h) ?? ''}T00:00:00.000Z`
    }))
    pluggy.investmentTransactions.set(investmentId, [
      ...h.trades.map((trade, index) => pluggyInvestmentTransaction(`${investmentId}-${index}`, investmentId, {
        type: trade.sale ? 'SELL' : 'BUY',
        quantity: trade.quantity,
        value: trade.price,
        amount: null,
        date: `${dayOf(trade.day)}T12:00:00.000Z`,
        tradeDate: null,
        expenses: {
          brokerageFee: trade.brokerage / 100, custodyFee: trade.custody === null ? null : trade.custody / 100
        }
      })),
      ...(h.taxOn === undefined
        ? []
        : [pluggyInvestmentTransaction(`${investmentId}-tax`, investmentId, {
            type: 'TAX', date: `${dayOf(h.taxOn)}T00:00:00.000Z`
          })])
    ])
    const before = new Date().toISOString().slice(0, 10)
    const portfolioId = await portfolioOf(app, ANA)
    const done = await imported(app, ANA, portfolioId, itemId)
    const today = new Date().toISOString().slice(0, 10)
    t.equal(done.status, 'done')
    t.equal(done.counts.skipped, h.taxOn === undefined ? 0 : 1)
    const held = (await holdingsOf(app, ANA, portfolioId)).get(investmentId)
    const answered = {
      quantity: held?.asset.quantity,
      averagePrice: held?.asset.price,
      transactions: held?.transactions.map(({ type, date, quantity, price }) => [type, date, quantity, price])
    }
    const expected = [expectedOf(h, before), expectedOf(h, today)]
    if (!expected.some(one => JSON.stringify(one) === JSON.stringify(answered))) {
      t.same(answered, expected[1], `run ${run}: ${JSON.stringify(h)}`)
      return false
    }
    return true
  }), { numRuns: 40 })
})
