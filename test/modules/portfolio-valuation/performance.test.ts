import { readFileSync } from 'node:fs'
import { mock } from 'node:test'
import t, { type Test } from 'tap'
import type { App } from '../../../src/app.js'
import { apiKey, assertErrorBody, buildTestApp, TEXTS } from '../../helper.js'
import { startFakeBrapi, type FakeBrapi } from '../../fixtures/fake-brapi.js'
import { EXAMPLE_NOW, examplePortfolio, loadExampleMarket, weekdays } from '../../fixtures/performance-example.js'
import { portfolioWith } from '../../fixtures/portfolios.js'
import { sendJson } from '../../fixtures/fake-server.js'
import { Rational } from '../../fixtures/rational.js'
import { graphql, rest } from '../../domain/interfaces.js'

/** The app on a fake brapi holding the worked example's market, the clock fixed at `now`. */
async function exampleApp (t: Test, now = EXAMPLE_NOW): Promise<{ app: App, brapi: FakeBrapi }> {
  mock.timers.enable({ apis: ['Date'], now: Date.parse(now) })
  t.teardown(() => { mock.timers.reset() })
  const brapi = await startFakeBrapi(t)
  loadExampleMarket(brapi)
  const app = await buildTestApp(t, {
    QUOTES_PROVIDER: 'brapi', BRAPI_URL: brapi.url, BRAPI_TOKEN: 'brapi-token', BRAPI_TIMEOUT_MS: '2000'
  })
  return { app, brapi }
}

/** docs/api.md's answer of the worked example, between the `performance-example` markers. */
function documentedAnswer (): Record<string, unknown> {
  const text = readFileSync(new URL('../../../docs/api.md', import.meta.url), 'utf8')
  const block = /<!-- performance-example-start -->\s*```json\n([\s\S]*?)\n```\s*<!-- performance-example-end -->/
    .exec(text)?.[1]
  if (block === undefined) throw new Error('docs/api.md has no performance-example block')
  return JSON.parse(block) as Record<string, unknown>
}

