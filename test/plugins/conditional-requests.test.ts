import t from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import type { App } from '../../src/app.js'
import { apiKey, assertErrorBody, buildDataApp, buildTestApp, forEachEngine } from '../helper.js'

/** A strong tag derived from the resource: its id and its version, which every write bumps. */
const STRONG_TAG = /^"[0-9a-f-]{36}\.[1-9][0-9]*"$/

type Headers = Record<string, string>
type Response = Promise<LightMyRequestResponse>

/** Requests with the API key and the given conditional headers. */
function client (app: App) {
  type Body = Record<string, unknown>
  type Method = 'GET' | 'HEAD' | 'POST' | 'PATCH' | 'DELETE'
  const call = async (method: Method, url: string, extra: Headers, payload?: Body): Response =>
    await app.inject({ method, url, headers: { ...apiKey(), ...extra }, ...(payload === undefined ? {} : { payload }) })
  return {
    get: async (url: string, extra: Headers = {}): Response => await call('GET', url, extra),
    head: async (url: string, extra: Headers = {}): Response => await call('HEAD', url, extra),
    post: async (url: string, payload: Body): Response => await call('POST', url, {}, payload),
    patch: async (url: string, payload: Body, extra: Headers = {}): Response =>
      await call('PATCH', url, extra, payload),
    delete: async (url: string, extra: Headers = {}): Response => await call('DELETE', url, extra),
    tagOf: async (url: string): Promise<string> => String((await call('GET', url, {})).headers.etag)
  }
}

const assetOf = (symbol: string, portfolioId: string): Record<string, unknown> =>
  ({ name: symbol, symbol, type: 'STOCK', quantity: 10, price: 30, portfolioId })

async function setup (app: App) {
  const api = client(app)
  const portfolio = (await api.post('/portfolios', { name: 'Tagged', userId: 'u' })).json()
  const portfolioId = portfolio.id as string
  const asset = (await api.post('/portfolio-assets', assetOf('PETR4', portfolioId))).json()
  const assetUrl = `/portfolio-assets/${asset.id as string}`
  return { api, portfolioId, portfolioUrl: `/portfolios/${portfolioId}`, assetUrl }
}

forEachEngine(t, 'GET /portfolios/:id has a strong ETag, changed by it and by any of its assets', async (t, engine) => {
  const { api, portfolioId, portfolioUrl, assetUrl } = await setup(await buildDataApp(t, engine))
  const tag = await api.tagOf(portfolioUrl)
  t.match(tag, STRONG_TAG)
  t.equal(await api.tagOf(portfolioUrl), tag, 'stable while nothing changes')

  await api.patch(assetUrl, { price: 31 })
  const afterAsset = await api.tagOf(portfolioUrl)
  t.not(afterAsset, tag, 'an asset\'s change is the portfolio\'s')
  await api.post('/portfolio-assets', assetOf('VALE3', portfolioId))
  const afterNewAsset = await api.tagOf(portfolioUrl)
  t.not(afterNewAsset, afterAsset, 'a new asset')
  const renamed = await api.patch(portfolioUrl, { name: 'Renamed' })
  t.not(renamed.headers.etag, afterNewAsset, 'a rename')
  t.equal(renamed.headers.etag, await api.tagOf(portfolioUrl), 'a PATCH answers the tag the portfolio now has')
  await api.delete(assetUrl)
  t.not(await api.tagOf(portfolioUrl), renamed.headers.etag, 'a deleted asset')
})

forEachEngine(t, 'If-None-Match still matching: 304, no body; a stale one: the whole answer', async (t, engine) => {
  const { api, portfolioUrl, assetUrl } = await setup(await buildDataApp(t, engine))
  const tag = await api.tagOf(portfolioUrl)
  for (const held of [tag, `"other", ${tag}`, `W/${tag}`, '*']) {
    const res = await api.get(portfolioUrl, { 'if-none-match': held })
    t.equal(res.statusCode, 304, held)
    t.equal(res.body, '', 'no body')
    t.equal(res.headers.etag, tag)
    t.equal(res.headers['content-type'], undefined, 'no content type')
    t.equal(res.headers['content-length'], undefined)
  }
  const head = await api.head(portfolioUrl, { 'if-none-match': tag })
  t.equal(head.statusCode, 304, 'HEAD too')
  t.equal(head.headers['content-length'], String(Buffer.byteLength((await api.get(portfolioUrl)).body)),
    'a HEAD\'s 304 may only say the length of the 200')
  const stale = await api.get(portfolioUrl, { 'if-none-match': '"stale"' })
  t.equal(stale.statusCode, 200)
  t.equal(stale.json().name, 'Tagged')
  t.equal(stale.headers.etag, tag)

  const assetTag = await api.tagOf(assetUrl)
  t.match(assetTag, STRONG_TAG)
  t.equal((await api.get(assetUrl, { 'if-none-match': assetTag })).statusCode, 304, 'an asset as well')
  const patched = await api.patch(assetUrl, { quantity: 11 })
  t.not(patched.headers.etag, assetTag)
  t.equal(patched.headers.etag, await api.tagOf(assetUrl), 'the PATCH answer\'s tag is the asset\'s GET tag')
  t.equal((await api.get('/portfolios/missing', { 'if-none-match': '*' })).statusCode, 404)
})

