import Big from 'big.js'
import t, { type Test } from 'tap'
import type { App } from '../../../src/app.js'
import { apiKey, assertErrorBody, buildDataApp, buildTestApp, forEachEngine, TEXTS } from '../../helper.js'
import { monthStart, startFakeBrapi, type FakeBrapi } from '../../fixtures/fake-brapi.js'
import { sendJson } from '../../fixtures/fake-server.js'
import { answeredPosition } from '../../fixtures/average-cost.js'
import {
  referenceWithEvents, type ReferenceCashEvent, type ReferenceStockEvent
} from '../../fixtures/corporate-events.js'
import { OfflineQuotes } from '../../../src/quotes/offline.js'

const LONG_LABEL = /^(Jan|Fev|Mar|Abr|Mai|Jun|Jul|Ago|Set|Out|Nov|Dez)\.\d{4}$/
const SOURCE_FIELDS = '{ lastQuote quoteSource quoteUpdatedAt }'
const SHORT_LABEL = /^(Jan|Fev|Mar|Abr|Mai|Jun|Jul|Ago|Set|Out|Nov|Dez)\/\d{2}$/

async function brapiApp (
  t: Test, engine: 'sqlite' | 'postgres' = 'sqlite', overrides: Record<string, string> = {}
): Promise<{ app: App, brapi: FakeBrapi }> {
  const brapi = await startFakeBrapi(t)
  const app = await buildDataApp(t, engine, {
    QUOTES_PROVIDER: 'brapi',
    BRAPI_URL: brapi.url,
    BRAPI_TOKEN: 'brapi-token',
    BRAPI_TIMEOUT_MS: '300',
    ...overrides
  })
  return { app, brapi }
}

t.test('GET /portfolio-assets/price/:symbol from brapi', async t => {
  const { app, brapi } = await brapiApp(t)
  brapi.prices.set('PETR4', 37.42)
  brapi.prices.set('^BVSP', 128_500)
  brapi.prices.set('NOPRICE3', null)
  const res = await app.inject({ method: 'GET', url: '/portfolio-assets/price/petr4', headers: apiKey() })
  t.equal(res.statusCode, 200)
  t.same(res.json(), {
    symbol: 'PETR4',
    price: 37.42,
    currency: 'BRL',
    lastUpdate: '2026-11-21T20:07:46.000Z',
    source: 'brapi.dev'
  })
  const [sent] = brapi.requestsTo('/api/quote/')
  t.equal(sent?.path, '/api/quote/PETR4')
  t.equal(sent?.headers.authorization, 'Bearer brapi-token', 'the token travels in the header')
  t.equal(sent?.query.get('token'), null, 'never in the query')

  const index = await app.inject({ method: 'GET', url: '/portfolio-assets/price/%5EBVSP', headers: apiKey() })
  t.equal(index.statusCode, 200)
  t.equal(index.json().price, 128_500)
  t.equal(brapi.requestsTo('/api/quote/')[1]?.url, '/api/quote/%5EBVSP')

  for (const symbol of ['UNKNOWN3', 'NOPRICE3']) {
    const missing = await app.inject({ method: 'GET', url: `/portfolio-assets/price/${symbol}`, headers: apiKey() })
    t.equal(missing.statusCode, 404, symbol)
    t.equal(missing.json().message, `Cotação não encontrada para ${symbol}`)
    assertErrorBody(t, missing.json(), 404, `/portfolio-assets/price/${symbol}`)
  }
  for (const symbol of ['PETR4,VALE3', 'a%20b', 'x'.repeat(21), 'PETR4%3Ftoken%3Dx', 'PETR4%2F..']) {
    const bad = await app.inject({ method: 'GET', url: `/portfolio-assets/price/${symbol}`, headers: apiKey() })
    t.equal(bad.statusCode, 400, symbol)
  }
  t.equal(brapi.requestsTo('/api/quote/').length, 4, 'invalid tickers never reach brapi')
  t.equal(brapi.requestsTo('/api/v2/crypto/available').length, 1, 'brapi\'s list of coins, read once')
  t.equal((await app.inject({ method: 'GET', url: '/portfolio-assets/price/PETR4' })).statusCode, 401)
})

