import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import sensible from '@fastify/sensible'
import swagger from '@fastify/swagger'
import {
  aggregatorPlugin,
  authPlugin,
  authRoutesPlugin,
  backendApiPlugin,
  conditionalRequestsPlugin,
  excludedTransactionsPlugin,
  idempotencyPlugin,
  changeFeedPlugin,
  lifecyclePlugin,
  mintToken,
  portfolioAssetsPlugin,
  portfoliosPlugin,
  portfolioValuationPlugin,
  providerConfig,
  quotesPlugin,
  securitySchemes,
  storePlugin,
  systemPlugin,
  upstreamsPlugin,
  type AuthPluginOptions
} from '../src/index.js'
import { apiKey, assertErrorBody, buildTestApp, testConfig, TEXTS } from './helper.js'
import { hostRoutes } from './fixtures/host-routes.js'
import { checkDocument, checkHostRoutes, checkPortfolioRoutes } from './fixtures/reused-routes.js'

/** What a host gives the auth plugin: its own secret and key. */
const HOST_AUTH: AuthPluginOptions = {
  jwtSecret: 'host-secret',
  jwtAlgorithm: 'HS256',
  leewaySeconds: 0,
  providers: providerConfig({ user: 'App\\Models\\User', client: 'App\\Models\\User\\Client' }),
  apiKeys: ['host-key']
}

async function listening (t: Test, app: FastifyInstance): Promise<string> {
  t.teardown(() => app.close())
  return await app.listen({ host: '127.0.0.1', port: 0 })
}

t.test('the reused-route checks hold on the service itself', async t => {
  const app = await buildTestApp(t)
  const origin = await app.listen({ host: '127.0.0.1', port: 0 })
  await checkPortfolioRoutes(t, { origin, path: '/portfolios', key: apiKey()['x-api-key'] ?? '' })
  await checkDocument(t, await (await fetch(`${origin}/docs/json`)).json() as never, '/portfolios')
})

t.test('a host mounting the portfolios and valuation modules gets the service\'s answers and document; its own ' +
  'route keeps Fastify\'s defaults', async t => {
  const host = Fastify()
  await host.register(swagger, { openapi: { info: { title: 'Host app', version: '1.0.0' } } })
  await host.register(storePlugin, { url: 'sqlite::memory:' })
  await host.register(authPlugin, HOST_AUTH)
  await host.register(portfoliosPlugin, { prefix: '/api/v2/carteiras' })
  await valuationAdapters(host)
  await host.register(portfolioValuationPlugin, { prefix: '/api/v2/carteiras' })
  hostRoutes(host)
  const origin = await listening(t, host)
  await checkPortfolioRoutes(t, { origin, path: '/api/v2/carteiras', key: 'host-key' })
  await checkHostRoutes(t, origin)
  const headers = { 'x-api-key': 'host-key', 'content-type': 'application/json' }
  const { id } = await (await fetch(`${origin}/api/v2/carteiras`, {
    method: 'POST', headers, body: JSON.stringify({ name: 'Valued', userId: 'u' })
  })).json() as { id: string }
  const valuation = await fetch(`${origin}/api/v2/carteiras/${id}/valuation`, { headers })
  t.match([valuation.status, await valuation.json()], [200, { portfolioId: id, marketValue: 0 }], 'the valuation')
  const abort = new AbortController()
  const stream = await fetch(`${origin}/api/v2/carteiras/${id}/valuation/stream`, { headers, signal: abort.signal })
  const reader = stream.body?.getReader()
  const first = new TextDecoder().decode((await reader?.read())?.value)
  abort.abort()
  t.match([stream.status, first], [200, /event: valuation\n/], 'its stream\'s first message')
  const oversize = await host.inject({
    method: 'POST',
    url: '/api/v2/carteiras',
    headers: { 'x-api-key': 'host-key', 'content-type': 'application/json' },
    payload: JSON.stringify({ name: 'x'.repeat(1024 * 1024), userId: 'u' })
  })
  t.match([oversize.statusCode, oversize.json()], [413, { code: 'PAYLOAD_TOO_LARGE' }],
    'the host\'s body limit, answered in the standard body')
  const document = host.swagger() as { paths: Record<string, Record<string, { security?: unknown }>> }
  await checkDocument(t, document, '/api/v2/carteiras')
  t.same(Object.keys(document.paths['/host/echo'] ?? {}), ['post'])
  t.equal(document.paths['/host/echo']?.post?.security, undefined, 'the host\'s route is documented as the host has it')
})