t.test('the worked example of docs/api.md#performance, recomputed by hand: a deposit mid-range, a sale with a fee, ' +
  'a dollar asset converted with each day\'s rate (Friday\'s not yet published: estimated)', async t => {
  const { app } = await exampleApp(t)
  const { id } = await examplePortfolio(app)
  const res = await app.inject({ method: 'GET', url: `/portfolios/${id}/performance?range=1m`, headers: apiKey() })
  t.equal(res.statusCode, 200)
  const answer = res.json()

  // What was held at each close, in reais: quantity × close (AAPL's dollars × that day's PTAX).
  const petr4 = (quantity: number, close: number): Rational => Rational.of(quantity).times(close)
  const aapl = (dollars: number, rate: number): Rational => Rational.of(2).times(dollars).times(rate)
  const value = {
    16: Rational.of(0), // the trading day before the first buy: the range starts there
    17: petr4(100, 31),
    18: petr4(100, 32).plus(aapl(200, 5.4)),
    19: petr4(60, 33).plus(aapl(205, 5.5)),
    20: petr4(60, 34).plus(aapl(210, 5.5)) // Friday's PTAX not yet given: Thursday's, estimated
  }
  const invested = { 16: 0, 17: 3000, 18: 5200, 19: 4000, 20: 4000 } // 40 sold at the average price of 30
  const bought = { 17: Rational.of(100).times(30), 18: Rational.of(2).times(1100) }
  const sold = Rational.of(40).times(33.5).minus(4.5)
  // Each day's return: (close value + money taken out that day) / (previous close + money put in that day).
  const days = [
    value['17'].div(value['16'].plus(bought[17])),
    value['18'].div(value['17'].plus(bought[18])),
    value['19'].plus(sold).div(value['18']),
    value['20'].div(value['19'])
  ]
  const growth = days.map((_, index) => days.slice(0, index + 1).reduce((a, b) => a.times(b)))
  const ibov = [120_000, 121_000, 123_000, 124_500, 126_000]
  const ibovChange = ibov.map(close => Rational.of(close).minus(ibov[0] ?? 0).times(100).div(ibov[0] ?? 1).rounded())
  const dates = ['2026-11-16', '2026-11-17', '2026-11-18', '2026-11-19', '2026-11-20']
  const points = dates.map((date, index) => ({
    date,
    invested: Object.values(invested)[index],
    value: (Object.values(value)[index] as Rational).rounded(),
    twr: index === 0 ? 0 : (growth[index - 1] as Rational).percentOfGrowth(),
    ibov: ibovChange[index],
    estimated: date === '2026-11-20'
  }))
  // The SELIC at 15 % a year: four business days of (1.15)^(1/252) rounded to 8 decimals, 1.00055476.
  let selic = Rational.of(1)
  for (let day = 0; day < 4; day++) selic = selic.times('1.00055476')
  const result = value['20'].minus(value['16']).minus(bought[17]).minus(bought[18]).plus(sold)
  const expected = {
    portfolioId: id,
    currency: 'BRL',
    range: '1m',
    from: '2026-11-16',
    to: '2026-11-20',
    points,
    invested: 4000,
    value: value['20'].rounded(),
    income: 0,
    result: result.rounded(),
    twr: (growth[3] as Rational).percentOfGrowth(),
    // IPCA: no month ended within the dates (November's is measured once it ends).
    benchmarks: { ibov: ibovChange[4], selic: selic.percentOfGrowth(), ipca: null },
    estimated: true,
    quoteSource: 'brapi.dev'
  }
  t.same(answer, expected, 'the hand computation')
  t.same(answer, { ...documentedAnswer(), portfolioId: id }, 'the answer docs/api.md shows')
  t.same({ result: answer.result, twr: answer.twr, value: answer.value }, { result: 485.5, twr: 11.56, value: 4350 })
})

t.test('GraphQL\'s Portfolio.performance answers what REST does, its range named ONE_MONTH', async t => {
  const { app } = await exampleApp(t)
  const { id } = await examplePortfolio(app)
  const restAnswer = await rest(app, 'GET', `/portfolios/${id}/performance?range=1m`, apiKey())
  const fields = 'portfolioId currency range from to invested value income result twr estimated quoteSource ' +
    'benchmarks { ibov selic ipca } points { date invested value twr ibov estimated }'
  const answer = await graphql(app, 'portfolio',
    `query ($id: ID!) { portfolio(id: $id) { performance(range: ONE_MONTH) { ${fields} } } }`, { id }, apiKey())
  t.same(answer.errors, [])
  t.same(answer.value.performance, { ...restAnswer.body, range: 'ONE_MONTH' })
  const byDefault = await graphql(app, 'portfolio',
    'query ($id: ID!) { portfolio(id: $id) { performance { range from } } }', { id }, apiKey())
  t.same(byDefault.value.performance, { range: 'ONE_YEAR', from: '2026-11-16' }, 'a year by default')
  const nullRange = await graphql(app, 'portfolio',
    'query ($id: ID!) { portfolio(id: $id) { performance(range: null) { range } } }', { id }, apiKey())
  t.same(nullRange.value.performance, { range: 'ONE_YEAR' }, 'null: the default')
  const refused = await graphql(app, 'portfolio',
    'query ($id: ID!) { portfolio(id: $id) { performance { range } } }', { id }, {})
  t.equal(refused.code, 'API_KEY_INVALID')
})

