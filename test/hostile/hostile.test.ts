import t, { type Test } from 'tap'
import fc from 'fast-check'
import type { App } from '../../src/app.js'
import { apiKey, bearer, buildTestApp, userToken } from '../helper.js'
import { startFakeLaravel } from '../fixtures/fake-laravel.js'
import { PLUGGY_CLIENT_ID, PLUGGY_CLIENT_SECRET, startFakePluggy } from '../fixtures/fake-pluggy.js'

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE'

/** What the store holds, to prove a rejected request wrote nothing. */
async function footprint (app: App): Promise<string> {
  const stats = await app.store.stats.get()
  const exclusions = await app.store.exclusions.count()
  const events = await app.store.aggregatorEvents.count()
  return `${stats.totalPortfolios}/${stats.totalAssets}/${stats.totalValue}/${exclusions}/${events}`
}

const json = fc.jsonValue({ maxDepth: 4 })
const objectWith = (keys: string[]) =>
  fc.dictionary(fc.oneof(fc.constantFrom(...keys), fc.string({ maxLength: 12 })), json, { maxKeys: 8 })
const pathPart = fc.string({ unit: 'binary', maxLength: 80 }).map(value => encodeURIComponent(value))

async function setup (t: Test) {
  const laravel = await startFakeLaravel(t)
  const pluggy = await startFakePluggy(t)
  const app = await buildTestApp(t, {
    BACKEND_URL: laravel.url,
    AGGREGATOR_URL: pluggy.url,
    AGGREGATOR_CLIENT_ID: PLUGGY_CLIENT_ID,
    AGGREGATOR_CLIENT_SECRET: PLUGGY_CLIENT_SECRET,
    RATE_LIMIT_MAX: '100000000'
  })
  const portfolioId = (await app.inject({
    method: 'POST',
    url: '/portfolios',
    headers: apiKey(),
    payload: { name: 'Seed', userId: 'u' }
  })).json().id as string
  const assetId = (await app.inject({
    method: 'POST',
    url: '/portfolio-assets',
    headers: apiKey(),
    payload: { name: 'A', symbol: 'A', type: 'STOCK', quantity: 1, price: 1, portfolioId }
  })).json().id as string
  return { app, portfolioId, assetId }
}

t.test('generated bodies, query strings and path ids: never a 500, nothing stored when rejected', async t => {
  const { app, portfolioId, assetId } = await setup(t)
  const auth = { ...apiKey(), ...bearer(userToken()) }
  const routes: Array<{ method: Method, url: (part: string) => string, body?: fc.Arbitrary<unknown> }> = [
    { method: 'POST', url: () => '/portfolios', body: objectWith(['name', 'description', 'userId']) },
    { method: 'PATCH', url: part => `/portfolios/${part}`, body: objectWith(['name', 'description']) },
    { method: 'PATCH', url: () => `/portfolios/${portfolioId}`, body: objectWith(['name', 'description']) },
    { method: 'GET', url: part => `/portfolios/${part}` },
    { method: 'GET', url: part => `/portfolios/${part}/value` },
    { method: 'GET', url: part => `/portfolios?userId=${part}&limit=${part}` },
    { method: 'DELETE', url: part => `/portfolios/x${part}` },
    {
      method: 'POST',
      url: () => '/portfolio-assets',
      body: objectWith(['name', 'symbol', 'type', 'quantity', 'price', 'portfolioId'])
    },
    { method: 'PATCH', url: () => `/portfolio-assets/${assetId}`, body: objectWith(['quantity', 'price']) },
    { method: 'GET', url: part => `/portfolio-assets?portfolioId=${part}` },
    { method: 'GET', url: part => `/portfolio-assets/type/${part}` },
    { method: 'GET', url: part => `/portfolio-assets/price/${part}` },
    { method: 'GET', url: part => `/portfolio-assets/${part}/dashboard` },
    { method: 'DELETE', url: part => `/portfolio-assets/x${part}` },
    {
      method: 'POST',
      url: () => '/openfinance-excluded-transactions',
      body: objectWith(['client_id', 'transaction_id', 'reason', 'excluded_at'])
    },
    { method: 'GET', url: part => `/openfinance-excluded-transactions?client_id=${part}` },
    { method: 'DELETE', url: part => `/openfinance-excluded-transactions/x${part}` },
    { method: 'POST', url: () => '/auth/validate-token', body: objectWith(['token']) },
    { method: 'POST', url: () => '/aggregator', body: objectWith(['endpoint', 'method', 'itemId', 'accountId']) },
    { method: 'POST', url: () => '/aggregator/connect_token', body: objectWith(['itemId', 'options']) },
    { method: 'POST', url: () => '/aggregator/webhook', body: objectWith(['event', 'eventId', 'itemId', 'data']) },
    { method: 'POST', url: part => `/backend-api/proxy/${part}`, body: objectWith(['method', 'params', 'headers']) }
  ]
  const writes = new Set(['POST', 'PATCH', 'DELETE'])
  for (const route of routes) {
    await fc.assert(fc.asyncProperty(pathPart, route.body ?? fc.constant(undefined), async (part, body) => {
      const before = await footprint(app)
      const res = await app.inject({
        method: route.method,
        url: route.url(part),
        headers: auth,
        ...(body === undefined
          ? {}
          : {
              payload: JSON.stringify(body),
              headers: { ...auth, 'content-type': 'application/json' }
            })
      })
      if (res.statusCode >= 500 && res.statusCode !== 502 && res.statusCode !== 504) {
        throw new Error(`${route.method} ${route.url(part)} → ${res.statusCode} ${res.body}`)
      }
      const parsed =
        res.headers['content-type']?.toString().startsWith('application/json') === true ? res.json() : undefined
      if (res.statusCode >= 400 && (typeof parsed?.statusCode !== 'number' || typeof parsed?.path !== 'string')) {
        throw new Error(`non-standard error body: ${res.body}`)
      }
      if (res.statusCode >= 400 && writes.has(route.method) && await footprint(app) !== before) {
        throw new Error(`a rejected ${route.method} ${route.url(part)} changed the store`)
      }
    }), { numRuns: 40 })
    t.pass(`${route.method} ${route.url(':x')}`)
  }
})