t.test('a host\'s own error and not-found handlers stay its own; the module answers in its body', async t => {
  const host = Fastify()
  host.setErrorHandler((error: { statusCode?: number, message: string }, _request, reply) => {
    reply.code(error.statusCode ?? 500).send({ hostError: error.message })
  })
  host.setNotFoundHandler((_request, reply) => { reply.code(404).send({ hostNotFound: true }) })
  await host.register(storePlugin, { url: 'sqlite::memory:' })
  await host.register(authPlugin, HOST_AUTH)
  await host.register(portfoliosPlugin, { prefix: '/carteiras' })
  hostRoutes(host)
  await host.ready()
  t.teardown(() => host.close())
  const refused = await host.inject({ method: 'GET', url: '/carteiras', headers: { 'x-api-key': 'nope' } })
  t.equal(refused.statusCode, 401)
  t.match(refused.json(), { code: 'API_KEY_INVALID', message: TEXTS.apiKeyInvalid })
  assertErrorBody(t, refused.json(), 401, '/carteiras')
  t.match((await host.inject({ method: 'GET', url: '/carteiras/a/b' })).json(), { code: 'NOT_FOUND' })
  t.same((await host.inject({ method: 'POST', url: '/host/echo', payload: {} })).json(),
    { hostError: "body must have required property 'n'" })
  t.same((await host.inject({ method: 'GET', url: '/elsewhere' })).json(), { hostNotFound: true })
  t.same((await host.inject({ method: 'GET', url: '/portfolios' })).json(), { hostNotFound: true },
    'nothing is mounted where the host did not ask')
})

const config = testConfig()

interface ModuleCase {
  name: string
  /** Where it is mounted; none: at the host's root. */
  prefix?: string
  /** A request its guard refuses. */
  refused: { url: string, method?: 'GET' | 'POST', code: string }
  mount: (app: FastifyInstance) => PromiseLike<unknown>
}

/** Each exported module in a host of its own, with the infrastructure it names. */
const MODULES: ModuleCase[] = [
  {
    name: 'authRoutesPlugin',
    prefix: '/conta',
    refused: { url: '/conta/profile', code: 'TOKEN_INVALID' },
    mount: app => app.register(authRoutesPlugin, { prefix: '/conta', ...config.modules.auth })
  },
  {
    name: 'portfolioAssetsPlugin',
    prefix: '/ativos',
    refused: { url: '/ativos', code: 'API_KEY_INVALID' },
    mount: app => app.register(portfolioAssetsPlugin, { prefix: '/ativos' })
  },
  {
    name: 'excludedTransactionsPlugin',
    prefix: '/exclusoes',
    refused: { url: '/exclusoes', code: 'TOKEN_INVALID' },
    mount: app => app.register(excludedTransactionsPlugin, { prefix: '/exclusoes' })
  },
  {
    name: 'backendApiPlugin',
    prefix: '/laravel',
    refused: { url: '/laravel/health', code: 'TOKEN_INVALID' },
    mount: app => app.register(backendApiPlugin, { prefix: '/laravel', ...config.modules.backendApi })
  },
  {
    name: 'aggregatorPlugin',
    prefix: '/pluggy',
    refused: { url: '/pluggy/connect_token', method: 'POST', code: 'TOKEN_INVALID' },
    mount: app => app.register(aggregatorPlugin, { prefix: '/pluggy', ...config.modules.aggregator })
  },
  {
    name: 'systemPlugin, without a prefix',
    refused: { url: '/stats', code: 'API_KEY_INVALID' },
    mount: app => app.register(systemPlugin, config.modules.system)
  }
]

