import { randomUUID } from 'node:crypto'
import t, { type Test } from 'tap'
import type { App } from '../../src/app.js'
import type { Access, PortfolioScope } from '../../src/domain/access.js'
import { apiKey, bearer, buildDataApp, buildTestApp, clientToken, forEachEngine, silentLog, TEXTS } from '../helper.js'
import { ANA, asUser, BIA, holdingsOf, snapshotOf, twoUsers, unknownIds, type Holdings } from '../fixtures/owners.js'
import { openEventStream, type EventStream } from '../fixtures/event-stream.js'
import { wsClient } from '../fixtures/item-subscriptions.js'
import { assertSameRefusal, graphql, rest, type GraphqlAnswer, type RestAnswer } from './interfaces.js'

/*
 * Whose portfolios a caller reaches (docs/api.md#whose-portfolios), each rule through REST and
 * GraphQL with the same input: a user's token its own portfolios only, another user's records
 * answered as unknown ids, another `userId` refused, a client refused, the API key as before.
 */

const OTHER_USER = 'Acesso negado às carteiras de outro usuário'

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE'

/** One operation on a portfolio's records, on both interfaces, for the ids given. */
interface Operation {
  name: string
  rest: (ids: Holdings) => [Method, string, Record<string, unknown>?]
  graphql: (ids: Holdings) => [field: string, query: string, variables: Record<string, unknown>]
}

const PORTFOLIO_QUERY = 'query ($id: ID!) { portfolio(id: $id) { id } }'
const ASSET_QUERY = (fields: string): string => `query ($id: ID!) { asset(id: $id) { ${fields} } }`
const BUY = { type: 'BUY', date: '2025-01-02', quantity: 1, price: 10 }

/** Every read and write of one user's records by id, on both interfaces. */
const OPERATIONS: Operation[] = [
  {
    name: 'the portfolio',
    rest: ids => ['GET', `/portfolios/${ids.portfolioId}`],
    graphql: ids => ['portfolio', PORTFOLIO_QUERY, { id: ids.portfolioId }]
  },
  {
    name: 'its value / its assets',
    rest: ids => ['GET', `/portfolios/${ids.portfolioId}/value`],
    graphql: ids => ['portfolio', 'query ($id: ID!) { portfolio(id: $id) { assets { id } } }', { id: ids.portfolioId }]
  },
  {
    name: 'its valuation',
    rest: ids => ['GET', `/portfolios/${ids.portfolioId}/valuation`],
    graphql: ids => ['portfolio', 'query ($id: ID!) { portfolio(id: $id) { valuation { marketValue } } }',
      { id: ids.portfolioId }]
  },
  {
    name: 'its performance',
    rest: ids => ['GET', `/portfolios/${ids.portfolioId}/performance?range=1m`],
    graphql: ids => ['portfolio', 'query ($id: ID!) { portfolio(id: $id) { performance(range: ONE_MONTH) { range } } }',
      { id: ids.portfolioId }]
  },
  {
    name: 'a rename',
    rest: ids => ['PATCH', `/portfolios/${ids.portfolioId}`, { name: 'Tomada' }],
    graphql: ids => ['updatePortfolio',
      'mutation ($id: ID!) { updatePortfolio(id: $id, input: { name: "Tomada" }) { id } }', { id: ids.portfolioId }]
  },
  {
    name: 'an asset created in it',
    rest: ids => ['POST', '/portfolio-assets',
      { name: 'Vale', symbol: 'VALE3', type: 'STOCK', quantity: 1, price: 60, portfolioId: ids.portfolioId }],
    graphql: ids => ['createAsset',
      'mutation ($p: ID!) { createAsset(input: { name: "Vale", symbol: "VALE3", type: STOCK, quantity: 1, ' +
      'price: 60, portfolioId: $p }) { id } }', { p: ids.portfolioId }]
  },
  {
    name: 'the asset',
    rest: ids => ['GET', `/portfolio-assets/${ids.assetId}`],
    graphql: ids => ['asset', ASSET_QUERY('id'), { id: ids.assetId }]
  },
  {
    name: 'its transactions',
    rest: ids => ['GET', `/portfolio-assets/${ids.assetId}/transactions`],
    graphql: ids => ['asset', ASSET_QUERY('transactions { id }'), { id: ids.assetId }]
  },
  {
    name: 'its dashboard',
    rest: ids => ['GET', `/portfolio-assets/${ids.assetId}/dashboard`],
    graphql: ids => ['asset', ASSET_QUERY('dashboard { basicInfo { ticker } }'), { id: ids.assetId }]
  },
  {
    name: 'a change of quantity',
    rest: ids => ['PATCH', `/portfolio-assets/${ids.assetId}`, { quantity: 1 }],
    graphql: ids => ['updateAsset', 'mutation ($id: ID!) { updateAsset(id: $id, input: { quantity: 1 }) { id } }',
      { id: ids.assetId }]
  },
  {
    name: 'a buy',
    rest: ids => ['POST', `/portfolio-assets/${ids.assetId}/transactions`, BUY],
    graphql: ids => ['addTransaction',
      'mutation ($a: ID!, $i: CreateTransactionInput!) { addTransaction(assetId: $a, input: $i) { id } }',
      { a: ids.assetId, i: BUY }]
  },
  {
    name: 'a sale undone',
    rest: ids => ['DELETE', `/portfolio-assets/${ids.assetId}/transactions/${ids.transactionId}`],
    graphql: ids => ['removeTransaction', 'mutation ($a: ID!, $id: ID!) { removeTransaction(assetId: $a, id: $id) }',
      { a: ids.assetId, id: ids.transactionId }]
  },
  {
    name: 'the asset deleted',
    rest: ids => ['DELETE', `/portfolio-assets/${ids.assetId}`],
    graphql: ids => ['deleteAsset', 'mutation ($id: ID!) { deleteAsset(id: $id) }', { id: ids.assetId }]
  },
  {
    name: 'the portfolio deleted',
    rest: ids => ['DELETE', `/portfolios/${ids.portfolioId}`],
    graphql: ids => ['deletePortfolio', 'mutation ($id: ID!) { deletePortfolio(id: $id) }', { id: ids.portfolioId }]
  }
]

