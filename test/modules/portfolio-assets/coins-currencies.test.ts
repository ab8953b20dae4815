import t, { type Test } from 'tap'
import type { App } from '../../../src/app.js'
import { apiKey, assertErrorBody, buildTestApp, TEXTS } from '../../helper.js'
import { startFakeBrapi, type FakeBrapi } from '../../fixtures/fake-brapi.js'
import { portfolioWith } from '../../fixtures/portfolios.js'
import { capturedLog } from '../../fixtures/captured-log.js'

const TIME = '2026-11-21T20:07:46.000Z'

async function brapiApp (t: Test, extra: Record<string, string> = {}): Promise<{ app: App, brapi: FakeBrapi }> {
  const brapi = await startFakeBrapi(t)
  const app = await buildTestApp(t, {
    QUOTES_PROVIDER: 'brapi', BRAPI_URL: brapi.url, BRAPI_TOKEN: 'brapi-token', BRAPI_TIMEOUT_MS: '2000', ...extra
  })
  return { app, brapi }
}

t.test('GET /portfolio-assets/price/:symbol: a coin in reais, a dollar share as brapi gives it', async t => {
  const { app, brapi } = await brapiApp(t)
  brapi.coins.set('BTC', 330_123.45)
  brapi.prices.set('AAPL', 230.12)
  brapi.currencies.set('AAPL', 'USD')
  const coin = await app.inject({ method: 'GET', url: '/portfolio-assets/price/btc', headers: apiKey() })
  t.equal(coin.statusCode, 200)
  t.same(coin.json(), { symbol: 'BTC', price: 330_123.45, currency: 'BRL', lastUpdate: TIME, source: 'brapi.dev' })
  t.equal(brapi.requestsTo('/api/v2/crypto')[0]?.query.get('currency'), 'BRL')
  const share = await app.inject({ method: 'GET', url: '/portfolio-assets/price/AAPL', headers: apiKey() })
  t.same(share.json(), { symbol: 'AAPL', price: 230.12, currency: 'USD', lastUpdate: TIME, source: 'brapi.dev' },
    'brapi\'s own price and currency')
  t.equal(brapi.requestsTo('/api/v2/currency').length, 0, 'a quote is not converted')
})

t.test('valuation in reais: a dollar share converted, a CRYPTO asset priced as a coin, a currency without a rate ' +
  'unquoted, in one request per kind', async t => {
  const { app, brapi } = await brapiApp(t)
  brapi.prices.set('PETR4', 38.17)
  brapi.prices.set('AAPL', 1.15)
  brapi.currencies.set('AAPL', 'USD')
  brapi.prices.set('SAP', 200)
  brapi.currencies.set('SAP', 'EUR')
  brapi.coins.set('SOL', 800.5)
  brapi.listedCoins = []
  brapi.rates.set('USD', '5.1')
  const { id } = await portfolioWith(app, [
    { symbol: 'PETR4', quantity: 10, price: 37.5 },
    { symbol: 'AAPL', quantity: 1, price: 5.5 },
    { symbol: 'SAP', quantity: 1, price: 1100 },
    { symbol: 'SOL', quantity: 0.5, price: 700, type: 'CRYPTO' }
  ])
  const res = await app.inject({ method: 'GET', url: `/portfolios/${id}/valuation`, headers: apiKey() })
  t.equal(res.statusCode, 200)
  // book: 375 + 5.50 + 1100 + 350 = 1830.50
  // market: 381.70 + 5.87 (1.15 × 5.1 = 5.865, not the float 5.864999…) + 1100 (SAP at book) + 400.25 = 1887.82
  t.match(res.json(), {
    bookValue: 1830.5, marketValue: 1887.82, result: 57.32, resultPercent: 3.13, unquotedSymbols: ['SAP']
  })
  t.equal(brapi.requestsTo('/api/quote/').length, 1, 'one request for the B3 and foreign tickers')
  t.equal(brapi.requestsTo('/api/v2/crypto').length, 1, 'one for the coin')
  t.same(brapi.requestsTo('/api/v2/currency').map(request => request.query.get('currency')), ['USD-BRL,EUR-BRL'],
    'one for the rates of every currency')
  const viaGraphql = await app.inject({
    method: 'POST',
    url: '/graphql',
    headers: apiKey(),
    payload: { query: `{ portfolio(id: "${id}") { valuation { marketValue unquotedSymbols } } }` }
  })
  t.same(viaGraphql.json().data.portfolio.valuation, { marketValue: 1887.82, unquotedSymbols: ['SAP'] },
    'GraphQL from the same cache')
  t.equal(brapi.requestsTo('/api/v2/currency').length, 1)
})

