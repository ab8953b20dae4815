import t from 'tap'
import type { Client } from 'graphql-ws'
import type { App } from '../../src/app.js'
import { bearer, buildTestApp, clientToken, TEXTS, userToken } from '../helper.js'
import { ANA, asUser, BIA, holdingsOf, snapshotOf, twoUsers, unknownIds, type Holdings } from '../fixtures/owners.js'
import { openEventStream } from '../fixtures/event-stream.js'
import { wsClient } from '../fixtures/item-subscriptions.js'

/*
 * A user's token turned against other users' portfolios (OWASP API1, broken object-level
 * authorization; docs/api.md#whose-portfolios): every route that takes an id, every id guessed or
 * enumerated, a `userId` smuggled in, a client's token, a token expiring under an open stream.
 */

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE'

/** The body each portfolio operation that takes one is sent with: a valid one, so only the owner decides. */
const BODIES: Record<string, object> = {
  updatePortfolio: { name: 'Tomada' },
  updateAsset: { quantity: 1 },
  addAssetTransaction: { type: 'BUY', date: '2025-01-02', quantity: 1, price: 10 },
  importInvestments: { itemId: 'item-of-theirs' }
}

interface IdRoute { operationId: string, method: Method, url: (ids: Holdings) => string }

/**
 * Every operation of the portfolio modules that takes an id, from the OpenAPI document the app
 * serves: a route added later (a new read of a portfolio) is in it without a word here.
 */
function idRoutes (app: App): IdRoute[] {
  type Paths = Record<string, Record<string, { operationId: string, tags: string[] }>>
  const document = app.swagger() as unknown as { paths: Paths }
  const routes: IdRoute[] = []
  for (const [path, operations] of Object.entries(document.paths)) {
    if (!path.includes('{id}')) continue
    for (const [method, operation] of Object.entries(operations)) {
      if (!operation.tags.some(tag => tag === 'portfolios' || tag === 'portfolio-assets')) continue
      const assets = path.startsWith('/portfolio-assets/')
      routes.push({
        operationId: operation.operationId,
        method: method.toUpperCase() as Method,
        url: ids => path.replace('{id}', assets ? ids.assetId : ids.portfolioId)
          .replace('{transactionId}', ids.transactionId)
      })
    }
  }
  return routes
}

/**
 * An answer as it could tell two ids apart: its status, headers (but those of the moment: date,
 * request id, the caller's rate-limit count) and body (but its timestamp and path).
 */
async function answer (app: App, route: IdRoute, ids: Holdings, headers: Record<string, string>) {
  const payload = BODIES[route.operationId]
  const res = await app.inject({ method: route.method, url: route.url(ids), headers, payload })
  const { timestamp: _timestamp, path: _path, ...body } = res.json() as Record<string, unknown>
  const { date: _date, 'x-request-id': _id, 'x-ratelimit-remaining': _left, 'x-ratelimit-reset': _reset, ...kept } =
    res.headers
  return { status: res.statusCode, headers: kept, body }
}

t.test('user A\'s token on every route of user B\'s portfolio, asset and transaction: the answer to an id that ' +
  'does not exist, and nothing of B\'s changes', async t => {
  const { app, ana, bia, before } = await twoUsers(t, { PORTFOLIO_ACCESS: 'both' })
  const routes = idRoutes(app)
  t.ok(routes.length >= 13, `every route with an id (${routes.length})`)
  for (const route of routes) {
    if (['POST', 'PATCH'].includes(route.method) && BODIES[route.operationId] === undefined) {
      t.fail(`${route.operationId} takes a body this test does not know: add it to BODIES`)
      continue
    }
    const stolen = await answer(app, route, bia, ana.headers)
    const unknown = await answer(app, route, unknownIds(), ana.headers)
    t.equal(stolen.status, 404, `${route.operationId}: 404`)
    t.same(stolen, unknown, `${route.operationId}: the same status, headers and body as an unknown id`)
  }
  t.same(await snapshotOf(app, bia), before, 'B\'s records are as they were')
  const read: IdRoute = { operationId: 'getPortfolio', method: 'GET', url: ids => `/portfolios/${ids.portfolioId}` }
  const own = await answer(app, read, ana, ana.headers)
  t.equal(own.status, 200, 'A reaches its own')
})