/** An answer without what names the moment or the request: what would tell two ids apart. */
function comparable (answer: RestAnswer | GraphqlAnswer): unknown {
  if ('body' in answer) {
    const { timestamp: _timestamp, path: _path, ...body } = answer.body as Record<string, unknown>
    return { status: answer.status, body }
  }
  return { status: answer.status, value: answer.value, errors: answer.errors }
}

async function both (
  app: App, operation: Operation, ids: Holdings, headers: Record<string, string>
): Promise<[RestAnswer, GraphqlAnswer]> {
  const [method, url, payload] = operation.rest(ids)
  const [field, query, variables] = operation.graphql(ids)
  return [await rest(app, method, url, headers, payload), await graphql(app, field, query, variables, headers)]
}

forEachEngine(t, 'another user\'s portfolio, asset and transactions, read or written, are answered as unknown ids ' +
  'on REST and GraphQL, and nothing changes', async (t, engine) => {
  const app = await buildDataApp(t, engine, { PORTFOLIO_ACCESS: 'user' })
  const ana = await holdingsOf(app, ANA)
  const bia = await holdingsOf(app, BIA)
  const before = await snapshotOf(app, bia)
  for (const operation of OPERATIONS) {
    const [restAnswer, graphqlAnswer] = await both(app, operation, bia, ana.headers)
    const [restUnknown, graphqlUnknown] = await both(app, operation, unknownIds(), ana.headers)
    t.test(operation.name, async t => {
      t.equal(restAnswer.status, 404, 'REST: 404')
      t.equal(restAnswer.code, 'NOT_FOUND', 'REST: NOT_FOUND')
      t.same(comparable(restAnswer), comparable(restUnknown), 'REST: the answer to an unknown id')
      t.same(comparable(graphqlAnswer), comparable(graphqlUnknown), 'GraphQL: the answer to an unknown id')
    })
  }
  t.same(await snapshotOf(app, bia), before, 'the other user\'s records are as they were')
  for (const operation of OPERATIONS.slice(0, 3)) {
    const [restAnswer, graphqlAnswer] = await both(app, operation, ana, ana.headers)
    t.equal(restAnswer.status, 200, `${operation.name}: the owner reaches it on REST`)
    t.same(graphqlAnswer.errors, [], `${operation.name}: and on GraphQL`)
    // An unreachable portfolio is null with no error: the owner's is there, its own.
    t.not(graphqlAnswer.value, null, `${operation.name}: GraphQL answers the owner's portfolio`)
    if (operation === OPERATIONS[0]) t.match(graphqlAnswer.value, { id: ana.portfolioId })
  }
})

