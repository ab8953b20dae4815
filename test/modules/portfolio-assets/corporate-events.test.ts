import { mock } from 'node:test'
import t, { type Test } from 'tap'
import type { App } from '../../../src/app.js'
import { apiKey, buildDataApp, forEachEngine, type Engine } from '../../helper.js'
import { startFakeBrapi, type FakeBrapi, type FakeDividends } from '../../fixtures/fake-brapi.js'
import { portfolioWith } from '../../fixtures/portfolios.js'
import { graphql, rest } from '../../domain/interfaces.js'

/*
 * Corporate events through the API, as brapi gives them (docs/api.md#corporate-events): the worked example of the
 * docs, the refresh that applies an event without any write, a provider that fails, the 422 rules.
 */

const NOW = '2026-11-20T15:00:00.000Z'
const DAY_MS = 86_400_000

/** docs/api.md's worked example at brapi: a split, a dividend at its adjusted rate, a bonus issue, a JCP. */
const EXAMPLE: FakeDividends = {
  stock: [
    {
      label: 'DESDOBRAMENTO', factor: 2, completeFactor: '2 para 1', lastDatePrior: '2026-03-13', exDate: '2026-03-16'
    },
    { label: 'Bonificação', factor: 10, completeFactor: '', lastDatePrior: '2026-06-12', exDate: '2026-06-15' }
  ],
  cash: [
    {
      label: 'DIVIDENDO', rate: 0.45454545, lastDatePrior: '2026-04-15', exDate: '2026-04-16', paymentDate: '2026-05-20'
    },
    {
      label: 'JCP',
      rate: 0.3125,
      rawRate: 0.3125,
      lastDatePrior: '2026-09-30',
      exDate: '2026-10-01',
      paymentDate: '2026-12-30'
    }
  ]
}

/** The app on a fake brapi, the clock at `NOW` (moved by `advance`). */
interface EventsApp {
  app: App
  brapi: FakeBrapi
  advance: (days: number) => void
}

async function eventsApp (t: Test, engine: Engine = 'sqlite'): Promise<EventsApp> {
  mock.timers.enable({ apis: ['Date'], now: Date.parse(NOW) })
  t.teardown(() => { mock.timers.reset() })
  const brapi = await startFakeBrapi(t)
  brapi.prices.set('^BVSP', 130_000)
  const app = await buildDataApp(t, engine, {
    QUOTES_PROVIDER: 'brapi', BRAPI_URL: brapi.url, BRAPI_TOKEN: 'brapi-token', BRAPI_TIMEOUT_MS: '2000'
  })
  return { app, brapi, advance: days => { mock.timers.tick(days * DAY_MS) } }
}

const get = async (app: App, url: string): Promise<any> => (await rest(app, 'GET', url, apiKey())).body

