import t from 'tap'
import type { App } from '../../../src/app.js'
import { apiKey, assertErrorBody, buildDataApp, forEachEngine } from '../../helper.js'
import { RECORDED_BY_HAND } from '../../fixtures/portfolios.js'

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

async function portfolio (app: App, userId = 'u'): Promise<string> {
  const res = await app.inject({
    method: 'POST',
    url: '/portfolios',
    headers: apiKey(),
    payload: { name: 'P', userId }
  })
  return res.json().id
}

function assetBody (portfolioId: string, overrides: Record<string, unknown> = {}) {
  return { name: 'Petrobras PN', symbol: 'petr4', type: 'STOCK', quantity: 100, price: 37.5, portfolioId, ...overrides }
}

forEachEngine(t, 'POST /portfolio-assets returns the whole asset', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const portfolioId = await portfolio(app)
  const res = await app.inject({
    method: 'POST',
    url: '/portfolio-assets',
    headers: apiKey(),
    payload: { ...assetBody(portfolioId), totalValue: 1, id: 'mine' }
  })
  t.equal(res.statusCode, 201)
  t.match(res.json(), {
    name: 'Petrobras PN',
    symbol: 'PETR4',
    type: 'STOCK',
    quantity: 100,
    price: 37.5,
    totalValue: 3750,
    portfolioId,
    createdAt: ISO_MS,
    updatedAt: ISO_MS
  })
  t.not(res.json().id, 'mine', 'server-set fields cannot be sent')
  const total = await app.inject({ method: 'GET', url: `/portfolios/${portfolioId}/value`, headers: apiKey() })
  t.equal(total.json().totalValue, 3750)
})

forEachEngine(t, 'POST /portfolio-assets for an unknown portfolio is 404 and stores nothing', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const res = await app.inject({
    method: 'POST',
    url: '/portfolio-assets',
    headers: apiKey(),
    payload: assetBody('00000000-0000-4000-8000-000000000000')
  })
  t.equal(res.statusCode, 404)
  t.equal(res.json().message, 'Portfolio não encontrado')
  assertErrorBody(t, res.json(), 404, '/portfolio-assets')
  t.same((await app.inject({ method: 'GET', url: '/portfolio-assets', headers: apiKey() })).json(), [])
})

forEachEngine(t, 'POST /portfolio-assets validation stores nothing', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const portfolioId = await portfolio(app)
  const cases: Array<[Record<string, unknown>, string[]]> = [
    [{ type: 'GOLD' }, ['type must be one of the following values: STOCK, BOND, FUND, CRYPTO, COMMODITY']],
    [{ quantity: 0 }, ['quantity must be greater than 0']],
    [{ quantity: -3 }, ['quantity must be greater than 0']],
    [{ quantity: '10' }, ['quantity must be a number conforming to the specified constraints']],
    [{ price: -0.01 }, ['price must not be less than 0']],
    [{ price: null }, ['price must be a number conforming to the specified constraints']],
    [{ price: 1e13 }, ['price must not be greater than 1000000000000']],
    [{ symbol: '' }, ['symbol should not be empty']],
    [{ name: 'n'.repeat(201) }, ['name must be shorter than or equal to 200 characters']],
    [{ portfolioId: 5 }, ['portfolioId must be a string']]
  ]
  for (const [overrides, messages] of cases) {
    const res = await app.inject({
      method: 'POST',
      url: '/portfolio-assets',
      headers: apiKey(),
      payload: assetBody(portfolioId, overrides)
    })
    t.equal(res.statusCode, 400, JSON.stringify(overrides))
    t.same(res.json().message, messages, JSON.stringify(overrides))
  }
  const missing = await app.inject({ method: 'POST', url: '/portfolio-assets', headers: apiKey(), payload: {} })
  t.same(missing.json().message, [
    'name should not be empty', 'name must be a string',
    'symbol should not be empty', 'symbol must be a string',
    'type should not be empty', 'type must be one of the following values: STOCK, BOND, FUND, CRYPTO, COMMODITY',
    'quantity should not be empty', 'quantity must be a number conforming to the specified constraints',
    'price should not be empty', 'price must be a number conforming to the specified constraints',
    'portfolioId should not be empty', 'portfolioId must be a string'
  ])
  const overflow = await app.inject({
    method: 'POST',
    url: '/portfolio-assets',
    headers: { ...apiKey(), 'content-type': 'application/json' },
    payload: `{"name":"x","symbol":"x","type":"STOCK","quantity":1e400,"price":1,"portfolioId":"${portfolioId}"}`
  })
  t.equal(overflow.statusCode, 400, 'a number that overflows to Infinity is refused')
  t.same((await app.inject({ method: 'GET', url: '/portfolio-assets', headers: apiKey() })).json(), [])
})