t.test('ids guessed and enumerated: other users\' ids and random ones answer alike, on REST and GraphQL', async t => {
  const app = await buildTestApp(t, { PORTFOLIO_ACCESS: 'user' })
  const ana = await holdingsOf(app, ANA)
  const others = await Promise.all(['bia', 'cris', 'davi'].map(async user => await holdingsOf(app, user)))
  const guesses = [
    ...others,
    ...Array.from({ length: 30 }, unknownIds),
    // Ids that are not UUIDs, as a scanner tries them: a number, another user's id, an overlong one.
    { ...unknownIds(), portfolioId: '1', assetId: '1' },
    { ...unknownIds(), portfolioId: BIA, assetId: BIA },
    { ...unknownIds(), portfolioId: 'x'.repeat(64), assetId: 'x'.repeat(64) }
  ].sort(() => Math.random() - 0.5)
  const kinds = new Map<string, Set<string>>()
  const note = (kind: string, value: unknown): void => {
    kinds.set(kind, (kinds.get(kind) ?? new Set()).add(JSON.stringify(value)))
  }
  for (const ids of guesses) {
    for (const [kind, url] of [
      ['portfolio', `/portfolios/${ids.portfolioId}`],
      ['value', `/portfolios/${ids.portfolioId}/value`],
      ['asset', `/portfolio-assets/${ids.assetId}`],
      ['dashboard', `/portfolio-assets/${ids.assetId}/dashboard`]
    ] as const) {
      const res = await app.inject({ url, headers: ana.headers })
      const { timestamp: _timestamp, path: _path, ...body } = res.json() as Record<string, unknown>
      note(kind, { status: res.statusCode, body })
    }
    const graphql = await app.inject({
      method: 'POST',
      url: '/graphql',
      headers: ana.headers,
      payload: {
        query: 'query ($p: ID!, $a: ID!) { portfolio(id: $p) { id } asset(id: $a) { id } }',
        variables: { p: ids.portfolioId, a: ids.assetId }
      }
    })
    note('graphql', { status: graphql.statusCode, body: graphql.json() as unknown })
  }
  for (const [kind, answers] of kinds) {
    t.equal(answers.size, 1, `${kind}: one answer to every guess (${[...answers].join(' | ')})`)
  }
  t.match([...kinds.get('portfolio') ?? []][0], /"status":404/)
  t.same(JSON.parse([...kinds.get('graphql') ?? []][0] ?? '{}'),
    { status: 200, body: { data: { portfolio: null, asset: null } } })
})

t.test('a userId smuggled into queries and bodies never reaches another user\'s portfolios', async t => {
  const { app, ana, bia, before: biasBefore } = await twoUsers(t, { PORTFOLIO_ACCESS: 'user' })
  const queries = [
    `userId=${BIA}`, `userId=${BIA.toUpperCase()}`, `userId=%20${BIA}`, `userId=${BIA}&userId=${ANA}`,
    `userId=${ANA}&userId=${BIA}`, `userId[]=${BIA}`, `userId[0]=${BIA}`, `userId=${BIA}%00`
  ]
  for (const query of queries) {
    const res = await app.inject({ url: `/portfolios?${query}`, headers: ana.headers })
    t.ok([400, 403].includes(res.statusCode), `?${query}: refused (${res.statusCode})`)
    t.notMatch(res.body, bia.portfolioId, `?${query}: nothing of B's`)
  }
  const assets = await app.inject({
    url: `/portfolio-assets?portfolioId=${bia.portfolioId}&userId=${BIA}`,
    headers: ana.headers
  })
  t.equal(assets.statusCode, 400, 'the asset list takes no userId at all')

  const created: string[] = []
  const bodies: Array<[string, string, number]> = [
    ['another user', JSON.stringify({ name: 'x', userId: BIA }), 403],
    ['its own, with owner fields beside', JSON.stringify({ name: 'x', userId: ANA, user_id: BIA, owner: BIA }), 201],
    ['the other last of duplicate keys', `{"name":"x","userId":"${ANA}","userId":"${BIA}"}`, 403],
    ['its own last of duplicate keys', `{"name":"x","userId":"${BIA}","userId":"${ANA}"}`, 201],
    ['through __proto__', `{"name":"x","userId":"${ANA}","__proto__":{"userId":"${BIA}"}}`, 400]
  ]
  for (const [name, payload, status] of bodies) {
    const res = await app.inject({
      method: 'POST', url: '/portfolios', headers: { ...ana.headers, 'content-type': 'application/json' }, payload
    })
    t.equal(res.statusCode, status, `${name}: ${status}`)
    if (res.statusCode === 201) {
      t.equal(res.json().userId, ANA, `${name}: created for the token's user`)
      created.push(res.json().id as string)
    }
  }
  const moved = await app.inject({
    method: 'PATCH', url: `/portfolios/${ana.portfolioId}`, headers: ana.headers, payload: { name: 'y', userId: BIA }
  })
  t.equal(moved.json().userId, ANA, 'a PATCH cannot give a portfolio away (userId is not a property it takes)')
  const slipped = await app.inject({
    method: 'POST',
    url: '/portfolio-assets',
    headers: ana.headers,
    payload: {
      name: 'V', symbol: 'VALE3', type: 'STOCK', quantity: 1, price: 1, portfolioId: bia.portfolioId, userId: ANA
    }
  })
  t.equal(slipped.statusCode, 404, 'an asset into B\'s portfolio with A\'s userId beside: 404')
  const graphql = await app.inject({
    method: 'POST',
    url: '/graphql',
    headers: ana.headers,
    payload: {
      query: 'mutation ($i: CreatePortfolioInput!) { createPortfolio(input: $i) { id } }',
      variables: { i: { name: 'x', userId: ANA, owner: BIA } }
    }
  })
  t.equal(graphql.statusCode, 400, 'GraphQL refuses an input field it does not define')
  t.same(await snapshotOf(app, bia), biasBefore, 'B\'s records are as they were')
  const biaList = await app.inject({ url: '/portfolios', headers: bia.headers })
  t.same(biaList.json().map((portfolio: { id: string }) => portfolio.id), [bia.portfolioId], 'B owns nothing new')
  const anaList = await app.inject({ url: '/portfolios', headers: ana.headers })
  t.equal(anaList.json().length, 1 + created.length, 'what was created is A\'s')
})