t.test('one history request per symbol for a range, IBOVESPA, SELIC, IPCA and the dollar\'s rates beside; ' +
  'a repeated request is answered from memory', async t => {
  const { app, brapi } = await exampleApp(t)
  const { id } = await examplePortfolio(app)
  const before = brapi.received.length
  const first = await app.inject({ method: 'GET', url: `/portfolios/${id}/performance?range=6m`, headers: apiKey() })
  t.equal(first.statusCode, 200)
  const asked = brapi.received.slice(before)
  const histories = asked.filter(request => request.query.get('interval') === '1d')
  t.same(histories.map(request => request.path).sort(), ['/api/quote/%5EBVSP', '/api/quote/AAPL', '/api/quote/PETR4'],
    'one daily history per symbol and the index')
  t.same(histories.map(request => request.query.get('range')), ['1mo', '1mo', '1mo'],
    'the range covering the start: the day before the first transaction, as 6m begins before it')
  t.equal(brapi.requestsTo('/api/v2/prime-rate').length, 1)
  t.equal(brapi.requestsTo('/api/v2/inflation').length, 1)
  t.equal(brapi.requestsTo('/api/v2/currency/historical').length, 1)
  const seen = brapi.received.length
  const again = await app.inject({ method: 'GET', url: `/portfolios/${id}/performance?range=6m`, headers: apiKey() })
  t.equal(again.body, first.body)
  t.equal(brapi.received.length, seen, 'nothing asked of the provider again')
})

t.test('a transaction of the portfolio, or a change of one of its assets, is answered at once', async t => {
  const { app } = await exampleApp(t)
  const { id, petr4, aapl } = await examplePortfolio(app)
  const url = `/portfolios/${id}/performance?range=1m`
  const read = async (): Promise<{ invested: number, result: number }> =>
    (await app.inject({ method: 'GET', url, headers: apiKey() })).json()
  t.equal((await read()).invested, 4000)
  const sale = await app.inject({
    method: 'POST',
    url: `/portfolio-assets/${petr4}/transactions`,
    headers: apiKey(),
    payload: { type: 'SELL', date: '2026-11-20', quantity: 10, price: 34 }
  })
  t.equal(sale.statusCode, 201)
  t.equal((await read()).invested, 3700, 'the sale of Friday: 10 fewer at 30')
  await app.inject({ method: 'DELETE', url: `/portfolio-assets/${aapl}`, headers: apiKey() })
  t.equal((await read()).invested, 1500, 'without AAPL')
})

t.test('kept until the next close: past 21:00 UTC (B3 has closed), asked again', async t => {
  const { app, brapi } = await exampleApp(t, '2026-11-20T20:30:00.000Z')
  const { id } = await examplePortfolio(app)
  const url = `/portfolios/${id}/performance?range=1m`
  const first = (await app.inject({ method: 'GET', url, headers: apiKey() })).json()
  t.equal(first.to, '2026-11-20', 'today\'s close as brapi gives it so far')
  brapi.dailyHistories.set('PETR4', [...brapi.dailyHistories.get('PETR4') ?? []].map(([day, close]) =>
    [day, day === '2026-11-20' ? 35 : close]))
  mock.timers.setTime(Date.parse('2026-11-20T20:59:00.000Z'))
  t.same((await app.inject({ method: 'GET', url, headers: apiKey() })).json(), first, 'kept before the close')
  mock.timers.setTime(Date.parse('2026-11-20T21:01:00.000Z'))
  const after = (await app.inject({ method: 'GET', url, headers: apiKey() })).json()
  t.equal(after.value, 4410, 'the close: 60 PETR4 at 35, and AAPL')
})

t.test('400 for a range that is not one, 404 for an unknown portfolio, 401 without the key', async t => {
  const { app } = await exampleApp(t)
  const { id } = await examplePortfolio(app)
  const bad = await app.inject({ method: 'GET', url: `/portfolios/${id}/performance?range=2y`, headers: apiKey() })
  t.equal(bad.statusCode, 400)
  t.same(bad.json().message, ['range must be one of the following values: 1m, 3m, 6m, ytd, 1y, 5y, max'])
  const other = await app.inject({ method: 'GET', url: `/portfolios/${id}/performance?period=1y`, headers: apiKey() })
  t.same(other.json().message, ['property period should not exist'])
  const missing = await app.inject({ method: 'GET', url: '/portfolios/nope/performance', headers: apiKey() })
  t.equal(missing.statusCode, 404)
  assertErrorBody(t, missing.json(), 404, '/portfolios/nope/performance')
  const anonymous = await app.inject({ method: 'GET', url: `/portfolios/${id}/performance` })
  t.equal(anonymous.statusCode, 401)
  t.equal(anonymous.json().message, TEXTS.apiKeyInvalid)
})

