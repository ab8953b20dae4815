import t from 'tap'
import type { App } from '../../../src/app.js'
import { apiKey, assertErrorBody, buildDataApp, forEachEngine } from '../../helper.js'

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

async function createPortfolio (app: App, body: Record<string, unknown>) {
  const res = await app.inject({ method: 'POST', url: '/portfolios', headers: apiKey(), payload: body })
  return { status: res.statusCode, body: res.json() }
}

async function addAsset (app: App, portfolioId: string, quantity: number, price: number, symbol = 'PETR4') {
  const res = await app.inject({
    method: 'POST',
    url: '/portfolio-assets',
    headers: apiKey(),
    payload: { name: symbol, symbol, type: 'STOCK', quantity, price, portfolioId }
  })
  return res.json()
}

forEachEngine(t, 'POST /portfolios creates with totalValue 0', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const { status, body } = await createPortfolio(app, {
    name: '  Longo prazo ',
    description: 'Ações',
    userId: 'u1',
    admin: true
  })
  t.equal(status, 201)
  t.match(body, { id: UUID, name: 'Longo prazo', description: 'Ações', userId: 'u1', totalValue: 0, createdAt: ISO_MS })
  t.same(
    Object.keys(body).sort(),
    ['createdAt', 'description', 'id', 'name', 'totalValue', 'userId'],
    'unknown properties are dropped'
  )

  const withoutDescription = await createPortfolio(app, { name: 'Sem descrição', userId: 'u1' })
  t.equal(withoutDescription.body.description, null)
})

forEachEngine(t, 'POST /portfolios validation writes nothing', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const cases: Array<[Record<string, unknown>, string[]]> = [
    [
      {},
      ['name should not be empty', 'name must be a string', 'userId should not be empty', 'userId must be a string']
    ],
    [{ name: '', userId: 'u' }, ['name should not be empty']],
    [{ name: '   ', userId: 'u' }, ['name should not be empty']],
    [{ name: 'x', userId: 12 }, ['userId must be a string']],
    [{ name: 'x'.repeat(201), userId: 'u' }, ['name must be shorter than or equal to 200 characters']],
    [
      { name: 'x', userId: 'u', description: 'd'.repeat(2001) },
      ['description must be shorter than or equal to 2000 characters']
    ]
  ]
  for (const [payload, messages] of cases) {
    const res = await app.inject({ method: 'POST', url: '/portfolios', headers: apiKey(), payload })
    t.equal(res.statusCode, 400, JSON.stringify(payload))
    t.same(res.json().message, messages)
    assertErrorBody(t, res.json(), 400, '/portfolios')
  }
  const list = await app.inject({ method: 'GET', url: '/portfolios', headers: apiKey() })
  t.same(list.json(), [], 'nothing was stored')
})

forEachEngine(t, 'GET /portfolios lists, filters by userId and pages', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const a = (await createPortfolio(app, { name: 'A', userId: 'ana' })).body
  const b = (await createPortfolio(app, { name: 'B', userId: 'bia' })).body
  const c = (await createPortfolio(app, { name: 'C', userId: 'ana' })).body
  await addAsset(app, a.id, 10, 2.5)
  await addAsset(app, a.id, 1, 100)

  const all = await app.inject({ method: 'GET', url: '/portfolios', headers: apiKey() })
  t.equal(all.statusCode, 200)
  t.same(all.json().map((p: { id: string }) => p.id).sort(), [a.id, b.id, c.id].sort())
  const listedA = all.json().find((p: { id: string }) => p.id === a.id)
  t.match(listedA, {
    name: 'A',
    userId: 'ana',
    description: null,
    totalValue: 125,
    createdAt: ISO_MS,
    updatedAt: ISO_MS
  })

  const ana = await app.inject({ method: 'GET', url: '/portfolios?userId=ana', headers: apiKey() })
  t.same(ana.json().map((p: { id: string }) => p.id).sort(), [a.id, c.id].sort())
  t.same((await app.inject({ method: 'GET', url: '/portfolios?userId=nobody', headers: apiKey() })).json(), [])

  const page1 = await app.inject({ method: 'GET', url: '/portfolios?limit=2', headers: apiKey() })
  const page2 = await app.inject({ method: 'GET', url: '/portfolios?limit=2&offset=2', headers: apiKey() })
  t.equal(page1.json().length, 2)
  t.equal(page2.json().length, 1)
  t.same([...page1.json(), ...page2.json()].map((p: { id: string }) => p.id).sort(), [a.id, b.id, c.id].sort())
  for (const query of ['limit=0', 'limit=1001', 'limit=x', 'offset=-1']) {
    t.equal((await app.inject({
      method: 'GET',
      url: `/portfolios?${query}`,
      headers: apiKey()
    })).statusCode, 400, query)
  }
})

forEachEngine(t, 'GET /portfolios/:id and /value are computed from the assets', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const p = (await createPortfolio(app, { name: 'P', userId: 'u' })).body
  const first = await addAsset(app, p.id, 3, 10, 'VALE3')
  await addAsset(app, p.id, 0.5, 1000, 'BTC')

  const detail = await app.inject({ method: 'GET', url: `/portfolios/${p.id}`, headers: apiKey() })
  t.equal(detail.statusCode, 200)
  t.same(detail.json(), {
    id: p.id,
    name: 'P',
    description: null,
    userId: 'u',
    totalValue: 530,
    assets: [
      { id: first.id, name: 'VALE3', symbol: 'VALE3', quantity: 3, price: 10 },
      { id: detail.json().assets[1].id, name: 'BTC', symbol: 'BTC', quantity: 0.5, price: 1000 }
    ]
  })

  const value = await app.inject({ method: 'GET', url: `/portfolios/${p.id}/value`, headers: apiKey() })
  t.equal(value.statusCode, 200)
  t.match(value.json(), { portfolioId: p.id, totalValue: 530, currency: 'BRL', lastUpdate: ISO_MS })
  t.ok(value.json().lastUpdate >= p.createdAt, 'lastUpdate follows the asset writes')
})

