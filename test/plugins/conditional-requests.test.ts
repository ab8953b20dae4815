import t from 'tap'
import type { App } from '../../src/app.js'
import { apiKey, assertErrorBody, buildDataApp, buildTestApp, forEachEngine } from '../helper.js'

const STRONG_TAG = /^"[A-Za-z0-9_-]{43}"$/

async function setup (app: App) {
  const portfolio = (await app.inject({ method: 'POST', url: '/portfolios', headers: apiKey(), payload: { name: 'Tagged', userId: 'u' } })).json()
  const asset = (await app.inject({
    method: 'POST', url: '/portfolio-assets', headers: apiKey(), payload: { name: 'PETR4', symbol: 'PETR4', type: 'STOCK', quantity: 10, price: 30, portfolioId: portfolio.id }
  })).json()
  const tagOf = async (url: string): Promise<string> => String((await app.inject({ method: 'GET', url, headers: apiKey() })).headers.etag)
  return { portfolioUrl: `/portfolios/${portfolio.id as string}`, assetUrl: `/portfolio-assets/${asset.id as string}`, tagOf }
}

forEachEngine(t, 'GET /portfolios/:id has a strong ETag that changes with the portfolio and with any of its assets', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const { portfolioUrl, assetUrl, tagOf } = await setup(app)
  const tag = await tagOf(portfolioUrl)
  t.match(tag, STRONG_TAG)
  t.equal(await tagOf(portfolioUrl), tag, 'stable while nothing changes')

  await app.inject({ method: 'PATCH', url: assetUrl, headers: apiKey(), payload: { price: 31 } })
  const afterAsset = await tagOf(portfolioUrl)
  t.not(afterAsset, tag, 'an asset\'s change is the portfolio\'s')
  await app.inject({ method: 'POST', url: '/portfolio-assets', headers: apiKey(), payload: { name: 'VALE3', symbol: 'VALE3', type: 'STOCK', quantity: 1, price: 60, portfolioId: portfolioUrl.split('/')[2] } })
  const afterNewAsset = await tagOf(portfolioUrl)
  t.not(afterNewAsset, afterAsset, 'a new asset')
  const renamed = await app.inject({ method: 'PATCH', url: portfolioUrl, headers: apiKey(), payload: { name: 'Renamed' } })
  t.not(renamed.headers.etag, afterNewAsset, 'a rename')
  t.equal(renamed.headers.etag, await tagOf(portfolioUrl), 'a PATCH answers the tag the portfolio now has')
  await app.inject({ method: 'DELETE', url: assetUrl, headers: apiKey() })
  t.not(await tagOf(portfolioUrl), renamed.headers.etag, 'a deleted asset')
})

forEachEngine(t, 'If-None-Match that still matches is 304 without a body; a stale one gets the whole answer', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const { portfolioUrl, assetUrl, tagOf } = await setup(app)
  const tag = await tagOf(portfolioUrl)
  for (const held of [tag, `"other", ${tag}`, `W/${tag}`, '*']) {
    const res = await app.inject({ method: 'GET', url: portfolioUrl, headers: { ...apiKey(), 'if-none-match': held } })
    t.equal(res.statusCode, 304, held)
    t.equal(res.body, '', 'no body')
    t.equal(res.headers.etag, tag)
    t.equal(res.headers['content-type'], undefined, 'no content type')
    t.equal(res.headers['content-length'], undefined)
  }
  const head = await app.inject({ method: 'HEAD', url: portfolioUrl, headers: { ...apiKey(), 'if-none-match': tag } })
  t.equal(head.statusCode, 304, 'HEAD too')
  t.equal(head.headers['content-length'], String(Buffer.byteLength((await app.inject({ method: 'GET', url: portfolioUrl, headers: apiKey() })).body)),
    'a HEAD\'s 304 may only say the length of the 200')
  const stale = await app.inject({ method: 'GET', url: portfolioUrl, headers: { ...apiKey(), 'if-none-match': '"stale"' } })
  t.equal(stale.statusCode, 200)
  t.equal(stale.json().name, 'Tagged')
  t.equal(stale.headers.etag, tag)

  const assetTag = await tagOf(assetUrl)
  t.match(assetTag, STRONG_TAG)
  t.equal((await app.inject({ method: 'GET', url: assetUrl, headers: { ...apiKey(), 'if-none-match': assetTag } })).statusCode, 304, 'an asset as well')
  const patched = await app.inject({ method: 'PATCH', url: assetUrl, headers: apiKey(), payload: { quantity: 11 } })
  t.not(patched.headers.etag, assetTag)
  t.equal(patched.headers.etag, await tagOf(assetUrl), 'the PATCH answer\'s tag is the asset\'s GET tag')
  t.equal((await app.inject({ method: 'GET', url: '/portfolios/missing', headers: { ...apiKey(), 'if-none-match': '*' } })).statusCode, 404)
})

