import t from 'tap'
import Fastify from 'fastify'
import sensible from '@fastify/sensible'
import {
  authPlugin,
  authRoutesPlugin,
  mintToken,
  portfoliosPlugin,
  providerConfig,
  storePlugin,
  quotesPlugin,
  portfolioAssetsPlugin,
  type AuthPluginOptions
} from '../src/index.js'
import { conditionalRequestsPlugin, idempotencyPlugin } from '../src/index.js'

/** What a host gives the auth plugin: its own secret and key. */
const HOST_AUTH: AuthPluginOptions = {
  jwtSecret: 'host-secret',
  jwtAlgorithm: 'HS256',
  leewaySeconds: 0,
  providers: providerConfig({ user: 'App\\Models\\User', client: 'App\\Models\\User\\Client' }),
  apiKeys: ['host-key']
}

t.test('a host app registers one domain plugin alone, under its own prefix and store', async t => {
  const host = Fastify()
  t.teardown(() => host.close())
  // The host keeps its own error handler: the plugins set none.
  host.setErrorHandler((error: { statusCode?: number, message: string }, _request, reply) => {
    reply.code(error.statusCode ?? 500).send({ hostError: error.message })
  })
  await host.register(storePlugin, { url: 'sqlite::memory:' })
  await host.register(authPlugin, HOST_AUTH)
  await host.register(portfoliosPlugin, { prefix: '/api/v2/carteiras' })
  host.get('/mine', async () => ({ host: true }))
  await host.ready()

  const created = await host.inject({
    method: 'POST',
    url: '/api/v2/carteiras',
    headers: { 'x-api-key': 'host-key' },
    payload: { name: 'Host', userId: 'h' }
  })
  t.equal(created.statusCode, 201)
  const read = await host.inject({
    method: 'GET',
    url: `/api/v2/carteiras/${created.json().id}`,
    headers: { 'x-api-key': 'host-key' }
  })
  t.equal(read.statusCode, 200)
  t.match(read.json(), { name: 'Host', totalValue: 0, assets: [] })
  const refused = await host.inject({ method: 'GET', url: '/api/v2/carteiras', headers: { 'x-api-key': 'nope' } })
  t.equal(refused.statusCode, 401)
  t.same(refused.json(), { hostError: 'API key inválida ou ausente' })
  t.equal(
    (await host.inject({ method: 'GET', url: '/mine' })).statusCode,
    200,
    "the module's API-key hook does not reach host routes"
  )
  t.equal(
    (await host.inject({ method: 'GET', url: '/portfolios' })).statusCode,
    404,
    'nothing is mounted where the host did not ask'
  )
})

t.test('a module whose dependencies are missing fails at ready()', async t => {
  const host = Fastify()
  t.teardown(() => host.close())
  await host.register(storePlugin, { url: 'sqlite::memory:' })
  await t.rejects(async () => {
    await host.register(portfolioAssetsPlugin)
    await host.ready()
  }, /required by 'bff-portfolio-assets'/)
})

t.test('the auth routes need @fastify/sensible (preventCache): without it ready() names it; with it, ' +
  'the profile is no-store', async t => {
  const routes = { devRoutes: false, backendUrl: 'http://127.0.0.1:1', jwtAlgorithm: 'HS256' }
  const bare = Fastify()
  t.teardown(() => bare.close())
  await bare.register(authPlugin, HOST_AUTH)
  await t.rejects(async () => {
    await bare.register(authRoutesPlugin, routes)
    await bare.ready()
  }, /@fastify\/sensible/)

  const host = Fastify()
  t.teardown(() => host.close())
  await host.register(sensible)
  await host.register(authPlugin, HOST_AUTH)
  await host.register(authRoutesPlugin, { ...routes, prefix: '/conta' })
  await host.ready()
  const token = mintToken({
    secret: HOST_AUTH.jwtSecret,
    algorithm: 'HS256',
    providers: HOST_AUTH.providers,
    type: 'user',
    sub: 7,
    issuer: 'http://host.example/api/login',
    ttlSeconds: 600
  })
  const profile = await host.inject({
    method: 'GET',
    url: '/conta/profile',
    headers: { authorization: `Bearer ${token}` }
  })
  t.equal(profile.statusCode, 200)
  t.equal(profile.headers['cache-control'], 'no-store, max-age=0, private')
})

t.test('a host that registers the quotes plugin serves the asset routes with their quotes', async t => {
  const host = Fastify()
  t.teardown(() => host.close())
  await host.register(storePlugin, { url: 'sqlite::memory:' })
  await host.register(authPlugin, HOST_AUTH)
  await host.register(quotesPlugin, { provider: 'offline', quoteTtlSeconds: 60 })
  await host.register(portfolioAssetsPlugin, { prefix: '/ativos' })
  await host.ready()
  const quote = await host.inject({ method: 'GET', url: '/ativos/price/petr4', headers: { 'x-api-key': 'host-key' } })
  t.equal(quote.statusCode, 200)
  t.match(quote.json(), { symbol: 'PETR4', price: Number, currency: 'BRL', source: /offline/ })
})

t.test('a host registering the idempotency and conditional-request plugins before a module gets both', async t => {
  const host = Fastify()
  t.teardown(() => host.close())
  await host.register(storePlugin, { url: 'sqlite::memory:' })
  await host.register(authPlugin, HOST_AUTH)
  await host.register(idempotencyPlugin, { ttlSeconds: 60, inFlightLeaseMs: 60_000 })
  await host.register(conditionalRequestsPlugin)
  await host.register(portfoliosPlugin, { prefix: '/carteiras' })
  await host.ready()
  const headers = { 'x-api-key': 'host-key', 'idempotency-key': 'host-1' }
  const created = await host.inject({
    method: 'POST',
    url: '/carteiras',
    headers,
    payload: { name: 'Host', userId: 'h' }
  })
  const again = await host.inject({
    method: 'POST',
    url: '/carteiras',
    headers,
    payload: { name: 'Host', userId: 'h' }
  })
  t.equal(again.body, created.body)
  t.equal(again.headers['idempotent-replayed'], 'true')
  const url = `/carteiras/${created.json().id as string}`
  const read = await host.inject({ method: 'GET', url, headers: { 'x-api-key': 'host-key' } })
  const polled = { 'x-api-key': 'host-key', 'if-none-match': String(read.headers.etag) }
  t.equal((await host.inject({ method: 'GET', url, headers: polled })).statusCode, 304)
})
