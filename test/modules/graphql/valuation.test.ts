import t from 'tap'
import type { Client } from 'graphql-ws'
import type { App } from '../../../src/app.js'
import { apiKey, bearer, buildTestApp, TEST_API_KEYS, userToken } from '../../helper.js'
import { startFakeBrapi } from '../../fixtures/fake-brapi.js'
import { wsClient } from '../../fixtures/item-subscriptions.js'

interface Answer {
  data?: Record<string, any> | null
  errors?: Array<{ message: string, extensions: { code: string, [key: string]: unknown } }>
}

async function graphql (app: App, query: string, headers: Record<string, string> = apiKey()): Promise<Answer> {
  return (await app.inject({ method: 'POST', url: '/graphql', headers, payload: { query } })).json() as Answer
}

async function portfolio (
  app: App, symbols: Array<[string, number, number]>
): Promise<{ id: string, assets: string[] }> {
  const { id } = (await app.inject({
    method: 'POST', url: '/portfolios', headers: apiKey(), payload: { name: 'GraphQL', userId: 'g' }
  })).json() as { id: string }
  const assets: string[] = []
  for (const [symbol, quantity, price] of symbols) {
    const res = await app.inject({
      method: 'POST',
      url: '/portfolio-assets',
      headers: apiKey(),
      payload: { name: symbol, symbol, type: 'STOCK', quantity, price, portfolioId: id }
    })
    assets.push((res.json() as { id: string }).id)
  }
  return { id, assets }
}

const VALUATION = 'portfolioId currency bookValue marketValue result resultPercent quotedAt quoteSource unquotedSymbols'

/** A subscription's deliveries, its end (an error or `complete`) and a wait for the n-th. */
function subscribed (client: Client, query: string, variables: Record<string, unknown>) {
  const deliveries: Answer[] = []
  let ended: (outcome: unknown) => void = () => {}
  const done = new Promise<unknown>(resolve => { ended = resolve })
  client.subscribe({ query, variables }, {
    next: value => { deliveries.push(value as Answer) },
    error: error => { ended(error) },
    complete: () => { ended('complete') }
  })
  return {
    deliveries,
    done,
    next: async (count: number) => {
      for (let attempt = 0; attempt < 800 && deliveries.length < count; attempt++) {
        await new Promise(resolve => setTimeout(resolve, 25))
      }
      return deliveries
    }
  }
}

t.test('Portfolio.valuation: REST\'s valuation, every portfolio of a list in one provider request', async t => {
  const brapi = await startFakeBrapi(t)
  brapi.prices.set('PETR4', 40)
  brapi.prices.set('VALE3', 70)
  const app = await buildTestApp(t, { QUOTES_PROVIDER: 'brapi', BRAPI_URL: brapi.url })
  const first = await portfolio(app, [['PETR4', 10, 30]])
  const second = await portfolio(app, [['VALE3', 2, 60], ['PETR4', 1, 35]])
  const before = brapi.quoteRequests()
  const answer = await graphql(app, `{ portfolios { id valuation { ${VALUATION} } } }`)
  t.equal(brapi.quoteRequests() - before, 1, 'one request for both portfolios\' symbols')
  const byId = new Map((answer.data?.portfolios as Array<{ id: string, valuation: unknown }>)
    .map(entry => [entry.id, entry.valuation]))
  for (const { id } of [first, second]) {
    const rest = (await app.inject({ method: 'GET', url: `/portfolios/${id}/valuation`, headers: apiKey() })).json() as
      Record<string, unknown>
    const { updatedAt: _updatedAt, ...same } = rest
    t.same(byId.get(id), same, 'the same valuation as REST')
  }
  t.match(byId.get(second.id), { bookValue: 155, marketValue: 180, result: 25, resultPercent: 16.13 })
  const anonymous = await graphql(app, `{ portfolio(id: "${first.id}") { valuation { bookValue } } }`, {})
  t.equal(anonymous.errors?.[0]?.extensions.code, 'API_KEY_INVALID')
})