forEachEngine(t, 'lists hold the user\'s own records; a userId other than its own is 403 FORBIDDEN_PRINCIPAL ' +
  'on both', async (t, engine) => {
  const app = await buildDataApp(t, engine, { PORTFOLIO_ACCESS: 'user' })
  const ana = await holdingsOf(app, ANA)
  const bia = await holdingsOf(app, BIA)
  const ids = (list: Array<{ id: string }>): string[] => list.map(record => record.id)

  for (const query of ['', `?userId=${ANA}`]) {
    const viaRest = await rest(app, 'GET', `/portfolios${query}`, ana.headers)
    const viaGraphql = await graphql(app, 'portfolios', 'query ($u: ID) { portfolios(userId: $u) { id } }',
      query === '' ? {} : { u: ANA }, ana.headers)
    t.same(ids(viaRest.body), [ana.portfolioId], `REST /portfolios${query}: its own`)
    t.same(ids(viaGraphql.value), [ana.portfolioId], `GraphQL portfolios${query}: its own`)
  }
  assertSameRefusal(t, await rest(app, 'GET', `/portfolios?userId=${BIA}`, ana.headers),
    await graphql(app, 'portfolios', `{ portfolios(userId: "${BIA}") { id } }`, {}, ana.headers),
    403, 'FORBIDDEN_PRINCIPAL', OTHER_USER)

  const assetLists: Array<[string, string]> = [
    ['/portfolio-assets', '{ assets { id } }'],
    ['/portfolio-assets/type/STOCK', '{ assets(type: STOCK) { id } }'],
    [`/portfolio-assets?portfolioId=${ana.portfolioId}`, `{ assets(portfolioId: "${ana.portfolioId}") { id } }`]
  ]
  for (const [url, query] of assetLists) {
    t.same(ids((await rest(app, 'GET', url, ana.headers)).body), [ana.assetId], `REST ${url}: its own`)
    t.same(ids((await graphql(app, 'assets', query, {}, ana.headers)).value), [ana.assetId], `GraphQL ${query}`)
  }
  const others = `/portfolio-assets?portfolioId=${bia.portfolioId}`
  t.same((await rest(app, 'GET', others, ana.headers)).body, [], 'REST: another user\'s portfolio has no assets')
  t.same((await graphql(app, 'assets', `{ assets(portfolioId: "${bia.portfolioId}") { id } }`, {}, ana.headers)).value,
    [], 'GraphQL: none either')

  const nested = await graphql(app, 'portfolios',
    '{ portfolios(limit: 5) { id assets { id transactions { id } dashboard { basicInfo { ticker } } } ' +
    'valuation { bookValue } } }',
    {}, ana.headers)
  t.same(nested.errors, [])
  t.same(ids(nested.value), [ana.portfolioId], 'the user\'s own portfolios')
  const [asset] = nested.value[0].assets as Array<{ id: string, transactions: unknown[], dashboard: unknown }>
  t.equal(nested.value[0].assets.length, 1)
  t.equal(asset?.id, ana.assetId, 'with its own assets')
  t.equal(asset?.transactions.length, 2, 'their transactions')
  t.match(asset?.dashboard, { basicInfo: { ticker: 'PETR4' } }, 'and dashboards')
})