forEachEngine(t, 'the worked example of docs/api.md#corporate-events: a split, a dividend, a bonus issue, a JCP',
  async (t, engine) => {
    const { app, brapi } = await eventsApp(t, engine)
    brapi.prices.set('ABCD3', 16)
    brapi.dividends.set('ABCD3', EXAMPLE)
    const { id, assetIds: [assetId] } = await portfolioWith(app, [
      { symbol: 'ABCD3', quantity: 100, price: 30, date: '2026-01-12' }
    ])

    const asset = await get(app, `/portfolio-assets/${String(assetId)}`)
    t.match(asset, { quantity: 220, price: 13.63636364, totalValue: 3000, eventsUnapplied: false, eventsAsOf: NOW },
      'the first write asked for the events, and counted them')
    t.equal((await get(app, `/portfolios/${id}`)).totalValue, 3000)
    t.equal((await get(app, `/portfolios/${id}/valuation`)).marketValue, 220 * 16, 'the valuation, at brapi\'s price')

    const events = await get(app, `/portfolio-assets/${String(assetId)}/events`)
    t.same(events, [
      {
        type: 'SPLIT',
        dataCom: '2026-03-13',
        exDate: '2026-03-16',
        paymentDate: null,
        ratio: 2,
        quantityBefore: 100,
        quantityAfter: 200
      },
      {
        type: 'DIVIDEND',
        dataCom: '2026-04-15',
        exDate: '2026-04-16',
        paymentDate: '2026-05-20',
        quantityBefore: 200,
        rate: 0.5,
        gross: 100,
        withheld: 0,
        net: 100,
        status: 'paid'
      },
      {
        type: 'BONUS',
        dataCom: '2026-06-12',
        exDate: '2026-06-15',
        paymentDate: null,
        ratio: 1.1,
        quantityBefore: 200,
        quantityAfter: 220
      },
      {
        type: 'JCP',
        dataCom: '2026-09-30',
        exDate: '2026-10-01',
        paymentDate: '2026-12-30',
        quantityBefore: 220,
        rate: 0.3125,
        gross: 68.75,
        withheld: 10.31,
        net: 58.44,
        status: 'announced'
      }
    ])

    const dashboard = await get(app, `/portfolio-assets/${String(assetId)}/dashboard`)
    t.match(dashboard.basicInfo, {
      quantity: 220,
      averagePrice: 13.63636364,
      investedValue: 3000,
      grossValue: 3520,
      result: 520,
      income: 100,
      incomeAnnounced: 58.44
    })
    t.same(dashboard.events, events, 'the dashboard\'s events are the asset\'s')
    t.same(dashboard.transactions.map((tx: { type: string }) => tx.type), ['BUY'], 'transactions keep BUY and SELL')
    const quantities = Object.fromEntries(dashboard.monthlyHistory
      .map((month: { month: string, quantity: number }) => [month.month, month.quantity]))
    t.match(quantities, { 'Fev.2026': 100, 'Mar.2026': 200, 'Mai.2026': 200, 'Jun.2026': 220, 'Nov.2026': 220 },
      'each month what was held at its end')

    const income = await get(app, `/portfolios/${id}/income?year=2026`)
    t.same(income.total, { gross: 168.75, withheld: 10.31, net: 158.44 })
    t.equal(income.months.length, 12)
    t.same(income.months[4], { month: '2026-05', gross: 100, withheld: 0, net: 100, paid: 100, announced: 0 })
    t.same(income.months[11],
      { month: '2026-12', gross: 68.75, withheld: 10.31, net: 58.44, paid: 0, announced: 58.44 })
    t.same(income.bySymbol, [{ symbol: 'ABCD3', gross: 168.75, withheld: 10.31, net: 158.44 }])
    t.same(await get(app, `/portfolios/${id}/income`), income, 'this year by default')
    const lastYear = await get(app, `/portfolios/${id}/income?year=2025`)
    t.same([lastYear.total, lastYear.bySymbol], [{ gross: 0, withheld: 0, net: 0 }, []])

    const twins = await graphql(app, 'portfolio', 'query ($id: ID!) { portfolio(id: $id) { ' +
      'income(year: 2026) { portfolioId currency year total { gross withheld net } ' +
      'months { month gross withheld net paid announced } bySymbol { symbol gross withheld net } } ' +
      'assets { quantity price eventsUnapplied eventsAsOf events { type dataCom exDate paymentDate ratio ' +
      'quantityBefore quantityAfter rate gross withheld net status } } } }', { id }, apiKey())
    t.same(twins.errors, [])
    t.same(twins.value.income, income, 'Portfolio.income(year) answers what REST does')
    const [twin] = twins.value.assets
    // GraphQL answers null for what REST leaves out.
    const absent = {
      ratio: null, quantityAfter: null, rate: null, gross: null, withheld: null, net: null, status: null
    }
    t.same(twin.events, events.map((event: object) => ({ ...absent, ...event })),
      'PortfolioAsset.events answers what REST does')
    t.match(twin, { quantity: 220, price: 13.63636364, eventsUnapplied: false, eventsAsOf: NOW })
    t.equal((await rest(app, 'GET', '/portfolio-assets/nope/events', apiKey())).status, 404)
    t.equal((await rest(app, 'GET', `/portfolios/${id}/income?year=1800`, apiKey())).status, 400)
  })