forEachEngine(t, 'PATCH /portfolios/:id returns the whole updated portfolio', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const p = (await createPortfolio(app, { name: 'Old', description: 'd', userId: 'u' })).body
  await addAsset(app, p.id, 2, 5)
  const res = await app.inject({
    method: 'PATCH',
    url: `/portfolios/${p.id}`,
    headers: apiKey(),
    payload: { name: ' New ', userId: 'thief' }
  })
  t.equal(res.statusCode, 200)
  t.match(res.json(), {
    id: p.id,
    name: 'New',
    description: 'd',
    userId: 'u',
    totalValue: 10,
    createdAt: p.createdAt,
    updatedAt: ISO_MS
  })

  const cleared = await app.inject({
    method: 'PATCH',
    url: `/portfolios/${p.id}`,
    headers: apiKey(),
    payload: { description: null }
  })
  t.equal(cleared.json().description, null)

  const invalid = await app.inject({
    method: 'PATCH',
    url: `/portfolios/${p.id}`,
    headers: apiKey(),
    payload: { name: '' }
  })
  t.equal(invalid.statusCode, 400)
  t.same(invalid.json().message, ['name should not be empty'])
  const after = await app.inject({ method: 'GET', url: `/portfolios/${p.id}`, headers: apiKey() })
  t.equal(after.json().name, 'New', 'a rejected update changes nothing')

  const missing = await app.inject({
    method: 'PATCH',
    url: '/portfolios/nope',
    headers: apiKey(),
    payload: { name: 'x' }
  })
  t.equal(missing.statusCode, 404)
  assertErrorBody(t, missing.json(), 404, '/portfolios/nope')
})

forEachEngine(t, 'DELETE /portfolios/:id removes its assets too', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const p = (await createPortfolio(app, { name: 'P', userId: 'u' })).body
  const keep = (await createPortfolio(app, { name: 'Keep', userId: 'u' })).body
  const doomed = await addAsset(app, p.id, 1, 1)
  const kept = await addAsset(app, keep.id, 1, 1)

  const res = await app.inject({ method: 'DELETE', url: `/portfolios/${p.id}`, headers: apiKey() })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { message: 'Portfolio removido com sucesso', id: p.id })
  t.equal((await app.inject({ method: 'GET', url: `/portfolios/${p.id}`, headers: apiKey() })).statusCode, 404)
  t.equal((await app.inject({
    method: 'GET',
    url: `/portfolio-assets/${doomed.id}`,
    headers: apiKey()
  })).statusCode, 404)
  t.equal((await app.inject({ method: 'GET', url: `/portfolio-assets/${kept.id}`, headers: apiKey() })).statusCode, 200)
  t.equal((await app.inject({
    method: 'DELETE',
    url: `/portfolios/${p.id}`,
    headers: apiKey()
  })).statusCode, 404, 'a second delete is 404')
})

forEachEngine(t, 'unknown and over-long ids are 404, never 414 or 500, ' +
  'and the body does not repeat a long id', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  for (const url of [
    '/portfolios/00000000-0000-4000-8000-000000000000',
    '/portfolios/x/value',
    `/portfolios/${encodeURIComponent("' or 1=1 --")}`
  ]) {
    const res = await app.inject({ method: 'GET', url, headers: apiKey() })
    t.equal(res.statusCode, 404, url)
    t.equal(res.json().message, 'Portfolio não encontrado')
  }
  for (const length of [65, 101, 5000]) {
    const long = await app.inject({ method: 'GET', url: `/portfolios/${'a'.repeat(length)}`, headers: apiKey() })
    t.equal(long.statusCode, 404, `an id of ${length} characters`)
    assertErrorBody(t, long.json(), 404, '/portfolios/:id')
    t.equal(long.json().code, 'NOT_FOUND')
    t.notMatch(long.body, 'a'.repeat(65), 'the id is not echoed')
  }
})

forEachEngine(t, 'every portfolio route needs the API key', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const routes: Array<[string, string]> = [
    ['GET', '/portfolios'],
    ['GET', '/portfolios/x'],
    ['GET', '/portfolios/x/value'],
    ['POST', '/portfolios'],
    ['PATCH', '/portfolios/x'],
    ['DELETE', '/portfolios/x']
  ]
  for (const [method, url] of routes) {
    const res = await app.inject({
      method: method as 'GET',
      url,
      headers: { 'x-api-key': 'wrong' },
      ...(method === 'POST' || method === 'PATCH' ? { payload: { name: 'x', userId: 'u' } } : {})
    })
    t.equal(res.statusCode, 401, `${method} ${url}`)
    t.equal(res.json().message, 'API key inválida ou ausente')
  }
  t.equal((await app.inject({
    method: 'GET',
    url: '/portfolios',
    headers: apiKey('test-key-rotated')
  })).statusCode, 200, 'every configured key works')
  t.same((await app.inject({
    method: 'GET',
    url: '/portfolios',
    headers: apiKey()
  })).json(), [], 'the rejected POST stored nothing')
})