t.test('portfolioValuation: the valuation at once, each change, then NOT_FOUND and complete when deleted', async t => {
  const app = await buildTestApp(t, { VALUATION_MIN_INTERVAL_MS: '0' })
  const { id, assets } = await portfolio(app, [['PETR4', 10, 30]])
  const client = await wsClient(t, app, { 'x-api-key': TEST_API_KEYS[0] ?? '' })
  const query = `subscription ($id: ID!) { portfolioValuation(id: $id) { ${VALUATION} } }`
  const live = subscribed(client, query, { id })
  await live.next(1)
  t.match(live.deliveries[0]?.data?.portfolioValuation, { portfolioId: id, bookValue: 300, currency: 'BRL' })

  await app.inject({
    method: 'PATCH', url: `/portfolio-assets/${assets[0] ?? ''}`, headers: apiKey(), payload: { quantity: 20 }
  })
  await live.next(2)
  t.match(live.deliveries[1]?.data?.portfolioValuation, { bookValue: 600 })

  // A change through GraphQL is heard as well as one through REST.
  await graphql(app, `mutation { deletePortfolio(id: "${id}") }`)
  t.equal(await live.done, 'complete', 'then complete')
  t.match(live.deliveries[2], {
    data: null,
    errors: [{ message: 'Portfolio não encontrado', path: ['portfolioValuation'], extensions: { code: 'NOT_FOUND' } }]
  }, 'the deletion is an error NOT_FOUND')
  t.same(app.domain.liveValuations.watched, { portfolios: 0, symbols: 0 }, 'nothing is left watched')
})

t.test('portfolioValuation is refused before it starts: unknown portfolio, no API key, past the streams allowed',
  async t => {
    const app = await buildTestApp(t, { VALUATION_STREAMS_PER_CREDENTIAL: '1' })
    const { id } = await portfolio(app, [])
    const query = 'subscription ($id: ID!) { portfolioValuation(id: $id) { bookValue } }'
    const keyed = await wsClient(t, app, { 'x-api-key': TEST_API_KEYS[0] ?? '' })
    const unknown = subscribed(keyed, query, { id: 'nope' })
    t.match(await unknown.done, [{ extensions: { code: 'NOT_FOUND' } }])

    const anonymous = subscribed(await wsClient(t, app, { authorization: `Bearer ${userToken()}` }), query, { id })
    t.match(await anonymous.done, [{ extensions: { code: 'API_KEY_INVALID' } }])

    const open = subscribed(keyed, query, { id })
    await open.next(1)
    const over = subscribed(keyed, query, { id })
    t.match(await over.done, [{ extensions: { code: 'RATE_LIMITED' } }], 'one stream per key here')
    const otherKey = subscribed(await wsClient(t, app, { 'x-api-key': TEST_API_KEYS[1] ?? '' }), query, { id })
    await otherKey.next(1)
    t.equal(otherKey.deliveries.length, 1, 'another key has streams of its own')
    t.equal(app.domain.liveValuations.streams, 2)
  })

t.test('excludedTransactions pages as REST; aggregatorItem\'s itemId follows REST\'s rule', async t => {
  const app = await buildTestApp(t)
  const user = bearer(userToken())
  for (const transaction of ['tx-1', 'tx-2', 'tx-3']) {
    await app.inject({
      method: 'POST',
      url: '/openfinance-excluded-transactions',
      headers: user,
      payload: { client_id: 'c1', transaction_id: transaction, reason: 'Transferência' }
    })
  }
  const page = await graphql(app, '{ excludedTransactions(clientId: "c1", limit: 2, offset: 1) { transaction_id } }',
    user)
  // Creates within one millisecond are ordered by id, not by when they were sent: REST's own page is the reference.
  const rest = await app.inject({
    method: 'GET', url: '/openfinance-excluded-transactions?client_id=c1&limit=2&offset=1', headers: user
  })
  t.equal(rest.statusCode, 200)
  const restPage = (rest.json() as Array<{ transaction_id: string }>)
    .map(({ transaction_id: id }) => ({ transaction_id: id }))
  t.equal(restPage.length, 2)
  t.same(page.data?.excludedTransactions, restPage)
  const refused = await graphql(app, '{ excludedTransactions(clientId: "c1", limit: 0) { id } }', user)
  const limitRefused = { code: 'VALIDATION_FAILED', messages: ['limit must not be less than 1'] }
  t.match(refused.errors?.[0], { extensions: limitRefused })

  const client = await wsClient(t, app, { authorization: `Bearer ${userToken()}` })
  const item = subscribed(client, 'subscription { aggregatorItem(itemId: "no/slashes") { status } }', {})
  t.match(await item.done, [{ extensions: { code: 'VALIDATION_FAILED' } }])
})