t.test('an event brapi announces is applied by the refresh on its date, without a write; asked once a day',
  async t => {
    const { app, brapi, advance } = await eventsApp(t)
    brapi.prices.set('WXYZ3', 40)
    const { id, assetIds: [assetId] } = await portfolioWith(app, [
      { symbol: 'WXYZ3', quantity: 100, price: 30, date: '2026-01-12' }
    ])
    const url = `/portfolio-assets/${String(assetId)}`
    const before = await app.inject({ method: 'GET', url, headers: apiKey() })
    t.match(before.json(), { quantity: 100, price: 30, eventsAsOf: NOW })
    // Tomorrow's ex-date: a 2-for-1 split whose data com is today.
    brapi.dividends.set('WXYZ3', {
      stock: [{
        label: 'DESDOBRAMENTO',
        factor: 2,
        completeFactor: '2 para 1',
        lastDatePrior: '2026-11-20',
        exDate: '2026-11-23'
      }],
      cash: []
    })
    const asked = brapi.eventRequests().length
    advance(0.25)
    await app.domain.eventsRefresh.refreshNow()
    await get(app, `${url}/events`)
    await get(app, `${url}/dashboard`)
    await get(app, `/portfolios/${id}/income`)
    t.equal(brapi.eventRequests().length, asked, 'read today already: six hours later, brapi is not asked again')

    advance(2.75)
    const run = await app.domain.eventsRefresh.refreshNow()
    t.match(run, { symbols: 1, recomputed: 1 })
    t.equal(brapi.eventRequests().length, asked + 1, 'a new day: asked once')
    const after = await app.inject({ method: 'GET', url, headers: apiKey() })
    t.match(after.json(), { quantity: 200, price: 15, totalValue: 3000, eventsAsOf: new Date().toISOString() })
    t.not(after.headers.etag, before.headers.etag, 'the asset\'s ETag moved')
    t.equal((await get(app, `/portfolios/${id}/valuation`)).marketValue, 200 * 40)
    t.match(await app.domain.eventsRefresh.refreshNow(), { recomputed: 0 }, 'computed with them: nothing again')

    // A correction at brapi (3 for 1 after all) corrects every figure at the next day's read.
    brapi.dividends.set('WXYZ3', {
      stock: [{
        label: 'DESDOBRAMENTO',
        factor: 3,
        completeFactor: '3 para 1',
        lastDatePrior: '2026-11-20',
        exDate: '2026-11-23'
      }],
      cash: []
    })
    advance(1)
    await app.domain.eventsRefresh.refreshNow()
    t.match(await get(app, url), { quantity: 300, price: 10 })
  })

t.test('brapi failing: the events last known are kept, and the asset says when they were read', async t => {
  const { app, brapi, advance } = await eventsApp(t)
  brapi.prices.set('ABCD3', 16)
  brapi.dividends.set('ABCD3', EXAMPLE)
  const { assetIds: [assetId] } = await portfolioWith(app, [
    { symbol: 'ABCD3', quantity: 100, price: 30, date: '2026-01-12' }
  ])
  const url = `/portfolio-assets/${String(assetId)}`
  const events = await get(app, `${url}/events`)
  advance(2)
  brapi.refusal = { status: 401, message: 'Token inválido' }
  await t.resolves(app.domain.eventsRefresh.refreshNow(), 'the refresh runs on the events last known')
  t.match(await get(app, url), { quantity: 220, eventsAsOf: NOW }, 'read two days ago, and said so')
  t.same(await get(app, `${url}/events`), events)
  const sale = await rest(app, 'POST', `${url}/transactions`, apiKey(),
    { type: 'SELL', date: '2026-11-21', quantity: 20, price: 16 })
  t.equal(sale.status, 201, 'a write counts the events last known')
  t.match(await get(app, url), { quantity: 200, eventsAsOf: NOW })

  // A symbol whose events were never read on this instance: the write counts none, the refresh applies them later.
  brapi.prices.set('EFGH3', 10)
  brapi.dividends.set('EFGH3', EXAMPLE)
  const { assetIds: [fresh] } = await portfolioWith(app, [
    { symbol: 'EFGH3', quantity: 100, price: 30, date: '2026-01-12' }
  ])
  t.match(await get(app, `/portfolio-assets/${String(fresh)}`), { quantity: 100, eventsAsOf: null })
  brapi.refusal = undefined
  await app.domain.eventsRefresh.refreshNow()
  t.match(await get(app, `/portfolio-assets/${String(fresh)}`), { quantity: 220, eventsAsOf: new Date().toISOString() })
})