t.test('creates: a userId other than the user\'s is 403, another user\'s portfolio 404, on both; ' +
  'nothing stored', async t => {
  const { app, ana, bia, before } = await twoUsers(t, { PORTFOLIO_ACCESS: 'both' })
  const stolen = { name: 'Alheia', userId: BIA }
  assertSameRefusal(t, await rest(app, 'POST', '/portfolios', ana.headers, stolen),
    await graphql(app, 'createPortfolio', 'mutation ($i: CreatePortfolioInput!) { createPortfolio(input: $i) { id } }',
      { i: stolen }, ana.headers), 403, 'FORBIDDEN_PRINCIPAL', OTHER_USER)
  const own = await rest(app, 'POST', '/portfolios', ana.headers, { name: 'Própria', userId: ` ${ANA} ` })
  t.equal(own.status, 201, 'its own id (trimmed, as every userId) creates')
  t.equal(own.body.userId, ANA)
  const operation = OPERATIONS.find(entry => entry.name === 'an asset created in it')
  if (operation === undefined) throw new Error('no create operation')
  const [viaRest, viaGraphql] = await both(app, operation, bia, ana.headers)
  assertSameRefusal(t, viaRest, viaGraphql, 404, 'NOT_FOUND', 'Portfolio não encontrado')
  t.same(await snapshotOf(app, bia), before, 'nothing was stored in the other user\'s portfolio')
  const listed = await rest(app, 'GET', `/portfolios?userId=${BIA}`, apiKey())
  t.same(listed.body.map((portfolio: { id: string }) => portfolio.id), [bia.portfolioId], 'nor for the other user')
})

t.test('the credential: a client token 403, the API key and the token as PORTFOLIO_ACCESS says, ' +
  '/stats the key\'s only, quotes for users too; the same on both interfaces', async t => {
  const portfolioList: Operation = {
    name: 'the list',
    rest: () => ['GET', '/portfolios'],
    graphql: () => ['portfolios', '{ portfolios { id userId } }', {}]
  }
  const quote: Operation = {
    name: 'a quote',
    rest: () => ['GET', '/portfolio-assets/price/PETR4'],
    graphql: () => ['quote', '{ quote(symbol: "PETR4") { symbol } }', {}]
  }
  const stats: Operation = {
    name: 'the statistics',
    rest: () => ['GET', '/stats'],
    graphql: () => ['stats', '{ stats { totalPortfolios } }', {}]
  }
  const none = unknownIds()
  for (const mode of ['api-key', 'user', 'both'] as const) {
    await t.test(`PORTFOLIO_ACCESS=${mode}`, async t => {
      const app = await buildTestApp(t, { PORTFOLIO_ACCESS: mode })
      const writer = mode === 'api-key' ? apiKey() : asUser(ANA)
      await holdingsOf(app, ANA, writer)
      await holdingsOf(app, BIA, mode === 'api-key' ? apiKey() : asUser(BIA))
      const client = bearer(clientToken({ sub: ANA }))
      for (const operation of [portfolioList, quote]) {
        const [viaRest, viaGraphql] = await both(app, operation, none, client)
        if (mode === 'api-key') assertSameRefusal(t, viaRest, viaGraphql, 401, 'API_KEY_INVALID', TEXTS.apiKeyInvalid)
        else assertSameRefusal(t, viaRest, viaGraphql, 403, 'FORBIDDEN_PRINCIPAL', TEXTS.forbiddenPrincipal)
      }
      const [keyList, keyListGraphql] = await both(app, portfolioList, none, apiKey())
      const [userList, userListGraphql] = await both(app, portfolioList, none, asUser(ANA))
      if (mode === 'user') {
        assertSameRefusal(t, keyList, keyListGraphql, 401, 'TOKEN_INVALID', TEXTS.tokenInvalid)
      } else {
        t.same(keyList.body.map((portfolio: { userId: string }) => portfolio.userId), [ANA, BIA], 'the key: every user')
        t.same(keyListGraphql.value.map((portfolio: { userId: string }) => portfolio.userId), [ANA, BIA])
      }
      if (mode === 'api-key') {
        assertSameRefusal(t, userList, userListGraphql, 401, 'API_KEY_INVALID', TEXTS.apiKeyInvalid)
      } else {
        t.same(userList.body.map((portfolio: { userId: string }) => portfolio.userId), [ANA], 'the token: its own')
        t.same(userListGraphql.value, [{ id: userList.body[0].id, userId: ANA }])
        const [quoted, quotedGraphql] = await both(app, quote, none, asUser(BIA))
        t.equal(quoted.status, 200, 'a quote holds no user\'s data: a user has it')
        t.same(quotedGraphql.value, { symbol: 'PETR4' })
      }
      const [statsRest, statsGraphql] = await both(app, stats, none, asUser(ANA))
      assertSameRefusal(t, statsRest, statsGraphql, 401, 'API_KEY_INVALID', TEXTS.apiKeyInvalid)
      t.equal((await rest(app, 'GET', '/stats', apiKey())).status, 200, '/stats: the key')
      if (mode === 'both') {
        const wrongKey = { ...asUser(ANA), ...apiKey('not-a-key') }
        const [refused, refusedGraphql] = await both(app, portfolioList, none, wrongKey)
        assertSameRefusal(t, refused, refusedGraphql, 401, 'API_KEY_INVALID', TEXTS.apiKeyInvalid)
      }
    })
  }
})