t.test('brapi failures map like the relays: 5xx and refusals → 502, timeout → 504', async t => {
  const { app, brapi } = await brapiApp(t)
  brapi.on('BOOM3', (_req, res) => sendJson(res, 500, { message: 'internal', stack: 'secret' }))
  brapi.on('AUTH3', (_req, res) => sendJson(res, 401, { message: 'token inválido' }))
  brapi.on('SLOW3', async (_req, res) => {
    await new Promise(resolve => setTimeout(resolve, 1500))
    sendJson(res, 200, {})
  })
  brapi.on('HTML3', (_req, res) => { res.writeHead(200, { 'content-type': 'text/html' }); res.end('<html/>') })
  brapi.on('EMPTY3', (_req, res) => { res.writeHead(200, { 'content-type': 'application/json' }); res.end() })
  brapi.on('NONE3', (_req, res) => sendJson(res, 200, { results: [] }))
  brapi.on('NEG3', (_req, res) =>
    sendJson(res, 200, { results: [{ symbol: 'NEG3', currency: 'BRL', regularMarketPrice: -1.5 }] })
  )
  brapi.on('TEXT3', (_req, res) =>
    sendJson(res, 200, { results: [{ symbol: 'TEXT3', currency: 'BRL', regularMarketPrice: '12.3' }] })
  )
  const garbage = ['HTML3', 'EMPTY3', 'NONE3', 'NEG3', 'TEXT3'].map(
    symbol => [symbol, 502, TEXTS.upstreamUnavailable] as const
  )
  const failures = [
    ['BOOM3', 502, TEXTS.upstreamUnavailable],
    ['AUTH3', 502, TEXTS.upstreamUnavailable],
    ...garbage,
    ['SLOW3', 504, TEXTS.upstreamTimeout]
  ] as const
  for (const [symbol, status, message] of failures) {
    const res = await app.inject({ method: 'GET', url: `/portfolio-assets/price/${symbol}`, headers: apiKey() })
    t.equal(res.statusCode, status, symbol)
    t.equal(res.json().message, message)
    t.notMatch(res.body, /secret/)
  }
})

t.test('one brapi call for 50 concurrent requests of a symbol, then cached for QUOTES_TTL', async t => {
  const { app, brapi } = await brapiApp(t)
  brapi.prices.set('VALE3', 61.18)
  brapi.delayMs = 50
  const answers = await Promise.all(Array.from({ length: 50 }, async () => await app.inject({
    method: 'GET',
    url: '/portfolio-assets/price/VALE3',
    headers: apiKey()
  })))
  t.same(answers.map(a => a.statusCode), Array(50).fill(200))
  t.equal(brapi.calls('VALE3'), 1, 'single flight')
  await app.inject({ method: 'GET', url: '/portfolio-assets/price/VALE3', headers: apiKey() })
  t.equal(brapi.calls('VALE3'), 1, 'served from the cache within the TTL')

  const uncached = await brapiApp(t, 'sqlite', { QUOTES_TTL: '0' })
  uncached.brapi.prices.set('VALE3', 61.18)
  await uncached.app.inject({ method: 'GET', url: '/portfolio-assets/price/VALE3', headers: apiKey() })
  await uncached.app.inject({ method: 'GET', url: '/portfolio-assets/price/VALE3', headers: apiKey() })
  t.equal(uncached.brapi.calls('VALE3'), 2, 'QUOTES_TTL=0 asks every time')
})