for (const { name, mount, prefix, refused } of MODULES) {
  t.test(`${name} carries the error body into its scope, and only there`, async t => {
    const host = Fastify()
    t.teardown(() => host.close())
    await host.register(sensible)
    await host.register(storePlugin, { url: 'sqlite::memory:' })
    await host.register(authPlugin, config.auth)
    await host.register(upstreamsPlugin, config.upstreams)
    await host.register(quotesPlugin, config.quotes)
    await host.register(changeFeedPlugin, {})
    await host.register(lifecyclePlugin)
    await mount(host)
    hostRoutes(host)
    await host.ready()
    const answer = await host.inject({ method: refused.method ?? 'GET', url: refused.url })
    t.equal(answer.statusCode, 401)
    t.match(answer.json(), { code: refused.code })
    assertErrorBody(t, answer.json(), 401, refused.url)
    if (prefix !== undefined) {
      const unknown = await host.inject({ method: 'GET', url: `${prefix}/not/here` })
      const notFound = { code: 'NOT_FOUND', message: `Cannot GET ${prefix}/not/here` }
      t.match([unknown.statusCode, unknown.json()], [404, notFound])
    }
    t.match((await host.inject({ method: 'GET', url: '/nowhere' })).json(), { message: 'Route GET:/nowhere not found' },
      'the host\'s 404 elsewhere')
    const echo = await host.inject({ method: 'POST', url: '/host/echo', payload: { n: 5 } })
    t.same([echo.statusCode, echo.json()], [200, { n: '5' }], 'the host\'s validation for its route')
  })
}

/** What the valuation module needs besides the store and auth: quotes and the change feed. */
async function valuationAdapters (host: FastifyInstance): Promise<void> {
  await host.register(quotesPlugin, { provider: 'offline', quoteTtlSeconds: 60 })
  await host.register(changeFeedPlugin, {})
}

/** The security schemes of the document a host on @fastify/swagger (`options`) makes with the modules `mount` adds. */
async function hostSchemes (
  t: Test, options: object, mount: (app: FastifyInstance) => Promise<unknown>
): Promise<Record<string, unknown>> {
  const host = Fastify()
  t.teardown(() => host.close())
  await host.register(swagger, options)
  await host.register(storePlugin, { url: 'sqlite::memory:' })
  await host.register(authPlugin, HOST_AUTH)
  await mount(host)
  await host.ready()
  const document = host.swagger() as { components?: { securitySchemes: object }, securityDefinitions?: object }
  return { ...(document.components?.securitySchemes ?? document.securityDefinitions) }
}

t.test('a host\'s document gets the security schemes its modules\' routes name (OpenAPI 3, Swagger 2)', async t => {
  const apiKeyScheme = { type: 'apiKey', in: 'header', name: 'x-api-key' }
  for (const [options, bearerScheme] of [
    [{ openapi: { openapi: '3.1.0' } }, { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }],
    [{}, { type: 'apiKey', in: 'header', name: 'Authorization' }]
  ] as const) {
    const portfolios = await hostSchemes(t, options, async app => {
      await app.register(portfoliosPlugin, { prefix: '/carteiras' })
    })
    t.same(Object.keys(portfolios), ['apiKey'], 'the API key\'s alone: no other module is mounted')
    t.match(portfolios, { apiKey: apiKeyScheme })
    const both = await hostSchemes(t, options, async app => {
      await app.register(portfoliosPlugin, { prefix: '/carteiras' })
      await app.register(excludedTransactionsPlugin, { prefix: '/exclusoes' })
    })
    t.match(both, { apiKey: apiKeyScheme, bearerAuth: bearerScheme })
  }
})