t.test('a client\'s token, whatever its id, opens no portfolio route: 403 FORBIDDEN_PRINCIPAL', async t => {
  const app = await buildTestApp(t, { PORTFOLIO_ACCESS: 'both' })
  const bia = await holdingsOf(app, BIA)
  const routes: Array<{ method: Method, url: string, payload?: object }> = [
    ...idRoutes(app).map(route => ({ method: route.method, url: route.url(bia), payload: BODIES[route.operationId] })),
    { method: 'GET', url: '/portfolios' },
    { method: 'GET', url: `/portfolios?userId=${BIA}` },
    { method: 'GET', url: '/portfolio-assets' },
    { method: 'GET', url: '/portfolio-assets/type/STOCK' },
    { method: 'GET', url: '/portfolio-assets/price/PETR4' },
    { method: 'POST', url: '/portfolios', payload: { name: 'x', userId: BIA } },
    {
      method: 'POST',
      url: '/portfolio-assets',
      payload: { name: 'V', symbol: 'VALE3', type: 'STOCK', quantity: 1, price: 1, portfolioId: bia.portfolioId }
    }
  ]
  for (const sub of [BIA, 'client-9']) {
    const headers = bearer(clientToken({ sub }))
    for (const route of routes) {
      const res = await app.inject({ method: route.method, url: route.url, headers, payload: route.payload })
      t.match({ status: res.statusCode, body: res.json() },
        { status: 403, body: { code: 'FORBIDDEN_PRINCIPAL', message: TEXTS.forbiddenPrincipal } },
        `client ${sub}: ${route.method} ${route.url}`)
    }
  }
  t.same((await app.inject({ url: `/portfolios/${bia.portfolioId}`, headers: bia.headers })).json().name,
    'Carteira de bia', 'nothing changed')
})

/** A user token that expires `seconds` from now, and when (epoch ms). */
function expiringToken (sub: string, seconds: number): { headers: Record<string, string>, expiresAtMs: number } {
  const token = userToken({ sub, expOffset: seconds })
  const { exp } = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as { exp: number }
  return { headers: bearer(token), expiresAtMs: exp * 1000 }
}