async function portfolioWithAsset (
  app: App, asset: Record<string, unknown>
): Promise<{ portfolioId: string, assetId: string }> {
  const portfolioId = (await app.inject({
    method: 'POST',
    url: '/portfolios',
    headers: apiKey(),
    payload: { name: 'P', userId: 'u' }
  })).json().id
  const assetId = (await app.inject({
    method: 'POST',
    url: '/portfolio-assets',
    headers: apiKey(),
    payload: { name: 'Ativo', type: 'STOCK', portfolioId, ...asset }
  })).json().id
  return { portfolioId, assetId }
}

forEachEngine(t, 'GET /portfolio-assets/:id/dashboard computes from transactions and brapi history', async (
  t, engine
) => {
  const { app, brapi } = await brapiApp(t, engine)
  brapi.prices.set('PETR4', 40)
  brapi.prices.set('VALE3', 50)
  brapi.prices.set('^BVSP', 132_000)
  brapi.histories.set('PETR4', [[monthStart(2), 30], [monthStart(1), 35], [monthStart(0), 39]])
  brapi.histories.set('^BVSP', [[monthStart(1), 120_000], [monthStart(0), 130_000]])
  const { portfolioId, assetId } = await portfolioWithAsset(app, { symbol: 'PETR4', quantity: 100, price: 32 })
  await app.inject({
    method: 'POST',
    url: '/portfolio-assets',
    headers: apiKey(),
    payload: { name: 'Vale', symbol: 'VALE3', type: 'STOCK', quantity: 10, price: 60, portfolioId }
  })
  // A second buy: 50 more at 36.
  const patched = await app.inject({
    method: 'PATCH',
    url: `/portfolio-assets/${assetId}`,
    headers: apiKey(),
    payload: { quantity: 150, price: 36 }
  })
  t.equal(patched.statusCode, 200)

  const res = await app.inject({ method: 'GET', url: `/portfolio-assets/${assetId}/dashboard`, headers: apiKey() })
  t.equal(res.statusCode, 200)
  const { basicInfo, monthlyHistory, historicalChart, transactions } = res.json()
  const invested = 100 * 32 + 50 * 36
  t.same(basicInfo, {
    ticker: 'PETR4',
    name: 'Ativo',
    imageUrl: 'https://icons.brapi.dev/icons/PETR4.svg',
    quantity: 150,
    averagePrice: 33.33333333,
    lastQuote: 40,
    quoteSource: 'brapi.dev',
    quoteUpdatedAt: '2026-11-21T20:07:46.000Z',
    investedValue: invested,
    grossValue: 150 * 40,
    result: 150 * 40 - invested,
    resultPercentage: 20,
    realizedResult: 0,
    fees: 0,
    income: 0,
    incomeAnnounced: 0
  })
  t.equal(monthlyHistory.length, 1, 'all was bought this month: one month of history')
  t.match(monthlyHistory[0], {
    month: LONG_LABEL,
    currentBalance: 6000,
    quantity: 150,
    portfolioPercentage: 92.31,
    ibovPercentage: 0
  })
  t.match(historicalChart[0], { month: SHORT_LABEL, appliedValue: invested, grossBalance: 6000 })
  t.same(transactions.map((tx: {
    type: string
    quantity: number
    pricePerUnit: number
    totalValue: number
  }) => [tx.type, tx.quantity, tx.pricePerUnit, tx.totalValue]), [['BUY', 100, 32, 3200], ['BUY', 50, 36, 1800]])
  t.match(transactions[0].date, /^\d{4}-\d\d-\d\d$/)
  const viaGraphql = await app.inject({
    method: 'POST',
    url: '/graphql',
    headers: apiKey(),
    payload: { query: `{ asset(id: "${String(assetId)}") { dashboard { basicInfo ${SOURCE_FIELDS} } } }` }
  })
  const fromGraphql = viaGraphql.json().data.asset.dashboard.basicInfo
  const sourced = { lastQuote: 40, quoteSource: 'brapi.dev', quoteUpdatedAt: '2026-11-21T20:07:46.000Z' }
  t.same(fromGraphql, sourced, 'GraphQL names the same source')

  // Down to 30: a sale of 120 at the asset's price (36, the last PATCH's), realizing 120 × (36 − 33.33333333).
  await app.inject({
    method: 'PATCH',
    url: `/portfolio-assets/${assetId}`,
    headers: apiKey(),
    payload: { quantity: 30 }
  })
  const sold = (await app.inject({
    method: 'GET',
    url: `/portfolio-assets/${assetId}/dashboard`,
    headers: apiKey()
  })).json()
  t.same(
    sold.transactions.map((tx: { type: string, quantity: number, pricePerUnit: number }) =>
      [tx.type, tx.quantity, tx.pricePerUnit]),
    [['BUY', 100, 32], ['BUY', 50, 36], ['SELL', 120, 36]]
  )
  t.match(sold.basicInfo,
    { quantity: 30, averagePrice: 33.33333333, investedValue: 1000, realizedResult: 320, fees: 0 })

  t.equal((await app.inject({
    method: 'GET',
    url: '/portfolio-assets/nope/dashboard',
    headers: apiKey()
  })).statusCode, 404)
})