t.test('a spent quota: 503 UPSTREAM_UNAVAILABLE with Retry-After on quotes and dashboards, valuations at book value, ' +
  'and brapi left alone until it passes', async t => {
  const { app, brapi } = await brapiApp(t, { QUOTES_TTL: '0' })
  brapi.prices.set('PETR4', 38.5)
  brapi.prices.set('^BVSP', 128_000)
  const { id, assetIds } = await portfolioWith(app, [{ symbol: 'PETR4', quantity: 2, price: 30 }])
  brapi.refusal = { status: 429, retryAfter: '120' }
  const price = await app.inject({ method: 'GET', url: '/portfolio-assets/price/PETR4', headers: apiKey() })
  t.equal(price.statusCode, 503)
  t.equal(price.headers['retry-after'], '120')
  assertErrorBody(t, price.json(), 503, '/portfolio-assets/price/PETR4')
  t.match(price.json(), { code: 'UPSTREAM_UNAVAILABLE', message: TEXTS.quoteQuotaSpent(120) })
  const sent = brapi.received.length
  brapi.refusal = undefined
  const dashboard = await app.inject({
    method: 'GET', url: `/portfolio-assets/${assetIds[0] ?? ''}/dashboard`, headers: apiKey()
  })
  t.equal(dashboard.statusCode, 503)
  const wait = Number(dashboard.headers['retry-after'])
  t.ok(wait > 0 && wait <= 120, `what is left of brapi's 120 s: ${wait}`)
  const valuation = await app.inject({ method: 'GET', url: `/portfolios/${id}/valuation`, headers: apiKey() })
  t.equal(valuation.statusCode, 200)
  t.match(valuation.json(), { marketValue: 60, unquotedSymbols: ['PETR4'] })
  const graphql = await app.inject({
    method: 'POST', url: '/graphql', headers: apiKey(), payload: { query: '{ quote(symbol: "PETR4") { price } }' }
  })
  t.match(graphql.json(), { errors: [{ extensions: { code: 'UPSTREAM_UNAVAILABLE' } }] })
  t.equal(brapi.received.length, sent, 'not one request went to brapi meanwhile')
})

t.test('a refused token: 502, and one error line a minute naming BRAPI_TOKEN', async t => {
  const { stream, lines } = capturedLog()
  const brapi = await startFakeBrapi(t)
  const app = await buildTestApp(t, {
    QUOTES_PROVIDER: 'brapi', BRAPI_URL: brapi.url, BRAPI_TOKEN: 'brapi-token', QUOTES_TTL: '0'
  }, { logger: { level: 'info', stream } })
  brapi.refusal = { status: 401 }
  for (let i = 0; i < 3; i++) {
    const res = await app.inject({ method: 'GET', url: '/portfolio-assets/price/PETR4', headers: apiKey() })
    t.equal(res.statusCode, 502)
    t.match(res.json(), { code: 'UPSTREAM_UNAVAILABLE', message: TEXTS.upstreamUnavailable })
  }
  t.equal(lines.filter(line => /BRAPI_TOKEN/.test(String(line.msg))).length, 1)
  t.notMatch(JSON.stringify(lines), /brapi-token/, 'the token itself is never logged')
})

t.test('npm start\'s offline provider prices the demo\'s coins and converts its dollar share', async t => {
  const app = await buildTestApp(t)
  await app.inject({ method: 'POST', url: '/reset', headers: apiKey() })
  const assets = (await app.inject({ method: 'GET', url: '/portfolio-assets', headers: apiKey() })).json() as
    Array<{ id: string, symbol: string, portfolioId: string }>
  const apple = assets.find(asset => asset.symbol === 'AAPL')
  const bitcoin = assets.find(asset => asset.symbol === 'BTC')
  t.equal(apple?.portfolioId, bitcoin?.portfolioId, 'beside the coins')
  const dollars = (await app.inject({ method: 'GET', url: '/portfolio-assets/price/AAPL', headers: apiKey() })).json()
  t.match(dollars, { symbol: 'AAPL', currency: 'USD', source: /offline/ })
  t.match((await app.inject({ method: 'GET', url: '/portfolio-assets/price/BTC', headers: apiKey() })).json(),
    { symbol: 'BTC', currency: 'BRL' })
  const dashboard = (await app.inject({
    method: 'GET', url: `/portfolio-assets/${apple?.id ?? ''}/dashboard`, headers: apiKey()
  })).json()
  const rate = dashboard.basicInfo.lastQuote / dollars.price
  t.ok(rate > 4 && rate < 7, `the share in reais at a simulated dollar of about R$ 5.30: ${rate}`)
  // Every month from its first buy's to this one, counted here: an empty history would pass the `every`.
  const [firstBuy] = (await app.inject({
    method: 'GET', url: `/portfolio-assets/${apple?.id ?? ''}/transactions`, headers: apiKey()
  })).json() as Array<{ date: string }>
  const [year, month] = (firstBuy?.date ?? '').split('-').map(Number) as [number, number]
  const today = new Date()
  t.equal(dashboard.monthlyHistory.length, (today.getUTCFullYear() - year) * 12 + today.getUTCMonth() + 2 - month,
    `a month of history from ${firstBuy?.date ?? 'no buy'} to this one`)
  t.ok(dashboard.monthlyHistory.every((month: { estimated: boolean }) => !month.estimated),
    'every month has its simulated close and rate')
  const valuation = (await app.inject({
    method: 'GET', url: `/portfolios/${apple?.portfolioId ?? ''}/valuation`, headers: apiKey()
  })).json()
  t.same(valuation.unquotedSymbols, [], 'nothing at book value')
})
