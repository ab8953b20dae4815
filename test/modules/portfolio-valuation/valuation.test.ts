import t from 'tap'
import { apiKey, assertErrorBody, buildDataApp, buildTestApp, forEachEngine } from '../../helper.js'
import { startFakeBrapi, type FakeBrapi } from '../../fixtures/fake-brapi.js'
import { portfolioWith } from '../../fixtures/portfolios.js'
import { openEventStream } from '../../fixtures/event-stream.js'

function brapiConfig (brapi: FakeBrapi, extra: Record<string, string> = {}): Record<string, string> {
  return { QUOTES_PROVIDER: 'brapi', BRAPI_URL: brapi.url, BRAPI_TICKERS_PER_REQUEST: '50', ...extra }
}

forEachEngine(t, 'GET /portfolios/:id/valuation: market value, result and percent, exact; ' +
  'one provider request for every distinct symbol', async (t, engine) => {
  const brapi = await startFakeBrapi(t)
  brapi.prices.set('PETR4', 38.17)
  brapi.prices.set('VALE3', 61.005)
  brapi.prices.set('NOPRICE', null)
  const app = await buildDataApp(t, engine, brapiConfig(brapi))
  const { id } = await portfolioWith(app, [
    { symbol: 'petr4', quantity: 100, price: 37.5 },
    { symbol: 'PETR4', quantity: 0.5, price: 1.005 },
    { symbol: 'VALE3', quantity: 3, price: 60 },
    { symbol: 'NOPRICE', quantity: 2, price: 10 },
    { symbol: 'UNKNOWN1', quantity: 1, price: 7.77 },
    { symbol: 'Tesouro IPCA 2035', type: 'BOND', quantity: 1, price: 2000 }
  ])
  const before = brapi.quoteRequests()
  const res = await app.inject({ method: 'GET', url: `/portfolios/${id}/valuation`, headers: apiKey() })
  t.equal(res.statusCode, 200)
  t.equal(brapi.quoteRequests() - before, 1, 'one request for PETR4, VALE3, NOPRICE and UNKNOWN1')
  const body = res.json() as Record<string, unknown>
  // book: 3750 + 0.50 (0.5025 → 0.50) + 180 + 20 + 7.77 + 2000 = 5958.27
  // market: 3817 + 19.09 (19.085 → 19.09) + 183.02 (183.015 → 183.02) + 20 + 7.77 + 2000 = 6046.88
  t.match(body, {
    portfolioId: id,
    currency: 'BRL',
    bookValue: 5958.27,
    marketValue: 6046.88,
    result: 88.61,
    resultPercent: 1.49,
    quotedAt: '2026-11-21T20:07:46.000Z',
    quoteSource: 'brapi.dev',
    unquotedSymbols: ['NOPRICE', 'TESOURO IPCA 2035', 'UNKNOWN1']
  })
  t.ok(Date.parse(body.updatedAt as string) > Date.now() - 60_000, 'updatedAt is when it was computed')
  const detail = (await app.inject({ method: 'GET', url: `/portfolios/${id}`, headers: apiKey() })).json() as
    { totalValue: number }
  t.equal(body.bookValue, detail.totalValue, 'bookValue is the portfolio\'s totalValue')
})

t.test('a provider that fails leaves every symbol unquoted: the assets count at book value', async t => {
  const brapi = await startFakeBrapi(t)
  const app = await buildTestApp(t, brapiConfig(brapi, { BRAPI_URL: 'http://127.0.0.1:9' }))
  const { id } = await portfolioWith(app, [{ symbol: 'PETR4', quantity: 2, price: 10 }])
  const res = await app.inject({ method: 'GET', url: `/portfolios/${id}/valuation`, headers: apiKey() })
  t.equal(res.statusCode, 200)
  t.match(res.json(), {
    bookValue: 20,
    marketValue: 20,
    result: 0,
    resultPercent: 0,
    quotedAt: null,
    quoteSource: null,
    unquotedSymbols: ['PETR4']
  })
})