forEachEngine(t, 'the demo data has a dashboard of consistent numbers for every asset ' +
  '(offline provider)', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  await app.inject({ method: 'POST', url: '/reset', headers: apiKey() })
  const assets = (await app.inject({
    method: 'GET',
    url: '/portfolio-assets',
    headers: apiKey()
  })).json() as Array<{ id: string, portfolioId: string, symbol: string, quantity: number }>
  t.ok(assets.length >= 10)
  const shares = new Map<string, number[]>()
  for (const asset of assets) {
    const res = await app.inject({ method: 'GET', url: `/portfolio-assets/${asset.id}/dashboard`, headers: apiKey() })
    t.equal(res.statusCode, 200)
    const { basicInfo, monthlyHistory, historicalChart, transactions } = res.json()
    // The offline provider's simulated corporate events of the symbol, as it gives them.
    const { stock, cash } = await offlineEventsOf(asset.symbol)
    const reference = referenceWithEvents(transactions.map((tx: { pricePerUnit: number }) =>
      ({ ...tx, price: tx.pricePerUnit })), stock, cash, new Date().toISOString().slice(0, 10))
    const position = reference.position === undefined ? undefined : answeredPosition(reference.position)
    t.match(basicInfo, { ...position, income: reference.income.paid, incomeAnnounced: reference.income.announced },
      'quantity, average price, invested, realized result, fees and income as recomputed with the events')
    t.equal(position?.quantity, asset.quantity, 'the transactions and the events make the asset\'s quantity')
    t.ok(monthlyHistory.length > 1, 'demo transactions span several months')
    t.equal(monthlyHistory.length, historicalChart.length)
    t.equal(monthlyHistory.at(-1).currentBalance, basicInfo.grossValue, 'the last month is the current position')
    t.ok(monthlyHistory.every((m: { month: string }) => LONG_LABEL.test(m.month)))
    const last = monthlyHistory.at(-1).portfolioPercentage
    shares.set(asset.portfolioId, [...(shares.get(asset.portfolioId) ?? []), last])
  }
  for (const [portfolio, values] of shares) {
    // Each share is rounded to 2 places: together within half a hundredth per asset of 100.
    const total = values.reduce((sum, share) => sum.plus(share), new Big(0))
    t.ok(
      total
        .minus(100)
        .abs()
        .lte(0.005 * values.length),
      `the current shares of portfolio ${portfolio} add up to 100 (${total.toString()})`
    )
  }
})