t.test('an Idempotency-Key is its user\'s: another user sending the same key and request gets its own answer, ' +
  'never the first user\'s', async t => {
  const app = await buildTestApp(t, { PORTFOLIO_ACCESS: 'user' })
  const key = { 'idempotency-key': 'create-1' }
  const send = async (headers: Record<string, string>, userId: string) => await app.inject({
    method: 'POST', url: '/portfolios', headers: { ...headers, ...key }, payload: { name: 'Longo prazo', userId }
  })
  const first = await send(asUser(ANA), ANA)
  t.equal(first.statusCode, 201)
  const again = await send(asUser(ANA), ANA)
  t.equal(again.headers['idempotent-replayed'], 'true', 'the same user: replayed')
  t.equal(again.body, first.body)
  const own = await send(asUser(BIA), BIA)
  t.equal(own.statusCode, 201, 'another user\'s request under the same key: its own portfolio')
  t.equal(own.headers['idempotent-replayed'], undefined, 'not a replay, nor a reused key')
  t.not(own.json().id, first.json().id)
  t.equal(own.json().userId, BIA)
  const copied = await send(asUser('cris'), ANA)
  t.equal(copied.statusCode, 403, 'the first user\'s very request and key from a third user: run as its own, refused')
  t.equal(copied.headers['idempotent-replayed'], undefined, 'never the first user\'s answer')
  const listed = await app.inject({ url: '/portfolios', headers: asUser(ANA) })
  t.equal(listed.json().length, 1, 'the first user still has one portfolio')
})

t.test('ETags and the reads kept in memory answer only their owner', async t => {
  const app = await buildTestApp(t, { PORTFOLIO_ACCESS: 'both' })
  const ana = await holdingsOf(app, ANA)
  const url = `/portfolios/${ana.portfolioId}`
  // Read by its owner first: the detail and the value are then kept in the instance's memory.
  const read = await app.inject({ url, headers: ana.headers })
  await app.inject({ url: `${url}/value`, headers: ana.headers })
  const etag = read.headers.etag as string
  t.equal((await app.inject({ url, headers: { ...ana.headers, 'if-none-match': etag } })).statusCode, 304)
  const bia = asUser(BIA)
  const unknown = (await app.inject({ url: `/portfolios/${randomUUID()}`, headers: bia })).json()
  for (const [name, res] of [
    ['the detail', await app.inject({ url, headers: bia })],
    ['the detail with its tag', await app.inject({ url, headers: { ...bia, 'if-none-match': etag } })],
    ['the value', await app.inject({ url: `${url}/value`, headers: bia })],
    ['a rename with its tag', await app.inject({
      method: 'PATCH', url, headers: { ...bia, 'if-match': etag }, payload: { name: 'Tomada' }
    })],
    ['a delete with its tag', await app.inject({ method: 'DELETE', url, headers: { ...bia, 'if-match': etag } })]
  ] as const) {
    t.equal(res.statusCode, 404, `${name}: 404 to another user`)
    t.equal(res.json().message, unknown.message, `${name}: as an unknown id`)
  }
  const after = await app.inject({ url, headers: ana.headers })
  t.equal(after.headers.etag, etag, 'unchanged')
  t.equal(after.json().name, 'Carteira de ana')
  t.equal((await app.inject({ url, headers: apiKey() })).statusCode, 200, 'the key still reads it')
})

/** An Access whose portfolio scope is fixed: the domain's services asked directly. */
function scoped (scope: PortfolioScope): Access {
  return {
    apiKey: async () => { throw new Error('a portfolio method asks for the scope') },
    principal: async () => { throw new Error('a portfolio method asks for the scope') },
    portfolioScope: async () => scope,
    caller: () => 'scoped'
  }
}

