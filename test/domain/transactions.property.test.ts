import t from 'tap'
import fc from 'fast-check'
import type { App } from '../../src/app.js'
import { apiKey, buildDataApp } from '../helper.js'
import {
  inOrder, referencePosition, referenceValue, type ReferenceTrade
} from '../fixtures/average-cost.js'

/*
 * Random sequences of what a client may do to a position — dated buys and sales (back-dated too),
 * removals, PATCHes of quantity and of price — through the REST API: after each step the asset's
 * quantity, cost, average price and realized result are what a plain recomputation from its
 * transactions makes of them (test/fixtures/average-cost.ts), and a step the recomputation
 * finds selling more than is held is refused with INSUFFICIENT_QUANTITY and changes nothing.
 */

const DAY = 86_400_000
const dateOf = (days: number): string => new Date(Date.now() - days * DAY).toISOString().slice(0, 10)

/** Decimals of at most 8 places, as the API accepts them (docs/api.md#money). */
const eightPlaces = (min: number, max: number): fc.Arbitrary<number> =>
  fc.integer({ min: min * 1e8, max: max * 1e8 }).map(units => units / 1e8)
const quantity = eightPlaces(0.00000001, 5000)
const price = eightPlaces(0, 2000)
const fee = fc.integer({ min: 0, max: 2000 }).map(cents => cents / 100)

const step = fc.oneof(
  fc.record({ kind: fc.constant('buy' as const), days: fc.integer({ min: 0, max: 1500 }), quantity, price, fee }),
  // A sale of a share of what is held now (in millionths): at its date it may be more than was held then.
  fc.record({
    kind: fc.constant('sell' as const),
    days: fc.integer({ min: 0, max: 1500 }),
    share: fc.oneof(fc.constant(1_000_000), fc.integer({ min: 1, max: 1_200_000 })),
    price,
    fee
  }),
  // A buy or a sale dated as a transaction already recorded: of one date, the order recorded decides.
  fc.record({
    kind: fc.constant('same date' as const),
    index: fc.nat(),
    sale: fc.boolean(),
    quantity,
    share: fc.integer({ min: 1, max: 1_200_000 }),
    price,
    fee
  }),
  fc.record({ kind: fc.constant('remove' as const), index: fc.nat() }),
  fc.record({ kind: fc.constant('quantity' as const), quantity, price: fc.option(price, { nil: undefined }) }),
  fc.record({ kind: fc.constant('price' as const), price })
)
type Step = typeof step extends fc.Arbitrary<infer T> ? T : never

interface Recorded extends ReferenceTrade { id: string }

/** What a step came to: a write accepted, one refused with INSUFFICIENT_QUANTITY, or nothing sent. */
type Outcome = 'accepted' | 'refused' | 'nothing'

/** A BUY and a SELL of one date among `transactions`: their order recorded decides the position. */
function sameDateBuyAndSale (transactions: readonly Recorded[]): boolean {
  return transactions.some(sale => sale.type === 'SELL' &&
    transactions.some(buy => buy.type === 'BUY' && buy.date === sale.date))
}

/** The client's side: what it sent and what it expects, checked against what the service answers. */
class Position {
  /** In the order recorded. */
  transactions: Recorded[] = []
  /** The asset's price: the average price after a transaction, what a PATCH gives it after a PATCH. */
  price = 0

  constructor (private readonly app: App, readonly assetId: string) {}

  async send (
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object
  ): Promise<{ status: number, body: any }> {
    const res = await this.app.inject({ method, url, headers: apiKey(), ...(payload ? { payload } : {}) })
    return { status: res.statusCode, body: res.json() }
  }

  get url (): string {
    return `/portfolio-assets/${this.assetId}`
  }

  /** Sends `action`; what it came to, once the asset, its transactions and its dashboard are checked. */
  async apply (action: Step): Promise<Outcome> {
    let outcome: Outcome = 'accepted'
    if (action.kind === 'buy' || action.kind === 'sell' || action.kind === 'same date') {
      const held = referencePosition(inOrder(this.transactions))?.quantity ?? 0
      const sale = action.kind === 'sell' || (action.kind === 'same date' && action.sale)
      const amount = action.kind === 'buy' || !sale
        ? action.quantity
        : Math.floor(held * action.share / 1_000_000 * 1e8) / 1e8
      const date = action.kind === 'same date'
        ? this.transactions[action.index % this.transactions.length]?.date
        : dateOf(action.days)
      if (amount <= 0 || date === undefined) return 'nothing'
      const type = sale ? 'SELL' as const : 'BUY' as const
      const sent = { type, date, quantity: amount, price: action.price, fee: action.fee }
      const res = await this.send('POST', `${this.url}/transactions`, sent)
      outcome = await this.expect(res, [...this.transactions, { ...sent, id: '' }])
    } else if (action.kind === 'remove') {
      const removed = this.transactions[action.index % Math.max(1, this.transactions.length)]
      if (removed === undefined) return 'nothing'
      const res = await this.send('DELETE', `${this.url}/transactions/${removed.id}`)
      outcome = await this.expect(res, this.transactions.filter(transaction => transaction !== removed))
    } else {
      const body = action.kind === 'price'
        ? { price: action.price }
        : { quantity: action.quantity, price: action.price }
      const res = await this.send('PATCH', this.url, body)
      check(res.status === 200, `PATCH ${JSON.stringify(body)}: ${res.status}`)
      const held = referencePosition(inOrder(this.transactions))?.quantity ?? 0
      if (action.kind === 'quantity' && action.quantity !== held) {
        // A BUY or SELL of the difference, dated today, at the price given or else the asset's.
        const listed = (await this.send('GET', `${this.url}/transactions?limit=1000`)).body as Recorded[]
        const recorded = listed.find(transaction => !this.transactions.some(known => known.id === transaction.id))
        check(recorded !== undefined && recorded.fee === 0 && recorded.price === (action.price ?? this.price) &&
          recorded.type === (action.quantity > held ? 'BUY' : 'SELL') &&
          Math.abs(Date.parse(recorded.date) - Date.now()) < 2 * DAY, 'the change of quantity, as a transaction')
        this.transactions.push(recorded as Recorded)
      }
      this.price = action.price ?? this.price
    }
    await this.check()
    return outcome
  }