t.test('a negative monthly close from brapi is 502 on the dashboard, never used', async t => {
  const { app, brapi } = await brapiApp(t)
  brapi.prices.set('PETR4', 40)
  brapi.prices.set('^BVSP', 130_000)
  brapi.histories.set('PETR4', [[monthStart(1), -35]])
  const portfolio = (await app.inject({
    method: 'POST',
    url: '/portfolios',
    headers: apiKey(),
    payload: { name: 'P', userId: 'u' }
  })).json()
  const asset = (await app.inject({
    method: 'POST',
    url: '/portfolio-assets',
    headers: apiKey(),
    payload: { name: 'Ativo', symbol: 'PETR4', type: 'STOCK', quantity: 1, price: 30, portfolioId: portfolio.id }
  })).json()
  const res = await app.inject({
    method: 'GET',
    url: `/portfolio-assets/${asset.id as string}/dashboard`,
    headers: apiKey()
  })
  t.equal(res.statusCode, 502)
  t.equal(res.json().code, 'UPSTREAM_UNAVAILABLE')
})

t.test('a symbol the provider does not know is valued at its stored price', async t => {
  const { app, brapi } = await brapiApp(t)
  brapi.prices.set('^BVSP', 130_000)
  const { assetId } = await portfolioWithAsset(app, {
    symbol: 'Tesouro IPCA+ 2035',
    type: 'BOND',
    quantity: 2,
    price: 2000
  })
  await app.inject({
    method: 'PATCH',
    url: `/portfolio-assets/${assetId}`,
    headers: apiKey(),
    payload: { price: 2100 }
  })
  const res = await app.inject({ method: 'GET', url: `/portfolio-assets/${assetId}/dashboard`, headers: apiKey() })
  t.equal(res.statusCode, 200)
  t.match(res.json().basicInfo, {
    ticker: 'TESOURO IPCA+ 2035',
    lastQuote: 2100,
    investedValue: 4000,
    grossValue: 4200,
    result: 200
  })
  const { quoteSource, quoteUpdatedAt } = res.json().basicInfo
  t.same([quoteSource, quoteUpdatedAt], ['asset', null], 'the dashboard says the price is the asset\'s own')
  t.equal(brapi.calls('TESOURO IPCA+ 2035'), 0, 'a symbol that is not a ticker is not sent to brapi')
})

t.test('offline is the default provider and names itself', async t => {
  // An empty value is unset: the default applies.
  const app = await buildTestApp(t, { QUOTES_PROVIDER: '' })
  const res = await app.inject({ method: 'GET', url: '/portfolio-assets/price/ITUB4', headers: apiKey() })
  t.equal(res.statusCode, 200)
  t.match(res.json(), { symbol: 'ITUB4', price: Number, currency: 'BRL', source: /offline/ })
  const again = await app.inject({ method: 'GET', url: '/portfolio-assets/price/ITUB4', headers: apiKey() })
  t.equal(again.json().price, res.json().price)
  const { assetId } = await portfolioWithAsset(app, { symbol: 'ITUB4', quantity: 3, price: 30 })
  const url = `/portfolio-assets/${assetId}/dashboard`
  const dashboard = (await app.inject({ method: 'GET', url, headers: apiKey() })).json()
  const quote = res.json()
  t.match(dashboard.basicInfo, { lastQuote: quote.price, quoteSource: quote.source, quoteUpdatedAt: quote.lastUpdate },
    'the dashboard says its values rest on simulated prices')
})

/** The offline provider's events of `symbol` as the reference reads them: `a para b`, the ex-date, the raw rate. */
async function offlineEventsOf (
  symbol: string
): Promise<{ stock: ReferenceStockEvent[], cash: ReferenceCashEvent[] }> {
  const read = (await new OfflineQuotes().events([symbol])).get(symbol)
  const stock = (read?.events.stock ?? []).map(event => {
    const [after, before] = (event.completeFactor as string).split(' para ')
    return { dataCom: event.lastDatePrior as string, effective: event.exDate as string, after: after!, before: before! }
  })
  const cash = (read?.events.cash ?? []).map(event => ({
    dataCom: event.lastDatePrior as string,
    paymentDate: event.paymentDate,
    jcp: event.label === 'JCP',
    rawRate: event.rawRate as number
  }))
  return { stock, cash }
}