t.test('a tagged answer may be kept by the caller\'s cache only, revalidated before each use: ' +
  'Cache-Control private, no-cache on its 200, its 304 and the PATCH answers; the others no-store', async t => {
  const { api, portfolioUrl, assetUrl } = await setup(await buildTestApp(t))
  const kept = 'private, no-cache'
  for (const url of [portfolioUrl, assetUrl]) {
    const read = await api.get(url)
    t.equal(read.headers['cache-control'], kept, `GET ${url}`)
    const held = { 'if-none-match': String(read.headers.etag) }
    const polled = await api.get(url, held)
    t.equal(polled.statusCode, 304)
    t.equal(polled.headers['cache-control'], kept, 'a 304 says what the 200 would have said')
    t.equal((await api.head(url, held)).headers['cache-control'], kept, 'HEAD too')
  }
  const renamed = await api.patch(portfolioUrl, { name: 'Renamed' })
  t.equal(renamed.headers['cache-control'], kept, 'a PATCH answer whose ETag its handler set')
  t.equal((await api.patch(assetUrl, { quantity: 3 })).headers['cache-control'], kept, 'a PATCH answer tagged here')
  for (const [what, answer] of [
    ['a list', await api.get('/portfolios')],
    ['a read without an ETag', await api.get(`${portfolioUrl}/value`)],
    ['a create', await api.post('/portfolios', { name: 'Other', userId: 'u' })],
    ['an unknown id on a tagged route', await api.get('/portfolios/missing')],
    ['a stale If-Match', await api.patch(assetUrl, { quantity: 4 }, { 'if-match': '"stale"' })]
  ] as const) {
    t.equal(answer.headers['cache-control'], 'no-store', what)
    t.equal(answer.headers.etag, undefined, `${what}: no ETag`)
  }
})

forEachEngine(t, 'If-Match: the later of two edits of one version is 412 and changes nothing', async (t, engine) => {
  const { api, portfolioUrl, assetUrl } = await setup(await buildDataApp(t, engine))
  // Two tabs read the portfolio; the first saves.
  const seen = await api.tagOf(portfolioUrl)
  const first = await api.patch(portfolioUrl, { name: 'Tab one' }, { 'if-match': seen })
  t.equal(first.statusCode, 200)
  const second = await api.patch(portfolioUrl, { name: 'Tab two' }, { 'if-match': seen })
  t.equal(second.statusCode, 412)
  assertErrorBody(t, second.json(), 412, portfolioUrl)
  t.equal(second.json().code, 'PRECONDITION_FAILED')
  t.equal((await api.get(portfolioUrl)).json().name, 'Tab one', 'the first edit stands')
  // With the tag the first edit answered, the second tab can save.
  const retried = await api.patch(portfolioUrl, { name: 'Tab two' }, { 'if-match': String(first.headers.etag) })
  t.equal(retried.statusCode, 200)

  const assetSeen = await api.tagOf(assetUrl)
  t.equal((await api.patch(assetUrl, { quantity: 5 }, { 'if-match': assetSeen })).statusCode, 200)
  t.equal((await api.patch(assetUrl, { quantity: 50 }, { 'if-match': assetSeen })).statusCode, 412)
  t.equal((await api.get(assetUrl)).json().quantity, 5)
  const weak = await api.patch(assetUrl, { quantity: 6 }, { 'if-match': `W/${await api.tagOf(assetUrl)}` })
  t.equal(weak.statusCode, 412, 'If-Match compares strongly: a weak tag never matches')
  t.equal((await api.patch(assetUrl, { quantity: 7 }, { 'if-match': '*' })).statusCode, 200, '* matches any version')
  const noTag = await api.patch(assetUrl, { quantity: 8 }, { 'if-match': 'no-tag-at-all' })
  t.equal(noTag.statusCode, 412, 'a field naming no tag')

  // An asset's change changes the portfolio's version too.
  const before = await api.tagOf(portfolioUrl)
  await api.patch(assetUrl, { price: 1 })
  t.equal((await api.delete(portfolioUrl, { 'if-match': before })).statusCode, 412, 'a stale DELETE')
  t.equal((await api.get(portfolioUrl)).json().assets.length, 1, 'nothing deleted')
  t.equal((await api.delete(assetUrl, { 'if-match': assetSeen })).statusCode, 412)
  t.equal((await api.delete(assetUrl, { 'if-match': await api.tagOf(assetUrl) })).statusCode, 200)
  t.equal((await api.delete(portfolioUrl, { 'if-match': await api.tagOf(portfolioUrl) })).statusCode, 200)
  t.equal((await api.patch(portfolioUrl, { name: 'x' }, { 'if-match': before })).statusCode, 404,
    'a missing one is 404, whatever If-Match says')
})

