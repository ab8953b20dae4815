import Big from 'big.js'
import t from 'tap'
import { apiKey, buildDataApp, buildTestApp, forEachEngine, tymon } from '../../helper.js'
import { DEMO_PORTFOLIOS } from '../../../src/store/demo-data.js'
import { OFFLINE_EVENT_SYMBOLS } from '../../../src/quotes/offline-events.js'

t.test('GET /provider-config reports the computed hashes without credentials', async t => {
  const app = await buildTestApp(t)
  const res = await app.inject({ method: 'GET', url: '/provider-config' })
  t.equal(res.statusCode, 200)
  t.same(res.json(), {
    userProviderHash: tymon.userProviderHash,
    clientProviderHash: tymon.clientProviderHash,
    autoCalculated: true,
    models: { user: 'App\\Models\\User', client: 'App\\Models\\User\\Client' }
  })
})

t.test('GET /provider-config with explicit hashes and models', async t => {
  const app = await buildTestApp(t, { JWT_USER_MODEL: 'App\\User', JWT_CLIENT_PROVIDER_HASH: 'a'.repeat(40) })
  const res = await app.inject({ method: 'GET', url: '/provider-config' })
  t.same(res.json(), {
    userProviderHash: '87e0af1ef9fd15812fdec97153a14e0b047546aa',
    clientProviderHash: 'a'.repeat(40),
    autoCalculated: false,
    models: { user: 'App\\User', client: 'App\\Models\\User\\Client' }
  })
})

forEachEngine(t, 'GET /stats aggregates the store', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const empty = await app.inject({ method: 'GET', url: '/stats', headers: apiKey() })
  t.equal(empty.statusCode, 200)
  t.match(empty.json(), { totalPortfolios: 0, totalAssets: 0, totalValue: 0, activeUsers: 0, lastUpdate: String })

  const ids: string[] = []
  for (const userId of ['ana', 'ana', 'bia']) {
    ids.push((await app.inject({
      method: 'POST',
      url: '/portfolios',
      headers: apiKey(),
      payload: { name: 'P', userId }
    })).json().id)
  }
  for (const [portfolioId, quantity, price] of [[ids[0], 2, 10], [ids[1], 1, 5.5], [ids[2], 4, 0.25]] as const) {
    await app.inject({
      method: 'POST',
      url: '/portfolio-assets',
      headers: apiKey(),
      payload: { name: 'A', symbol: 'A', type: 'FUND', quantity, price, portfolioId }
    })
  }
  const stats = await app.inject({ method: 'GET', url: '/stats', headers: apiKey() })
  t.match(stats.json(), { totalPortfolios: 3, totalAssets: 3, totalValue: 26.5, activeUsers: 2 })
  t.equal((await app.inject({ method: 'GET', url: '/stats' })).statusCode, 401)
})

forEachEngine(t, 'POST /reset restores the demo data (development only)', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  await app.inject({ method: 'POST', url: '/portfolios', headers: apiKey(), payload: { name: 'Mine', userId: 'x' } })
  const res = await app.inject({ method: 'POST', url: '/reset', headers: apiKey() })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { message: 'Dados resetados com sucesso' })
  const portfolios = (await app.inject({ method: 'GET', url: '/portfolios', headers: apiKey() })).json()
  t.same(portfolios.map((p: { name: string }) => p.name).sort(), DEMO_PORTFOLIOS.map(p => p.name).sort())
  // Each asset's value rounded to cents, summed exactly (docs/api.md#money): quantity × its own price, else
  // × the average price of its buys — the demo's sales all come after the buys they sell from, and a sale
  // leaves the average price as it is. The symbols with the offline provider's corporate events hold what the
  // events left, at the average price (recomputed in test/modules/portfolio-assets/quotes-dashboard.test.ts).
  const listed = (await app.inject({ method: 'GET', url: '/portfolio-assets', headers: apiKey() })).json()
  const eventful = (listed as Array<{ symbol: string, totalValue: number }>)
    .filter(asset => OFFLINE_EVENT_SYMBOLS.has(asset.symbol))
  t.same(eventful.map(asset => asset.symbol).sort(), ['BBAS3', 'HGLG11', 'ITUB4'], 'each symbol with events once')
  const withEvents = new Map(eventful.map(asset => [asset.symbol, asset.totalValue]))
  const expected = DEMO_PORTFOLIOS.flatMap(p => p.assets)
    .reduce((sum, a) => {
      const valued = withEvents.get(a.symbol)
      if (valued !== undefined) return sum.plus(valued)
      const bought = a.lots.reduce((q, lot) => q.plus(lot.quantity), new Big(0))
      const sold = (a.sales ?? []).reduce((q, sale) => q.plus(sale.quantity), new Big(0))
      const cost = a.lots.reduce((c, lot) => c.plus(new Big(lot.quantity).times(lot.price)), new Big(0))
      const price = a.price ?? cost.div(bought).round(8, Big.roundHalfUp)
      return sum.plus(bought.minus(sold).times(price).round(2, Big.roundHalfUp))
    }, new Big(0))
    .toNumber()
  const stats = (await app.inject({ method: 'GET', url: '/stats', headers: apiKey() })).json()
  t.equal(stats.totalAssets, DEMO_PORTFOLIOS.flatMap(p => p.assets).length)
  t.equal(stats.totalValue, expected, 'the total is the exact sum of the demo assets')
  t.equal(stats.activeUsers, 2)
  t.equal((await app.inject({ method: 'POST', url: '/reset' })).statusCode, 401)

  const types = new Set(DEMO_PORTFOLIOS.flatMap(p => p.assets.map(a => a.type)))
  t.same([...types].sort(), ['BOND', 'COMMODITY', 'CRYPTO', 'FUND', 'STOCK'], 'the demo has an asset of every type')
})

t.test('POST /reset does not exist in production', async t => {
  const app = await buildTestApp(t, { NODE_ENV: 'production', JWT_SECRET: tymon.secret })
  t.equal((await app.inject({ method: 'POST', url: '/reset', headers: apiKey() })).statusCode, 404)
})