forEachEngine(t, 'GET /portfolio-assets lists, filters by portfolio and by type', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const p1 = await portfolio(app)
  const p2 = await portfolio(app)
  const created = []
  const toCreate = [
    [p1, 'STOCK', 'VALE3'], [p1, 'CRYPTO', 'BTC'], [p2, 'STOCK', 'ITUB4'], [p2, 'BOND', 'IPCA35']
  ] as const
  for (const [portfolioId, type, symbol] of toCreate) {
    created.push((await app.inject({
      method: 'POST',
      url: '/portfolio-assets',
      headers: apiKey(),
      payload: assetBody(portfolioId, { type, symbol, name: symbol, quantity: 2, price: 3 })
    })).json())
  }
  const all = await app.inject({ method: 'GET', url: '/portfolio-assets', headers: apiKey() })
  t.equal(all.statusCode, 200)
  t.equal(all.json().length, 4)
  t.same(Object.keys(all.json()[0]).sort(), [
    'asOf',
    'dueDate',
    'eventsAsOf',
    'eventsUnapplied',
    'id',
    'investmentId',
    'isin',
    'issuer',
    'name',
    'portfolioId',
    'price',
    'priceSource',
    'quantity',
    'rate',
    'rateType',
    'symbol',
    'totalValue',
    'type'
  ])
  t.match(all.json()[0], RECORDED_BY_HAND, 'recorded here: nothing of an import')
  const inP1 = await app.inject({ method: 'GET', url: `/portfolio-assets?portfolioId=${p1}`, headers: apiKey() })
  t.same(inP1.json().map((a: { symbol: string }) => a.symbol).sort(), ['BTC', 'VALE3'])
  const stocks = await app.inject({ method: 'GET', url: '/portfolio-assets/type/STOCK', headers: apiKey() })
  t.same(stocks.json().map((a: { symbol: string }) => a.symbol).sort(), ['ITUB4', 'VALE3'])
  t.same((await app.inject({ method: 'GET', url: '/portfolio-assets/type/FUND', headers: apiKey() })).json(), [])
  const bad = await app.inject({ method: 'GET', url: '/portfolio-assets/type/stock', headers: apiKey() })
  t.equal(bad.statusCode, 400)
  t.same(bad.json().message, ['type must be one of the following values: STOCK, BOND, FUND, CRYPTO, COMMODITY'])
})