  /** A write's answer: refused exactly when the recomputation finds a sale of more than was held. */
  private async expect (res: { status: number, body: any }, candidate: Recorded[]): Promise<Outcome> {
    const position = referencePosition(inOrder(candidate))
    if (position === undefined) {
      check(res.status === 422 && res.body.code === 'INSUFFICIENT_QUANTITY',
        `refused: ${res.status} ${JSON.stringify(res.body)}`)
      return 'refused'
    }
    check(res.status === 201 || res.status === 200, `accepted: ${res.status} ${JSON.stringify(res.body)}`)
    this.transactions = candidate.map(transaction => transaction.id === '' ? res.body as Recorded : transaction)
    this.price = position.averagePrice
    return 'accepted'
  }

  /** The asset, its transactions and its dashboard, as recomputed. */
  async check (): Promise<void> {
    const position = referencePosition(inOrder(this.transactions))
    if (position === undefined) throw new Error('the service kept a sale of more than was held')
    const asset = (await this.send('GET', this.url)).body
    check(asset.quantity === position.quantity, `quantity ${asset.quantity} = ${position.quantity}`)
    check(asset.price === this.price, `price ${asset.price} = ${this.price}`)
    check(asset.totalValue === referenceValue(position.quantity, this.price), `totalValue ${asset.totalValue}`)
    const listed = (await this.send('GET', `${this.url}/transactions`)).body as Recorded[]
    check(listed.map(tx => tx.id).join() === inOrder(this.transactions).map(tx => tx.id).join(), 'listed in order')
    const { basicInfo } = (await this.send('GET', `${this.url}/dashboard`)).body
    for (const name of ['quantity', 'averagePrice', 'investedValue', 'realizedResult', 'fees'] as const) {
      check(basicInfo[name] === position[name], `${name}: ${basicInfo[name]} = ${position[name]}`)
    }
  }
}

function check (condition: boolean, message: string): void {
  if (!condition) throw new Error(message)
}

t.test('quantity, cost, average price and realized result always equal a recomputation from the transactions',
  async t => {
    // Thousands of requests from one client in a minute: past the default rate limit.
    const app = await buildDataApp(t, 'sqlite', { RATE_LIMIT_MAX: '1000000' })
    const portfolio = await app.inject({
      method: 'POST', url: '/portfolios', headers: apiKey(), payload: { name: 'Random', userId: 'fc' }
    })
    const portfolioId = portfolio.json().id as string
    // What the generated steps reached, counted from their outcomes: the property holds of nothing
    // it never reached.
    const reached = { accepted: 0, refused: 0, refusedRemovals: 0, sameDate: 0 }
    await fc.assert(fc.asyncProperty(
      quantity, price, fc.integer({ min: 0, max: 1500 }), fc.array(step, { minLength: 1, maxLength: 12 }),
      async (first, firstPrice, days, steps) => {
        const created = await app.inject({
          method: 'POST',
          url: '/portfolio-assets',
          headers: apiKey(),
          payload: {
            name: 'A', symbol: 'A', type: 'STOCK', quantity: first, price: firstPrice, portfolioId, date: dateOf(days)
          }
        })
        check(created.statusCode === 201, `created: ${created.body}`)
        const position = new Position(app, created.json().id)
        position.transactions = (await position.send('GET', `${position.url}/transactions`)).body
        position.price = firstPrice
        await position.check()
        for (const action of steps) {
          const outcome = await position.apply(action)
          if (outcome === 'nothing') continue
          reached[outcome]++
          if (outcome === 'refused' && action.kind === 'remove') reached.refusedRemovals++
          if (outcome === 'accepted' && sameDateBuyAndSale(position.transactions)) reached.sameDate++
        }
        await position.send('DELETE', position.url)
      }), { numRuns: 120 })
    t.comment(JSON.stringify(reached))
    t.ok(reached.accepted > 100, `${reached.accepted} writes accepted`)
    t.ok(reached.refused - reached.refusedRemovals > 0, 'sales of more than was held at their date refused')
    t.ok(reached.refusedRemovals > 0, 'removals that would leave less than nothing refused')
    t.ok(reached.sameDate > 0, 'positions holding a buy and a sale of one date, counted in the order recorded')
  })