forEachEngine(t, 'If-Match: the later of two edits based on one version is 412 and changes nothing', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const { portfolioUrl, assetUrl, tagOf } = await setup(app)
  // Two tabs read the portfolio; the first saves.
  const seen = await tagOf(portfolioUrl)
  const first = await app.inject({ method: 'PATCH', url: portfolioUrl, headers: { ...apiKey(), 'if-match': seen }, payload: { name: 'Tab one' } })
  t.equal(first.statusCode, 200)
  const second = await app.inject({ method: 'PATCH', url: portfolioUrl, headers: { ...apiKey(), 'if-match': seen }, payload: { name: 'Tab two' } })
  t.equal(second.statusCode, 412)
  assertErrorBody(t, second.json(), 412, portfolioUrl)
  t.equal(second.json().code, 'PRECONDITION_FAILED')
  t.equal((await app.inject({ method: 'GET', url: portfolioUrl, headers: apiKey() })).json().name, 'Tab one', 'the first edit stands')
  // With the tag the first edit answered, the second tab can save.
  const retried = await app.inject({ method: 'PATCH', url: portfolioUrl, headers: { ...apiKey(), 'if-match': String(first.headers.etag) }, payload: { name: 'Tab two' } })
  t.equal(retried.statusCode, 200)

  const assetSeen = await tagOf(assetUrl)
  t.equal((await app.inject({ method: 'PATCH', url: assetUrl, headers: { ...apiKey(), 'if-match': assetSeen }, payload: { quantity: 5 } })).statusCode, 200)
  const lost = await app.inject({ method: 'PATCH', url: assetUrl, headers: { ...apiKey(), 'if-match': assetSeen }, payload: { quantity: 50 } })
  t.equal(lost.statusCode, 412)
  t.equal((await app.inject({ method: 'GET', url: assetUrl, headers: apiKey() })).json().quantity, 5)
  const weak = await app.inject({ method: 'PATCH', url: assetUrl, headers: { ...apiKey(), 'if-match': `W/${await tagOf(assetUrl)}` }, payload: { quantity: 6 } })
  t.equal(weak.statusCode, 412, 'If-Match compares strongly: a weak tag never matches')
  t.equal((await app.inject({ method: 'PATCH', url: assetUrl, headers: { ...apiKey(), 'if-match': '*' }, payload: { quantity: 7 } })).statusCode, 200, '* matches any version')

  // An asset's change changes the portfolio's version too.
  const before = await tagOf(portfolioUrl)
  await app.inject({ method: 'PATCH', url: assetUrl, headers: apiKey(), payload: { price: 1 } })
  t.equal((await app.inject({ method: 'DELETE', url: portfolioUrl, headers: { ...apiKey(), 'if-match': before } })).statusCode, 412, 'a stale DELETE')
  t.equal((await app.inject({ method: 'GET', url: portfolioUrl, headers: apiKey() })).json().assets.length, 1, 'nothing deleted')
  t.equal((await app.inject({ method: 'DELETE', url: assetUrl, headers: { ...apiKey(), 'if-match': assetSeen } })).statusCode, 412)
  t.equal((await app.inject({ method: 'DELETE', url: assetUrl, headers: { ...apiKey(), 'if-match': await tagOf(assetUrl) } })).statusCode, 200)
  t.equal((await app.inject({ method: 'DELETE', url: portfolioUrl, headers: { ...apiKey(), 'if-match': await tagOf(portfolioUrl) } })).statusCode, 200)
  t.equal((await app.inject({ method: 'PATCH', url: portfolioUrl, headers: { ...apiKey(), 'if-match': before }, payload: { name: 'x' } })).statusCode, 404, 'a missing one is 404, whatever If-Match says')
})