t.test('the 422 rules count the quantity the events left at the sale\'s date', async t => {
  const { app, brapi } = await eventsApp(t)
  brapi.prices.set('GRUP3', 5)
  brapi.dividends.set('GRUP3', {
    stock: [
      { label: 'GRUPAMENTO', factor: 0.1, completeFactor: '1 para 10', lastDatePrior: '2026-03-13', exDate: null },
      { label: 'BONIFICACAO', factor: 0.5, completeFactor: '', lastDatePrior: '2026-06-12', exDate: '2026-06-15' }
    ],
    cash: []
  })
  const { assetIds: [assetId] } = await portfolioWith(app, [
    { symbol: 'GRUP3', quantity: 105, price: 2, date: '2026-01-12' }
  ])
  const url = `/portfolio-assets/${String(assetId)}`
  t.match(await get(app, url), { quantity: 15.75, price: 13.33333333 }, '105 ÷ 10 = 10.5, + 50 %: a fraction kept')
  const beyond = await rest(app, 'POST', `${url}/transactions`, apiKey(),
    { type: 'SELL', date: '2026-04-01', quantity: 11, price: 20 })
  t.same([beyond.status, beyond.code], [422, 'INSUFFICIENT_QUANTITY'], 'more than the grouping left then')
  const fraction = await rest(app, 'POST', `${url}/transactions`, apiKey(),
    { type: 'SELL', date: '2026-06-20', quantity: 0.75, price: 21 })
  t.equal(fraction.status, 201, 'the auctioned fraction, of shares the bonus issue gave')
  const bonus = await rest(app, 'POST', `${url}/transactions`, apiKey(),
    { type: 'SELL', date: '2026-07-01', quantity: 15, price: 22 })
  t.equal(bonus.status, 201)
  t.match(await get(app, url), { quantity: 0, price: 0 })
  const undo = await rest(app, 'DELETE', `${url}/transactions/${String((await get(app, `${url}/transactions`))[0].id)}`,
    apiKey())
  t.same([undo.status, undo.code], [422, 'INSUFFICIENT_QUANTITY'], 'the buy the sales need cannot be undone')
})

t.test('an event the service cannot apply leaves the asset as its trades make it, and says so', async t => {
  const { app, brapi } = await eventsApp(t)
  brapi.prices.set('ODDS3', 5)
  brapi.dividends.set('ODDS3', {
    stock: [{ label: 'DESDOBRAMENTO', factor: 5000, completeFactor: '5000 para 1', lastDatePrior: '2026-03-13' }],
    cash: []
  })
  const { assetIds: [assetId] } = await portfolioWith(app, [
    { symbol: 'ODDS3', quantity: 10, price: 2, date: '2026-01-12' }
  ])
  t.match(await get(app, `/portfolio-assets/${String(assetId)}`), { quantity: 10, eventsUnapplied: true })
  t.same(await get(app, `/portfolio-assets/${String(assetId)}/events`), [])
})

t.test('brapi\'s days as it writes them: a date-time or DD/MM/YYYY is the day written, a day the calendar has not none',
  async t => {
    const { app, brapi } = await eventsApp(t)
    brapi.prices.set('DAYS3', 16)
    brapi.dividends.set('DAYS3', {
      stock: [{
        label: 'DESDOBRAMENTO',
        factor: 2,
        completeFactor: '2 para 1',
        lastDatePrior: '13/03/2026',
        exDate: '2026-03-16T00:00:00.000Z'
      }],
      // February has no 30th (Date reads it as March's 1st): the dividend has no data com, and is not applied.
      cash: [{ label: 'DIVIDENDO', rate: 0.5, lastDatePrior: '30/02/2026', exDate: null, paymentDate: '2026-05-20' }]
    })
    const { assetIds: [assetId] } = await portfolioWith(app, [
      { symbol: 'DAYS3', quantity: 100, price: 30, date: '2026-01-12' }
    ])
    t.match(await get(app, `/portfolio-assets/${String(assetId)}`), { quantity: 200, eventsUnapplied: true })
    const events = await get(app, `/portfolio-assets/${String(assetId)}/events`)
    t.match(events, [{ type: 'SPLIT', dataCom: '2026-03-13', exDate: '2026-03-16', quantityAfter: 200 }])
    t.equal(events.length, 1, 'the dividend without a data com counted nowhere')
  })

t.test('a FII, refused by the dividends of stocks, is read from its quote\'s dividendsData; rawRate as paid',
  async t => {
    const { app, brapi } = await eventsApp(t)
    brapi.prices.set('HGLG11', 160)
    brapi.funds.add('HGLG11')
    brapi.dividends.set('HGLG11', {
      stock: [],
      cash: [{ label: 'Rendimento', rate: 1, rawRate: 1.1, lastDatePrior: '2026-10-30', paymentDate: '2026-11-13' }]
    })
    const { id } = await portfolioWith(app, [{ symbol: 'HGLG11', quantity: 40, price: 150, date: '2026-01-12' }])
    const asked = brapi.eventRequests()
      .map(request => [request.path, request.query.get('dividends'), request.query.get('includeRaw')])
    t.same(asked, [
      ['/api/v2/stocks/dividends', null, 'true'],
      ['/api/v2/stocks/dividends', null, null],
      ['/api/quote/HGLG11', 'true', 'true']
    ], 'refused with the unadjusted rates and without them (a FII, not the plan), then its quote\'s')
    const income = await get(app, `/portfolios/${id}/income`)
    t.same(income.months[10], { month: '2026-11', gross: 44, withheld: 0, net: 44, paid: 44, announced: 0 })
  })