t.test('prices the offline provider simulates are marked so: quoteSource names the simulation', async t => {
  const app = await buildTestApp(t, { QUOTES_PROVIDER: 'offline' })
  const { id } = await portfolioWith(app, [{ symbol: 'PETR4', quantity: 2, price: 10 }])
  const valuation = await app.inject({ method: 'GET', url: `/portfolios/${id}/valuation`, headers: apiKey() })
  t.equal(valuation.json().quoteSource, 'offline (cotações simuladas)', 'the valuation')
  const performance = await app.inject({ method: 'GET', url: `/portfolios/${id}/performance`, headers: apiKey() })
  t.equal(performance.json().quoteSource, 'offline (cotações simuladas)', 'the performance')
})

t.test('an empty portfolio is worth 0, its percent 0; unknown ids are 404, no key 401', async t => {
  const app = await buildTestApp(t)
  const { id } = await portfolioWith(app, [])
  const res = await app.inject({ method: 'GET', url: `/portfolios/${id}/valuation`, headers: apiKey() })
  t.match(res.json(), {
    bookValue: 0, marketValue: 0, result: 0, resultPercent: 0, quotedAt: null, unquotedSymbols: []
  })
  const unknown = await app.inject({ method: 'GET', url: '/portfolios/nope/valuation', headers: apiKey() })
  t.equal(unknown.statusCode, 404)
  assertErrorBody(t, unknown.json(), 404, '/portfolios/nope/valuation')
  t.equal((unknown.json() as { code: string }).code, 'NOT_FOUND')
  const anonymous = await app.inject({ method: 'GET', url: `/portfolios/${id}/valuation` })
  t.equal(anonymous.statusCode, 401)
  t.equal((anonymous.json() as { code: string }).code, 'API_KEY_INVALID')
  // A HEAD would open a stream whose body is never sent: the stream answers GET only.
  const head = await app.inject({ method: 'HEAD', url: `/portfolios/${id}/valuation/stream`, headers: apiKey() })
  t.equal(head.statusCode, 404, 'no HEAD on the stream')
})

t.test('the stream: the valuation at once, then each change of an asset or the portfolio, deleted at the end',
  async t => {
    const brapi = await startFakeBrapi(t)
    brapi.prices.set('PETR4', 40)
    const app = await buildTestApp(t, brapiConfig(brapi, { VALUATION_MIN_INTERVAL_MS: '0' }))
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const { id, assetIds } = await portfolioWith(app, [{ symbol: 'PETR4', quantity: 10, price: 30 }])
    const stream = await openEventStream(t, `${base}/portfolios/${id}/valuation/stream`, apiKey())
    t.equal(stream.status, 200)
    t.match(stream.headers.get('content-type'), /^text\/event-stream/)
    t.equal(stream.headers.get('cache-control'), 'no-store')
    const [first] = await stream.next(1)
    t.match(first, { id: '1', event: 'valuation' })
    t.match(JSON.parse(first?.data ?? ''), { portfolioId: id, bookValue: 300, marketValue: 400, result: 100 })

    const assetUrl = `/portfolio-assets/${assetIds[0] ?? ''}`
    await app.inject({ method: 'PATCH', url: assetUrl, headers: apiKey(), payload: { quantity: 20 } })
    const second = (await stream.next(2))[1]
    t.match(second, { id: '2', event: 'valuation' })
    t.match(JSON.parse(second?.data ?? ''), { bookValue: 600, marketValue: 800 })

    // A change that changes no value (a rename) sends nothing; the next real change does.
    await app.inject({ method: 'PATCH', url: `/portfolios/${id}`, headers: apiKey(), payload: { name: 'Renamed' } })
    await app.inject({ method: 'DELETE', url: assetUrl, headers: apiKey() })
    const third = (await stream.next(3))[2]
    t.match(JSON.parse(third?.data ?? ''), { bookValue: 0, marketValue: 0, unquotedSymbols: [] })

    await app.inject({ method: 'DELETE', url: `/portfolios/${id}`, headers: apiKey() })
    const last = (await stream.next(4))[3]
    t.match(last, { id: '4', event: 'deleted' })
    t.same(JSON.parse(last?.data ?? ''), { portfolioId: id })
    await stream.ended
    t.equal(stream.events.length, 4, 'nothing after deleted: the server ended the stream')
    t.same(app.domain.liveValuations.watched, { portfolios: 0, symbols: 0 })
  })