t.test('a plan that gives three months of history: a year answered with what it gives (the months before ' +
  'estimated, IBOVESPA null), and SELIC and IPCA null on a plan without them, not an error', async t => {
  const { app, brapi } = await exampleApp(t)
  const days = weekdays('2025-06-02', '2026-11-20')
  brapi.dailyHistories.set('PETR4', days.map(day => [day, 30]))
  brapi.dailyHistories.set('^BVSP', days.map(day => [day, 120_000]))
  brapi.maxRange = '3mo'
  brapi.primeRates = undefined
  brapi.inflation = undefined
  const { id } = await portfolioWith(app, [{ symbol: 'PETR4', quantity: 10, price: 25, date: '2025-12-01' }])
  const res = await app.inject({ method: 'GET', url: `/portfolios/${id}/performance?range=1y`, headers: apiKey() })
  t.equal(res.statusCode, 200)
  const answer = res.json()
  t.equal(answer.from, '2025-11-28', 'the trading day before the first buy')
  t.same(answer.benchmarks, { ibov: null, selic: null, ipca: null })
  const served = answer.points.filter((point: { date: string }) => point.date >= '2026-08-20')
  const before = answer.points
    .filter((point: { date: string }) => point.date > '2025-11-28' && point.date < '2026-08-20')
  t.ok(before.length > 30 && before.every((point: { value: number, estimated: boolean }) =>
    point.estimated && point.value === 250), 'before the history: at the average price, estimated')
  t.ok(served.length > 10 && served.every((point: { value: number, estimated: boolean }) =>
    !point.estimated && point.value === 300), 'the months served: market closes')
  t.equal(answer.twr, 20)
  t.ok(answer.estimated)
  t.same(brapi.requestsTo('/api/quote/PETR4').map(request => request.query.get('range')),
    ['2y', '2y', '1y', '1y', '3mo'],
    'the range reaching two weeks before the start, refused (with the unadjusted closes and without them: the ' +
    'plan\'s range, not its unadjusted prices), shorter ones until one is served')
})

t.test('IBOVESPA\'s history failing makes it null, the held symbols\' trading days the calendar', async t => {
  const { app, brapi } = await exampleApp(t)
  const { id } = await examplePortfolio(app)
  brapi.on('^BVSP', (_request, res) => { sendJson(res, 500, { error: true }) })
  const url = `/portfolios/${id}/performance?range=1m`
  const withoutIndex = await app.inject({ method: 'GET', url, headers: apiKey() })
  t.equal(withoutIndex.statusCode, 200)
  t.equal(withoutIndex.json().benchmarks.ibov, null)
  t.same(withoutIndex.json().points.map((point: { date: string }) => point.date),
    ['2026-11-16', '2026-11-17', '2026-11-18', '2026-11-19', '2026-11-20'])
})

t.test('an asset\'s history failing is the provider\'s error, as a dashboard\'s', async t => {
  const { app, brapi } = await exampleApp(t)
  const { id } = await examplePortfolio(app)
  brapi.on('PETR4', (_request, res) => { sendJson(res, 500, { error: true }) })
  const failed = await app.inject({ method: 'GET', url: `/portfolios/${id}/performance?range=3m`, headers: apiKey() })
  t.equal(failed.statusCode, 502)
  t.equal(failed.json().code, 'UPSTREAM_UNAVAILABLE')
})