forEachEngine(t, 'concurrent edits with one If-Match: exactly one succeeds', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const { portfolioUrl, assetUrl, tagOf } = await setup(app)
  for (const [url, payloadOf] of [[portfolioUrl, (index: number) => ({ name: `Edit ${index}` })], [assetUrl, (index: number) => ({ quantity: index + 1 })]] as const) {
    const seen = await tagOf(url)
    const answers = await Promise.all(Array.from({ length: 10 }, (_, index) =>
      app.inject({ method: 'PATCH', url, headers: { ...apiKey(), 'if-match': seen }, payload: payloadOf(index) })))
    t.same(answers.map(answer => answer.statusCode).sort(), [200, ...Array<number>(9).fill(412)], url)
    const winner = answers.find(answer => answer.statusCode === 200)
    t.equal(await tagOf(url), winner?.headers.etag, 'the winner\'s edit is what is stored')
  }
})

t.test('CORS lets a page send Idempotency-Key, If-Match and If-None-Match and read ETag and Idempotent-Replayed', async t => {
  const app = await buildTestApp(t, { CORS_ORIGINS: 'https://app.example' })
  const preflight = await app.inject({
    method: 'OPTIONS',
    url: '/portfolios',
    headers: { origin: 'https://app.example', 'access-control-request-method': 'PATCH', 'access-control-request-headers': 'idempotency-key,if-match,if-none-match' }
  })
  t.equal(preflight.statusCode, 204)
  const allowed = String(preflight.headers['access-control-allow-headers']).toLowerCase().split(/,\s*/)
  for (const header of ['idempotency-key', 'if-match', 'if-none-match']) t.ok(allowed.includes(header), header)
  const answer = await app.inject({ method: 'GET', url: '/portfolios', headers: { ...apiKey(), origin: 'https://app.example' } })
  const exposed = String(answer.headers['access-control-expose-headers']).toLowerCase().split(/,\s*/)
  for (const header of ['etag', 'idempotent-replayed']) t.ok(exposed.includes(header), header)
})

t.test('the OpenAPI document lists the headers and the 304, 409, 412 and 422 answers', async t => {
  const app = await buildTestApp(t)
  type Operation = { parameters?: Array<{ in: string, name: string }>, responses: Record<string, { description: string, headers?: Record<string, unknown>, content?: unknown }> }
  const paths = (await app.inject({ method: 'GET', url: '/docs/json' })).json().paths as Record<string, Record<string, Operation>>
  const headersOf = (operation: Operation | undefined): string[] => (operation?.parameters ?? []).filter(parameter => parameter.in === 'header').map(parameter => parameter.name)
  const read = paths['/portfolios/{id}']?.get
  t.same(headersOf(read), ['if-none-match'])
  t.match(read?.responses['304'], { description: /Not modified/, headers: { ETag: {} } })
  t.equal(read?.responses['304']?.content, undefined, 'a 304 has no body')
  t.ok(read?.responses['200']?.headers?.ETag, 'the 200 documents its ETag')
  for (const [path, method, headers, statuses] of [
    ['/portfolios', 'post', ['idempotency-key'], ['409', '422']],
    ['/portfolio-assets', 'post', ['idempotency-key'], ['409', '422']],
    ['/openfinance-excluded-transactions', 'post', ['idempotency-key'], ['409', '422']],
    ['/aggregator/connect_token', 'post', ['idempotency-key'], ['409', '422']],
    ['/portfolios/{id}', 'patch', ['idempotency-key', 'if-match'], ['409', '412', '422']],
    ['/portfolio-assets/{id}', 'patch', ['idempotency-key', 'if-match'], ['409', '412', '422']],
    ['/portfolios/{id}', 'delete', ['if-match'], ['412']],
    ['/portfolio-assets/{id}', 'delete', ['if-match'], ['412']]
  ] as const) {
    const operation = paths[path]?.[method]
    t.same(headersOf(operation).sort(), [...headers].sort(), `${method} ${path} headers`)
    for (const status of statuses) t.match(operation?.responses[status]?.description, /IDEMPOTENCY_KEY_IN_FLIGHT|PRECONDITION_FAILED|IDEMPOTENCY_KEY_REUSED/, `${method} ${path} ${status}`)
  }
})