t.test('fixed attack payloads', async t => {
  const { app, portfolioId } = await setup(t)
  const before = await footprint(app)
  const post = async (payload: string | Buffer, contentType = 'application/json') => await app.inject({
    method: 'POST',
    url: '/portfolios',
    headers: { ...apiKey(), 'content-type': contentType },
    payload
  })
  const attacks: Array<[string, () => Promise<{ statusCode: number }>, number]> = [
    ['__proto__ pollution', async () => await post('{"name":"x","userId":"u","__proto__":{"polluted":true}}'), 400],
    ['constructor.prototype pollution',
      async () => await post('{"name":"x","userId":"u","constructor":{"prototype":{"polluted":true}}}'), 400],
    ['deep nesting', async () => await post(`${'['.repeat(100_000)}${']'.repeat(100_000)}`), 400],
    ['deep object nesting in a field', async () => await post(
      `{"name":"x","userId":"u","description":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`
    ), 400],
    ['oversize body', async () => await post(JSON.stringify({
      name: 'x',
      userId: 'u',
      description: 'd'.repeat(2 * 1024 * 1024)
    })), 413],
    ['text/plain', async () => await post('{"name":"x","userId":"u"}', 'text/plain'), 415],
    ['form body', async () => await post('name=x&userId=u', 'application/x-www-form-urlencoded'), 415],
    ['multipart', async () => await post(
      '--b\r\nContent-Disposition: form-data; name="name"\r\n\r\nx\r\n--b--', 'multipart/form-data; boundary=b'
    ), 415],
    ['json with trailing garbage in the type',
      async () => await post('{"name":"x","userId":"u"}', 'application/json garbage'), 415],
    ['json with a tab in the type', async () => await post('{"name":"x","userId":"u"}', 'application/json\tx'), 415],
    ['bad UTF-8', async () => await post(Buffer.concat([
      Buffer.from('{"name":"'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('","userId":"u"}')
    ])), 201],
    ['empty JSON body', async () => await post(''), 400],
    ['null body', async () => await post('null'), 400],
    ['NaN in JSON', async () => await post('{"name":"x","userId":"u","description":NaN}'), 400],
    ['huge number', async () => await app.inject({
      method: 'POST',
      url: '/portfolio-assets',
      headers: { ...apiKey(), 'content-type': 'application/json' },
      payload: `{"name":"x","symbol":"x","type":"STOCK","quantity":1e999,"price":1,"portfolioId":"${portfolioId}"}`
    }), 400]
  ]
  for (const [name, attack, expected] of attacks) {
    const res = await attack()
    t.equal(res.statusCode, expected, `${name} → ${expected}`)
  }
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype is untouched')
  const after = await footprint(app)
  const [portfolios, ...rest] = before.split('/')
  t.equal(
    after,
    [Number(portfolios) + 1, ...rest].join('/'),
    'only the bad-UTF-8 portfolio (stored with replacement characters) was written'
  )
  t.equal((await app.inject({ method: 'GET', url: '/auth/health' })).statusCode, 200, 'still healthy')
})