t.test('the batches GraphQL\'s loaders call keep to the scope: another user\'s records hold nothing, ' +
  'as unknown ones', async t => {
  const app = await buildTestApp(t, { PORTFOLIO_ACCESS: 'user' })
  const ana = await holdingsOf(app, ANA)
  const bia = await holdingsOf(app, BIA)
  const asAna = scoped({ kind: 'owner', userId: ANA, endsAt: Date.now() + 60_000 })
  const { assets, transactions, dashboards, valuations } = app.domain
  const held = await assets.ofPortfolios(asAna, [ana.portfolioId, bia.portfolioId])
  t.equal(held.get(ana.portfolioId)?.length, 1, 'its own')
  t.same(held.get(bia.portfolioId), [], 'the other user\'s: none')
  const trades = await transactions.ofAssets(asAna, [ana.assetId, bia.assetId])
  t.equal(trades.get(ana.assetId)?.length, 2)
  t.same(trades.get(bia.assetId) ?? [], [])
  const asset = (await assets.get(scoped({ kind: 'every' }), bia.assetId)).value
  const [own, other] = await dashboards.ofAssets(asAna,
    [(await assets.get(asAna, ana.assetId)).value, asset], silentLog)
  t.match(own, { basicInfo: { ticker: 'PETR4' } })
  t.match(other, { code: 'BFF_NOT_FOUND', message: 'Ativo não encontrado' })
  const [mine, theirs] = await valuations.ofPortfolios(asAna, [ana.portfolioId, bia.portfolioId], silentLog)
  t.not(mine?.bookValue, 0)
  t.match(theirs, { portfolioId: bia.portfolioId, bookValue: 0, marketValue: 0 }, 'valued as an unknown portfolio')
})

/** A stream of the app (listening from the first call), or its refusal. */
async function streamOf (t: Test, app: App, url: string, headers: Record<string, string>): Promise<EventStream> {
  if (!app.server.listening) await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  return await openEventStream(t, `http://127.0.0.1:${port}${url}`, headers)
}

t.test('the live valuation: another user\'s portfolio is 404 as an unknown one (SSE) and NOT_FOUND (GraphQL), ' +
  'a client 403; the owner\'s is served', async t => {
  const app = await buildTestApp(t, { PORTFOLIO_ACCESS: 'user' })
  const ana = await holdingsOf(app, ANA)
  const bia = await holdingsOf(app, BIA)
  const other = await streamOf(t, app, `/portfolios/${bia.portfolioId}/valuation/stream`, ana.headers)
  const unknown = await streamOf(t, app, `/portfolios/${randomUUID()}/valuation/stream`, ana.headers)
  t.equal(other.status, 404)
  const { timestamp: _a, path: _b, ...otherBody } = other.body as Record<string, unknown>
  const { timestamp: _c, path: _d, ...unknownBody } = unknown.body as Record<string, unknown>
  t.same(otherBody, unknownBody, 'SSE: as an unknown portfolio')
  const client = await streamOf(t, app, `/portfolios/${ana.portfolioId}/valuation/stream`,
    bearer(clientToken({ sub: ANA })))
  t.match({ status: client.status, body: client.body }, { status: 403, body: { code: 'FORBIDDEN_PRINCIPAL' } })
  const own = await streamOf(t, app, `/portfolios/${ana.portfolioId}/valuation/stream`, ana.headers)
  t.match((await own.next(1))[0], { event: 'valuation', data: new RegExp(ana.portfolioId) })
  own.close()

  const socket = await wsClient(t, app, ana.headers)
  const subscribe = async (id: string): Promise<unknown> => await new Promise(resolve => {
    const stop = socket.subscribe({
      query: 'subscription ($id: ID!) { portfolioValuation(id: $id) { portfolioId } }', variables: { id }
    }, {
      next: value => { stop(); resolve(value) },
      error: resolve,
      complete: () => { resolve('complete') }
    })
  })
  t.match(await subscribe(bia.portfolioId), [{ extensions: { code: 'NOT_FOUND' } }], 'GraphQL: NOT_FOUND')
  t.match(await subscribe(ana.portfolioId), { data: { portfolioValuation: { portfolioId: ana.portfolioId } } })
})