/** Weekdays from `first` to `last`, `YYYY-MM-DD`. */
function weekdaysBetween (first: string, last: string): string[] {
  const days: string[] = []
  for (let time = Date.parse(first); time <= Date.parse(last); time += DAY_MS) {
    const day = new Date(time)
    if (day.getUTCDay() !== 0 && day.getUTCDay() !== 6) days.push(day.toISOString().slice(0, 10))
  }
  return days
}

for (const raw of [false, true]) {
  t.test(`a split is never a gain or a loss over a range; a dividend is income, in the return (${raw
    ? 'brapi\'s rawClose'
    : 'closes restated by brapi, brought back'})`, async t => {
    const { app, brapi } = await eventsApp(t)
    const days = weekdaysBetween('2026-10-26', '2026-11-20')
    brapi.dailyHistories.set('^BVSP', days.map(day => [day, 120_000]))
    // brapi's closes restated for the split (equal to its adjusted ones): 15 all along, for 30 traded before it.
    brapi.dailyHistories.set('SPLT3', days.map(day => [day, 15]))
    if (raw) brapi.rawCloses.set('SPLT3', new Map(days.map(day => [day, day < '2026-11-11' ? 30 : 15])))
    brapi.prices.set('SPLT3', 15)
    brapi.dividends.set('SPLT3', {
      stock: [{
        label: 'DESDOBRAMENTO', factor: 2, completeFactor: '2 para 1', lastDatePrior: '2026-11-10', exDate: '2026-11-11'
      }],
      cash: [{
        label: 'DIVIDENDO',
        rate: 0.5,
        rawRate: 0.5,
        lastDatePrior: '2026-11-13',
        exDate: '2026-11-16',
        paymentDate: '2026-11-18'
      }]
    })
    const { id } = await portfolioWith(app, [{ symbol: 'SPLT3', quantity: 100, price: 30, date: '2026-11-02' }])
    const answer = await get(app, `/portfolios/${id}/performance?range=1m`)
    const held = answer.points.filter((point: { date: string }) => point.date >= '2026-11-02')
    t.ok(held.length === 15 && held.every((point: { value: number }) => point.value === 3000),
      'each day 100 × 30 or 200 × 15: no split gain')
    t.same(held.filter((point: { estimated: boolean }) => point.estimated).map((point: { date: string }) => point.date),
      raw ? [] : held.map((point: { date: string }) => point.date).filter((day: string) => day < '2026-11-16'),
      raw ? 'rawClose: each day\'s traded price' : 'before the dividend\'s ex-date, a close may carry its adjustment')
    t.match(answer, { income: 100, result: 100, twr: 3.33, value: 3000 }, '200 × 0.50 paid on 18 November')
  })
}

t.test('a plan that refuses includeRaw is asked without it from then on; refreshes asked at once share one run after',
  async t => {
    const { app, brapi } = await eventsApp(t)
    brapi.rawRefusal = 403
    brapi.prices.set('ABCD3', 16)
    brapi.dividends.set('ABCD3', EXAMPLE)
    const { assetIds: [assetId] } = await portfolioWith(app, [
      { symbol: 'ABCD3', quantity: 100, price: 30, date: '2026-01-12' }
    ])
    t.same(brapi.eventRequests().map(request => request.query.get('includeRaw')), ['true', null],
      'refused with it, answered without it: the plan\'s refusal')
    const events = await get(app, `/portfolio-assets/${String(assetId)}/events`)
    t.match(events.find((event: { type: string }) => event.type === 'JCP'), { rate: 0.3125, gross: 68.75 },
      'without rawRate, the JCP\'s rate (no stock event after it)')
    await get(app, `/portfolios/${(await get(app, `/portfolio-assets/${String(assetId)}`)).portfolioId as string}` +
      '/performance?range=1m')
    t.same(brapi.requestsTo('/api/quote/ABCD3').map(request => request.query.get('includeRaw')), [null],
      'the daily history asked without it')

    const runs = await Promise.all([1, 2, 3].map(async () => await app.domain.eventsRefresh.refreshNow()))
    t.same(runs.map(run => run.symbols), [1, 1, 1])
    t.equal(runs[1], runs[2], 'those asked while one ran share the one after it')
  })