forEachEngine(t, 'PATCH /portfolio-assets/:id changes quantity and price only', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const portfolioId = await portfolio(app)
  const asset = (await app.inject({
    method: 'POST',
    url: '/portfolio-assets',
    headers: apiKey(),
    payload: assetBody(portfolioId)
  })).json()
  const res = await app.inject({
    method: 'PATCH',
    url: `/portfolio-assets/${asset.id}`,
    headers: apiKey(),
    payload: { quantity: 50, symbol: 'HACK' }
  })
  t.equal(res.statusCode, 200)
  t.match(res.json(), {
    id: asset.id,
    symbol: 'PETR4',
    quantity: 50,
    price: 37.5,
    totalValue: 1875,
    createdAt: asset.createdAt
  })
  const priced = await app.inject({
    method: 'PATCH',
    url: `/portfolio-assets/${asset.id}`,
    headers: apiKey(),
    payload: { price: 40 }
  })
  t.equal(priced.json().totalValue, 2000)
  t.equal((await app.inject({
    method: 'GET',
    url: `/portfolios/${portfolioId}/value`,
    headers: apiKey()
  })).json().totalValue, 2000)

  const invalid = await app.inject({
    method: 'PATCH',
    url: `/portfolio-assets/${asset.id}`,
    headers: apiKey(),
    payload: { quantity: 0, price: 10 }
  })
  t.equal(invalid.statusCode, 400)
  t.equal((await app.inject({
    method: 'GET',
    url: `/portfolio-assets/${asset.id}`,
    headers: apiKey()
  })).json().price, 40, 'a rejected PATCH changes nothing')
  t.equal((await app.inject({
    method: 'PATCH',
    url: '/portfolio-assets/nope',
    headers: apiKey(),
    payload: { price: 1 }
  })).statusCode, 404)
})

forEachEngine(t, 'DELETE /portfolio-assets/:id', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const portfolioId = await portfolio(app)
  const asset = (await app.inject({
    method: 'POST',
    url: '/portfolio-assets',
    headers: apiKey(),
    payload: assetBody(portfolioId)
  })).json()
  const res = await app.inject({ method: 'DELETE', url: `/portfolio-assets/${asset.id}`, headers: apiKey() })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { message: 'Ativo removido com sucesso', id: asset.id })
  t.equal((await app.inject({
    method: 'GET',
    url: `/portfolios/${portfolioId}/value`,
    headers: apiKey()
  })).json().totalValue, 0)
  const again = await app.inject({ method: 'DELETE', url: `/portfolio-assets/${asset.id}`, headers: apiKey() })
  t.equal(again.statusCode, 404)
  t.equal(again.json().message, 'Ativo não encontrado')
})

forEachEngine(t, 'concurrent creates never lose a record and totals add up', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const portfolioId = await portfolio(app)
  const count = 60
  const results = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      app.inject({
        method: 'POST',
        url: '/portfolio-assets',
        headers: apiKey(),
        payload: assetBody(portfolioId, { quantity: i + 1, price: 2 })
      })
    )
  )
  t.same(results.map(r => r.statusCode), Array(count).fill(201))
  const listed = await app.inject({
    method: 'GET',
    url: `/portfolio-assets?portfolioId=${portfolioId}`,
    headers: apiKey()
  })
  t.same(listed.json().map((a: { id: string }) => a.id).sort(), results.map(r => r.json().id).sort())
  const value = await app.inject({ method: 'GET', url: `/portfolios/${portfolioId}/value`, headers: apiKey() })
  t.equal(value.json().totalValue, 2 * (count * (count + 1)) / 2)
})

forEachEngine(t, 'asset routes need the API key', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  for (const url of ['/portfolio-assets', '/portfolio-assets/type/STOCK', '/portfolio-assets/x']) {
    const res = await app.inject({ method: 'GET', url })
    t.equal(res.statusCode, 401, url)
    t.equal(res.json().message, 'API key inválida ou ausente')
  }
})

forEachEngine(t, 'PATCH /portfolio-assets/:id that names nothing updatable is 400 and changes ' +
  'nothing', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const portfolioId = await portfolio(app)
  const asset = (await app.inject({
    method: 'POST',
    url: '/portfolio-assets',
    headers: apiKey(),
    payload: assetBody(portfolioId)
  })).json()
  for (const payload of [{}, { name: 'x' }]) {
    const res = await app.inject({ method: 'PATCH', url: `/portfolio-assets/${asset.id}`, headers: apiKey(), payload })
    t.equal(res.statusCode, 400)
    t.match(res.json(), { code: 'VALIDATION_FAILED', message: ['at least one of quantity, price must be provided'] })
  }
  const after = (await app.inject({ method: 'GET', url: `/portfolio-assets/${asset.id}`, headers: apiKey() })).json()
  t.equal(after.updatedAt, asset.updatedAt, 'updatedAt untouched')
})