forEachEngine(t, 'concurrent edits with one If-Match: exactly one succeeds', async (t, engine) => {
  const { api, portfolioUrl, assetUrl } = await setup(await buildDataApp(t, engine))
  const edits = [
    [portfolioUrl, (index: number) => ({ name: `Edit ${index}` })],
    [assetUrl, (index: number) => ({ quantity: index + 1 })]
  ] as const
  for (const [url, payloadOf] of edits) {
    const seen = await api.tagOf(url)
    const edit = async (index: number): Response => await api.patch(url, payloadOf(index), { 'if-match': seen })
    const sends = Array.from({ length: 10 }, async (_, index) => await edit(index))
    const answers = await Promise.all(sends)
    t.same(answers.map(answer => answer.statusCode).sort(), [200, ...Array<number>(9).fill(412)], url)
    const winner = answers.find(answer => answer.statusCode === 200)
    t.equal(await api.tagOf(url), winner?.headers.etag, 'the winner\'s edit is what is stored')
  }
})

t.test('CORS: a page may send Idempotency-Key, If-Match, If-None-Match and read ETag, Idempotent-Replayed', async t => {
  const app = await buildTestApp(t, { CORS_ORIGINS: 'https://app.example' })
  const requested = 'idempotency-key,if-match,if-none-match'
  const origin = 'https://app.example'
  const preflight = await app.inject({
    method: 'OPTIONS',
    url: '/portfolios',
    headers: { origin, 'access-control-request-method': 'PATCH', 'access-control-request-headers': requested }
  })
  t.equal(preflight.statusCode, 204)
  const allowed = String(preflight.headers['access-control-allow-headers']).toLowerCase().split(/,\s*/)
  for (const header of requested.split(',')) t.ok(allowed.includes(header), header)
  const answer = await app.inject({ method: 'GET', url: '/portfolios', headers: { ...apiKey(), origin } })
  const exposed = String(answer.headers['access-control-expose-headers']).toLowerCase().split(/,\s*/)
  for (const header of ['etag', 'idempotent-replayed']) t.ok(exposed.includes(header), header)
})

interface Operation {
  parameters?: Array<{ in: string, name: string }>
  responses: Record<string, { description: string, headers?: Record<string, unknown>, content?: unknown }>
}

t.test('the OpenAPI document lists the headers and the 304, 409, 412 and 422 answers', async t => {
  const app = await buildTestApp(t)
  const document = (await app.inject({ method: 'GET', url: '/docs/json' })).json()
  const paths = document.paths as Record<string, Record<string, Operation>>
  const headersOf = (operation: Operation | undefined): string[] =>
    (operation?.parameters ?? []).filter(parameter => parameter.in === 'header').map(parameter => parameter.name)
  const read = paths['/portfolios/{id}']?.get
  t.same(headersOf(read), ['if-none-match'])
  t.match(read?.responses['304'], { description: /Not modified/, headers: { ETag: {} } })
  t.equal(read?.responses['304']?.content, undefined, 'a 304 has no body')
  t.ok(read?.responses['200']?.headers?.ETag, 'the 200 documents its ETag')
  for (const status of ['200', '304']) {
    t.match(read?.responses[status]?.headers?.['Cache-Control'], { schema: { enum: ['private, no-cache'] } },
      `the ${status} documents its Cache-Control`)
  }
  const keyed = ['idempotency-key']
  const created = ['409', '422']
  for (const [path, method, headers, statuses] of [
    ['/portfolios', 'post', keyed, created],
    ['/portfolio-assets', 'post', keyed, created],
    ['/openfinance-excluded-transactions', 'post', keyed, created],
    ['/aggregator/connect_token', 'post', keyed, created],
    ['/portfolios/{id}', 'patch', [...keyed, 'if-match'], [...created, '412']],
    ['/portfolio-assets/{id}', 'patch', [...keyed, 'if-match'], [...created, '412']],
    ['/portfolios/{id}', 'delete', ['if-match'], ['412']],
    ['/portfolio-assets/{id}', 'delete', ['if-match'], ['412']]
  ] as const) {
    const operation = paths[path]?.[method]
    t.same(headersOf(operation).sort(), [...headers].sort(), `${method} ${path} headers`)
    for (const status of statuses) {
      const code = /IDEMPOTENCY_KEY_IN_FLIGHT|PRECONDITION_FAILED|IDEMPOTENCY_KEY_REUSED/
      t.match(operation?.responses[status]?.description, code, `${method} ${path} ${status}`)
    }
  }
})