t.test('a valuation stream opened with a user\'s token ends when the token expires (SSE: the response ends)',
  async t => {
    const app = await buildTestApp(t, { PORTFOLIO_ACCESS: 'user' })
    const ana = await holdingsOf(app, ANA)
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    // A token that expires 1–2 s from now; a machine too slow to open the stream within that tries a longer one.
    for (const seconds of [2, 5, 15]) {
      const { headers, expiresAtMs } = expiringToken(ANA, seconds)
      const stream = await openEventStream(t, `${base}/portfolios/${ana.portfolioId}/valuation/stream`, headers)
      if (stream.status === 401) continue
      t.equal(stream.status, 200)
      await stream.next(1)
      await stream.ended
      t.ok(Date.now() >= expiresAtMs - 1000, 'ended at the token\'s expiry, not before')
      const again = await app.inject({ url: `/portfolios/${ana.portfolioId}/valuation/stream`, headers })
      t.equal(again.json().code, 'TOKEN_EXPIRED', 'a reconnection with the same token is refused')
      const fresh = await openEventStream(t, `${base}/portfolios/${ana.portfolioId}/valuation/stream`, asUser(ANA))
      t.equal(fresh.status, 200, 'a fresh token opens it again')
      fresh.close()
      return
    }
    t.fail('no token lived long enough to open the stream')
  })

t.test('a portfolioValuation subscription with a user\'s token: its connection closes with 4401 when the token ' +
  'expires, and the subscription ends', async t => {
  const app = await buildTestApp(t, { PORTFOLIO_ACCESS: 'user' })
  const ana = await holdingsOf(app, ANA)
  for (const seconds of [2, 5, 15]) {
    const { headers, expiresAtMs } = expiringToken(ANA, seconds)
    // The close is awaited below: not an error to print.
    const client: Client = await wsClient(t, app, headers, () => {})
    const closed = new Promise<{ code: number, atMs: number }>(resolve => {
      client.on('closed', event => { resolve({ code: (event as { code: number }).code, atMs: Date.now() }) })
    })
    const deliveries: unknown[] = []
    const done = new Promise<unknown>(resolve => {
      client.subscribe({
        query: 'subscription ($id: ID!) { portfolioValuation(id: $id) { portfolioId bookValue } }',
        variables: { id: ana.portfolioId }
      }, { next: value => { deliveries.push(value) }, error: resolve, complete: () => { resolve('complete') } })
    })
    const first = await Promise.race([done, (async () => {
      for (let attempt = 0; attempt < 800 && deliveries.length === 0; attempt++) {
        await new Promise(resolve => setTimeout(resolve, 25))
      }
      return undefined
    })()])
    if (first !== undefined) {
      t.match(first, [{ extensions: { code: 'TOKEN_EXPIRED' } }], `expired before it subscribed (${seconds} s)`)
      continue
    }
    t.match(deliveries[0], { data: { portfolioValuation: { portfolioId: ana.portfolioId } } })
    const { code, atMs } = await closed
    t.equal(code, 4401, 'closed as unauthorized')
    t.ok(atMs >= expiresAtMs - 1000, 'at the token\'s expiry, not before')
    await done
    for (let attempt = 0; attempt < 400 && app.domain.liveValuations.streams > 0; attempt++) {
      await new Promise(resolve => setTimeout(resolve, 25))
    }
    t.equal(app.domain.liveValuations.streams, 0, 'its stream ended with it')
    return
  }
  t.fail('no token lived long enough to subscribe')
})

t.test('a token\'s sub as tymon writes it, an integer, is the owner of the userId of its string form', async t => {
  const app = await buildTestApp(t, { PORTFOLIO_ACCESS: 'user' })
  const seven = await holdingsOf(app, '7', bearer(userToken({ sub: 7 })))
  const res = await app.inject({ url: `/portfolios/${seven.portfolioId}`, headers: bearer(userToken({ sub: 7 })) })
  t.equal(res.statusCode, 200)
  t.equal(res.json().userId, '7')
})

t.test('an x-api-key the service does not check (PORTFOLIO_ACCESS=user) makes no new caller: the limit of open ' +
  'streams stays the user\'s', async t => {
  const app = await buildTestApp(t, { PORTFOLIO_ACCESS: 'user', VALUATION_STREAMS_PER_CREDENTIAL: '1' })
  const ana = await holdingsOf(app, ANA)
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  const url = `${base}/portfolios/${ana.portfolioId}/valuation/stream`
  const first = await openEventStream(t, url, { ...ana.headers, 'x-api-key': 'made-up-1' })
  t.equal(first.status, 200)
  await first.next(1)
  const second = await openEventStream(t, url, { ...ana.headers, 'x-api-key': 'made-up-2' })
  t.match({ status: second.status, body: second.body }, { status: 429, body: { code: 'RATE_LIMITED' } },
    'the second stream of the same user is past its limit, whatever key it sends beside')
  first.close()
})