t.test('a host\'s own security schemes: the same as the exported ones are kept, a different apiKey stops the ' +
  'document naming it', async t => {
  for (const [own, outcome] of [
    [securitySchemes, 'kept'],
    [{ apiKey: { type: 'apiKey', in: 'query', name: 'key' } }, 'refused']
  ] as const) {
    const host = Fastify()
    t.teardown(() => host.close())
    await host.register(swagger, { openapi: { openapi: '3.1.0', components: { securitySchemes: own } } })
    await host.register(storePlugin, { url: 'sqlite::memory:' })
    await host.register(authPlugin, HOST_AUTH)
    await host.register(portfoliosPlugin, { prefix: '/carteiras' })
    await host.ready()
    if (outcome === 'kept') {
      const document = host.swagger() as { components: { securitySchemes: unknown } }
      t.same(document.components.securitySchemes, securitySchemes)
    } else {
      t.throws(() => host.swagger(), /security scheme apiKey differs/)
    }
  }
})

t.test('a module whose dependencies are missing fails when it is registered', async t => {
  const host = Fastify()
  t.teardown(() => host.close())
  await host.register(storePlugin, { url: 'sqlite::memory:' })
  await t.rejects(async () => { await host.register(portfolioAssetsPlugin) }, /required by 'bff-portfolio-assets'/)
  const withoutQuotes = Fastify()
  t.teardown(() => withoutQuotes.close())
  await withoutQuotes.register(storePlugin, { url: 'sqlite::memory:' })
  await withoutQuotes.register(authPlugin, HOST_AUTH)
  await withoutQuotes.register(portfoliosPlugin, { prefix: '/carteiras' })
  await t.rejects(async () => { await withoutQuotes.register(portfolioValuationPlugin, { prefix: '/carteiras' }) },
    /The decorator 'quotes' required by 'bff-portfolio-valuation'/, 'the valuation routes need the quotes')
})

t.test('the portfolios module alone, without quotes nor the change feed, serves the portfolios', async t => {
  const host = Fastify()
  await host.register(storePlugin, { url: 'sqlite::memory:' })
  await host.register(authPlugin, HOST_AUTH)
  await host.register(portfoliosPlugin, { prefix: '/carteiras' })
  const origin = await listening(t, host)
  t.notOk(host.hasDecorator('quotes') || host.hasDecorator('changeFeed'), 'neither is there')
  await checkPortfolioRoutes(t, { origin, path: '/carteiras', key: 'host-key' })
  const headers = { 'x-api-key': 'host-key', 'content-type': 'application/json' }
  const { id } = await (await fetch(`${origin}/carteiras`, {
    method: 'POST', headers, body: JSON.stringify({ name: 'Alone', userId: 'u' })
  })).json() as { id: string }
  const renamed = await fetch(`${origin}/carteiras/${id}`, { method: 'PATCH', headers, body: '{"name":"Renamed"}' })
  t.match([renamed.status, await renamed.json()], [200, { id, name: 'Renamed' }])
  const value = await fetch(`${origin}/carteiras/${id}/value`, { headers })
  t.match([value.status, await value.json()], [200, { portfolioId: id, totalValue: 0 }])
  const valuation = await fetch(`${origin}/carteiras/${id}/valuation`, { headers })
  t.equal(valuation.status, 404, 'no valuation route: it is the valuation module\'s')
  const deleted = await fetch(`${origin}/carteiras/${id}`, { method: 'DELETE', headers })
  t.match([deleted.status, await deleted.json()], [200, { id }])
})

t.test('the auth routes need @fastify/sensible (preventCache): without it register() names it; with it, ' +
  'the profile is no-store', async t => {
  const routes = { devRoutes: false, backendUrl: 'http://127.0.0.1:1', jwtAlgorithm: 'HS256' }
  const bare = Fastify()
  t.teardown(() => bare.close())
  await bare.register(authPlugin, HOST_AUTH)
  await t.rejects(async () => { await bare.register(authRoutesPlugin, routes) }, /@fastify\/sensible/)

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
  const invalidKey = { 'x-api-key': 'host-key', 'idempotency-key': 'not a key' }
  const refused = await host.inject({ method: 'POST', url: '/carteiras', headers: invalidKey, payload: { name: 'H' } })
  t.match([refused.statusCode, refused.json()], [400, { code: 'VALIDATION_FAILED' }], 'the added header checked alike')
})
