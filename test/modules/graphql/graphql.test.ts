import { createHash } from 'node:crypto'
import t, { type Test } from 'tap'
import { getIntrospectionQuery } from 'graphql'
import type { App } from '../../../src/app.js'
import { startFakeBrapi } from '../../fixtures/fake-brapi.js'
import {
  apiKey,
  assertErrorBody,
  bearer,
  buildDataApp,
  buildTestApp,
  clientToken,
  forEachEngine,
  TEST_API_KEYS,
  TEXTS,
  userToken
} from '../../helper.js'

interface GraphqlAnswer {
  status: number
  data?: Record<string, any> | null
  errors?: Array<{
    message: string
    path?: string[]
    locations?: Array<{ line: number, column: number }>
    extensions: { code: string, messages?: string[], [key: string]: unknown }
  }>
  headers: Record<string, unknown>
}

async function graphql (
  app: App, query: string, variables?: Record<string, unknown>, headers: Record<string, string> = apiKey()
): Promise<GraphqlAnswer> {
  const res = await app.inject({ method: 'POST', url: '/graphql', headers, payload: { query, variables } })
  return { status: res.statusCode, ...res.json(), headers: res.headers }
}

/** The one error of an answer, asserted to be about `path` with `code`. */
function assertFieldError (t: Test, answer: GraphqlAnswer, path: string, code: string, message?: string): void {
  t.equal(answer.status, 200, 'a field error is part of a 200 answer')
  t.equal(answer.errors?.length, 1, `one error: ${JSON.stringify(answer.errors)}`)
  t.same(answer.errors?.[0]?.path, [path])
  t.equal(answer.errors?.[0]?.extensions.code, code)
  if (message !== undefined) t.equal(answer.errors?.[0]?.message, message)
}

/** The one error of an answer refused before it ran (400, no `data`), with `code`, located in the document. */
function assertRefused (t: Test, answer: GraphqlAnswer, code: string, message?: string | RegExp): void {
  t.equal(answer.status, 400, 'refused before it ran')
  t.equal(answer.data, undefined, 'no data: nothing ran')
  t.equal(answer.errors?.length, 1, `one error: ${JSON.stringify(answer.errors)}`)
  t.equal(answer.errors?.[0]?.extensions.code, code)
  if (message !== undefined) t.match(answer.errors?.[0]?.message, message)
}

const PORTFOLIO_FIELDS = 'id name description userId totalValue createdAt updatedAt'
const ASSET_FIELDS = 'id name symbol type quantity price totalValue portfolioId eventsUnapplied eventsAsOf createdAt ' +
  'updatedAt investmentId priceSource asOf issuer dueDate rate rateType isin'

async function createPortfolio (app: App, input: Record<string, unknown>): Promise<Record<string, any>> {
  const answer = await graphql(
    app,
    `mutation ($input: CreatePortfolioInput!) { createPortfolio(input: $input) { ${PORTFOLIO_FIELDS} } }`,
    { input }
  )
  return answer.data?.createPortfolio
}

async function createAsset (app: App, input: Record<string, unknown>): Promise<Record<string, any>> {
  const answer = await graphql(
    app,
    `mutation ($input: CreateAssetInput!) { createAsset(input: $input) { ${ASSET_FIELDS} } }`,
    { input }
  )
  return answer.data?.createAsset
}

forEachEngine(t, 'queries answer what REST answers, behind the API key', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const portfolio = await createPortfolio(app, { name: '  Longo prazo ', description: 'Ações', userId: 'ana' })
  await createPortfolio(app, { name: 'Outra', userId: 'bia' })
  const asset = await createAsset(app, {
    name: 'Petrobras',
    symbol: ' petr4 ',
    type: 'STOCK',
    quantity: 3,
    price: 10.005,
    portfolioId: portfolio.id
  })
  await createAsset(app, {
    name: 'Tesouro',
    symbol: 'IPCA35',
    type: 'BOND',
    quantity: 1,
    price: 1000,
    portfolioId: portfolio.id
  })
  t.match(
    asset,
    { symbol: 'PETR4', totalValue: 30.02 },
    'the symbol is trimmed and upper-cased, the value rounded half away from zero'
  )

  const rest = (url: string) => app.inject({ method: 'GET', url, headers: apiKey() }).then(res => res.json())
  const list = await graphql(app, `{ portfolios(userId: "ana") { ${PORTFOLIO_FIELDS} } }`)
  t.same(list.data?.portfolios, await rest('/portfolios?userId=ana'), 'portfolios: the REST list, field for field')
  t.same((await graphql(app, '{ portfolios(limit: 1, offset: 1) { name } }')).data?.portfolios, [{ name: 'Outra' }])
  const one = await graphql(app, 'query ($id: ID!) { portfolio(id: $id) { id totalValue ' +
    `value { portfolioId totalValue currency lastUpdate } assets { ${ASSET_FIELDS} } } }`, { id: portfolio.id })
  const restValue = await rest(`/portfolios/${portfolio.id as string}/value`)
  t.same(one.data?.portfolio.value, restValue, 'value: REST\'s /value')
  t.equal(one.data?.portfolio.totalValue, 1030.02)
  const withoutTimes = (assets: Array<Record<string, unknown>>) =>
    assets.map(({ createdAt, updatedAt, ...rest }) => rest)
  t.same(
    withoutTimes(one.data?.portfolio.assets),
    await rest(`/portfolio-assets?portfolioId=${portfolio.id as string}`),
    'assets: the REST list of the portfolio'
  )
  t.same(
    one.data?.portfolio.assets.map((a: { symbol: string }) => a.symbol),
    ['PETR4', 'IPCA35'],
    'assets, oldest first'
  )
  t.same(
    (await graphql(app, `{ asset(id: "${asset.id as string}") { ${ASSET_FIELDS} } }`)).data?.asset,
    await rest(`/portfolio-assets/${asset.id as string}`)
  )
  t.same((await graphql(app, '{ assets(type: BOND) { symbol } }')).data?.assets, [{ symbol: 'IPCA35' }])
  t.same(
    (await graphql(app, `{ assets(portfolioId: "${portfolio.id as string}", limit: 1) { symbol } }`)).data?.assets,
    [{ symbol: 'PETR4' }]
  )
  const stats = await graphql(app, '{ stats { totalPortfolios totalAssets totalValue activeUsers lastUpdate } }')
  t.same({ ...stats.data?.stats, lastUpdate: 'x' }, { ...await rest('/stats'), lastUpdate: 'x' })
  const quote = await graphql(app, '{ quote(symbol: "vale3") { symbol price currency lastUpdate source } }')
  t.match(quote.data?.quote, { symbol: 'VALE3', price: Number, currency: 'BRL', source: /offline/ })

  t.equal(
    (await graphql(app, '{ portfolio(id: "no-such-id") { id } }')).data?.portfolio,
    null,
    'an unknown id is null, without an error'
  )
  const overlong = await graphql(
    app,
    `{ portfolio(id: "${'x'.repeat(65)}") { id } asset(id: "${'x'.repeat(65)}") { id } }`
  )
  t.same(overlong.data, { portfolio: null, asset: null }, 'an id longer than any id names nothing')
  t.equal(overlong.errors, undefined)

  for (const headers of [{}, apiKey('wrong-key')]) {
    const refused = await graphql(app, '{ portfolios { id } }', undefined, headers)
    assertFieldError(t, refused, 'portfolios', 'API_KEY_INVALID', TEXTS.apiKeyInvalid)
    t.equal(refused.data, null, 'a refused non-null field nulls its parent, as GraphQL says')
  }
  const partial = await graphql(
    app,
    '{ portfolio(id: "x") { id } asset(id: "y") { id } quote(symbol: "PETR4") { price } }',
    undefined,
    {}
  )
  t.same(partial.data, { portfolio: null, asset: null, quote: null })
  t.same(
    partial.errors?.map(error => [error.path?.[0], error.extensions.code]),
    [
      ['portfolio', 'API_KEY_INVALID'],
      ['asset', 'API_KEY_INVALID'],
      ['quote', 'API_KEY_INVALID']
    ],
    'every field says why'
  )
  const rotated = await graphql(app, '{ stats { totalPortfolios } }', undefined, apiKey(TEST_API_KEYS[1]))
  t.equal(rotated.data?.stats.totalPortfolios, 2, 'a rotated key works')
})

forEachEngine(t, 'arguments and inputs follow the REST rules, with VALIDATION_FAILED', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const portfolio = await createPortfolio(app, { name: 'P', userId: 'u' })
  const cases: Array<[string, Record<string, unknown>, string, string[]]> = [
    [
      'mutation ($input: CreatePortfolioInput!) { createPortfolio(input: $input) { id } }',
      { input: { name: '   ', userId: 'u' } },
      'createPortfolio',
      ['name should not be empty']
    ],
    [
      'mutation ($input: CreatePortfolioInput!) { createPortfolio(input: $input) { id } }',
      { input: { name: 'x'.repeat(201), userId: 'u', description: 'd'.repeat(2001) } },
      'createPortfolio',
      [
        'name must be shorter than or equal to 200 characters',
        'description must be shorter than or equal to 2000 characters'
      ]
    ],
    [
      'mutation ($id: ID!) { updatePortfolio(id: $id, input: {}) { id } }',
      { id: portfolio.id },
      'updatePortfolio',
      ['at least one of name, description must be provided']
    ],
    [
      'mutation ($input: CreateAssetInput!) { createAsset(input: $input) { id } }',
      { input: { name: 'A', symbol: 'A', type: 'STOCK', quantity: 0, price: -1, portfolioId: portfolio.id } },
      'createAsset',
      ['quantity must be greater than 0', 'price must not be less than 0']
    ],
    [
      'mutation ($input: CreateAssetInput!) { createAsset(input: $input) { id } }',
      { input: { name: 'A', symbol: 'A', type: 'STOCK', quantity: 1.123456789, price: 1, portfolioId: portfolio.id } },
      'createAsset',
      ['quantity must be a number conforming to the specified constraints']
    ],
    [
      'mutation { updateAsset(id: "x", input: { quantity: null }) { id } }',
      {},
      'updateAsset',
      ['quantity must be a number conforming to the specified constraints']
    ],
    ['{ portfolios(limit: 1001) { id } }', {}, 'portfolios', ['limit must not be greater than 1000']],
    ['{ assets(offset: -1) { id } }', {}, 'assets', ['offset must not be less than 0']],
    [
      '{ quote(symbol: "PETR4/../x") { price } }',
      {},
      'quote',
      ['symbol must match ^[A-Za-z0-9^][A-Za-z0-9.^=-]{0,19}$ regular expression']
    ]
  ]
  for (const [query, variables, path, messages] of cases) {
    const answer = await graphql(app, query, variables)
    assertRefused(t, answer, 'VALIDATION_FAILED', messages.join('; '))
    t.same(answer.errors?.[0]?.extensions.messages, messages, `${path}: the phrases of REST`)
    t.equal(answer.errors?.[0]?.locations?.[0]?.column, query.indexOf(path) + 1, `${path}: located at the field`)
  }
  const huge = await graphql(app, 'mutation ($input: CreateAssetInput!) { createAsset(input: $input) { id } }', {
    input: {
      name: 'A',
      symbol: 'A',
      type: 'STOCK',
      quantity: 1e12,
      price: 1e12,
      portfolioId: portfolio.id
    }
  })
  assertFieldError(t, huge, 'createAsset', 'BAD_REQUEST', 'totalValue must not be greater than 10000000000000')

  const typeErrors = await graphql(app, 'mutation { createAsset(input: ' +
    '{ name: "A", symbol: "A", type: SHARES, quantity: "1", price: 1, portfolioId: "p" }) { id } }')
  t.equal(typeErrors.status, 400, 'a document that fails the schema is refused before it runs')
  t.equal(typeErrors.data, undefined, 'and has no data')
  t.ok(
    typeErrors.errors?.length === 2 && typeErrors.errors.every(error => error.extensions.code === 'VALIDATION_FAILED'),
    JSON.stringify(typeErrors.errors)
  )
  const syntax = await graphql(app, '{ portfolios { id ')
  t.equal(syntax.status, 400)
  t.equal(syntax.errors?.[0]?.extensions.code, 'BAD_REQUEST')
  const variables = await graphql(app, 'query ($limit: Int) { portfolios(limit: $limit) { id } }', { limit: 'many' })
  t.equal(variables.status, 400)
  t.equal(variables.errors?.[0]?.extensions.code, 'VALIDATION_FAILED')
  const list = await graphql(app, '{ portfolios { name } }')
  t.same(list.data?.portfolios, [{ name: 'P' }], 'nothing invalid was stored')
})

forEachEngine(t, 'mutations write through the REST repositories', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const portfolio = await createPortfolio(app, { name: ' Renda ', userId: ' u1 ' })
  t.match(portfolio, { name: 'Renda', userId: 'u1', description: null, totalValue: 0 })
  const renamed = await graphql(app, 'mutation ($id: ID!) { updatePortfolio(id: $id, ' +
    `input: { name: " Renda fixa ", description: "IPCA" }) { ${PORTFOLIO_FIELDS} } }`, { id: portfolio.id })
  t.match(renamed.data?.updatePortfolio, { name: 'Renda fixa', description: 'IPCA' })
  t.same(
    (await graphql(app, 'mutation { updatePortfolio(id: "nope", input: { name: "x" }) { id } }')).data,
    { updatePortfolio: null },
    'an unknown portfolio: null'
  )

  const missingPortfolio = await graphql(app, 'mutation { createAsset(input: ' +
    '{ name: "A", symbol: "A", type: STOCK, quantity: 1, price: 1, portfolioId: "nope" }) { id } }')
  assertFieldError(t, missingPortfolio, 'createAsset', 'NOT_FOUND', 'Portfolio não encontrado')
  const asset = await createAsset(app, {
    name: 'Vale',
    symbol: 'vale3',
    type: 'STOCK',
    quantity: 10,
    price: 60,
    portfolioId: portfolio.id
  })
  const bought = await graphql(
    app,
    `mutation ($id: ID!) { updateAsset(id: $id, input: { quantity: 15, price: 62.5 }) { ${ASSET_FIELDS} } }`,
    { id: asset.id }
  )
  t.match(bought.data?.updateAsset, { quantity: 15, price: 62.5, totalValue: 937.5 })
  const lots = await app.inject({
    method: 'GET',
    url: `/portfolio-assets/${asset.id as string}/dashboard`,
    headers: apiKey()
  })
  t.same(
    lots.json().transactions.map((lot: { quantity: number }) => lot.quantity),
    [10, 5],
    'a higher quantity records a buy, as the PATCH route does'
  )
  t.same((await graphql(app, 'mutation { updateAsset(id: "nope", input: { quantity: 1 }) { id } }')).data, {
    updateAsset: null
  })
  t.same((await graphql(app, 'mutation { deleteAsset(id: "nope") }')).data, { deleteAsset: false })
  t.same((await graphql(app, `mutation { deleteAsset(id: "${asset.id as string}") }`)).data, { deleteAsset: true })
  t.same((await graphql(app, `mutation { deletePortfolio(id: "${portfolio.id as string}") }`)).data, {
    deletePortfolio: true
  })
  t.same(
    (await graphql(app, `mutation { deletePortfolio(id: "${portfolio.id as string}") }`)).data,
    { deletePortfolio: false },
    'already gone: false'
  )

  const refused = await graphql(
    app,
    'mutation { createPortfolio(input: { name: "x", userId: "u" }) { id } }',
    undefined,
    {}
  )
  assertFieldError(t, refused, 'createPortfolio', 'API_KEY_INVALID')
  t.same(
    (await graphql(app, '{ stats { totalPortfolios } }')).data?.stats,
    { totalPortfolios: 0 },
    'a refused mutation wrote nothing'
  )
})

forEachEngine(t, 'me and excluded transactions need a Bearer token; a client sees only its own', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const user = bearer(userToken({ sub: 7 }))
  const client = bearer(clientToken({ sub: 'client-a' }))
  const claims = 'payload { iss iat exp nbf sub jti prv }'
  const me = await graphql(app, `{ me { id type expiresAt issuedAt ${claims} } }`, undefined, user)
  const restMe = (await app.inject({ method: 'GET', url: '/auth/me', headers: user })).json() as
    { payload: Record<string, unknown> }
  // The same claims, typed: `sub` is an ID, which GraphQL answers as a string (tymon writes 7 or "7").
  t.same(me.data?.me, { ...restMe, payload: { ...restMe.payload, sub: '7' } }, 'me: REST\'s /auth/me')
  assertFieldError(t, await graphql(app, '{ me { id } }', undefined, {}), 'me', 'TOKEN_INVALID', TEXTS.tokenInvalid)
  assertFieldError(t, await graphql(app, '{ me { id } }', undefined, bearer(userToken({
    expOffset: -10,
    iatOffset: -100,
    nbfOffset: -100
  }))), 'me', 'TOKEN_EXPIRED', TEXTS.tokenExpired)
  assertFieldError(
    t,
    await graphql(app, '{ me { id } }', undefined, apiKey()),
    'me',
    'TOKEN_INVALID',
    TEXTS.tokenInvalid
  )

  const exclude = 'mutation ($input: ExcludeTransactionInput!) ' +
    '{ excludeTransaction(input: $input) { id client_id transaction_id reason excluded_at } }'
  const own = await graphql(app, exclude, {
    input: {
      client_id: 'client-a',
      transaction_id: ' tx-1 ',
      reason: 'Transferência'
    }
  }, client)
  t.match(own.data?.excludeTransaction, { client_id: 'client-a', transaction_id: 'tx-1', reason: 'Transferência' })
  const again = await graphql(app, exclude, {
    input: {
      client_id: 'client-a',
      transaction_id: 'tx-1',
      reason: 'Outra vez'
    }
  }, client)
  t.equal(again.data?.excludeTransaction.id, own.data?.excludeTransaction.id, 'idempotent per client and transaction')
  assertFieldError(t, await graphql(app, exclude, {
    input: {
      client_id: 'client-b',
      transaction_id: 'tx-2',
      reason: 'r'
    }
  }, client), 'excludeTransaction', 'FORBIDDEN', TEXTS.otherClient)
  const byUser = await graphql(app, exclude, {
    input: {
      client_id: 'client-b',
      transaction_id: 'tx-2',
      reason: 'r'
    }
  }, user)
  t.equal(byUser.data?.excludeTransaction.client_id, 'client-b', 'a user acts on any client')
  assertRefused(t, await graphql(app, exclude, {
    input: {
      client_id: '',
      transaction_id: 'tx',
      reason: 'r'
    }
  }, user), 'VALIDATION_FAILED')
  assertFieldError(t, await graphql(app, exclude, {
    input: {
      client_id: 'client-a',
      transaction_id: 'tx',
      reason: 'r'
    }
  }, apiKey()), 'excludeTransaction', 'TOKEN_INVALID')

  const list = '{ excludedTransactions(clientId: "client-a") { id transaction_id } }'
  t.same(
    (await graphql(app, list, undefined, client)).data?.excludedTransactions.map(
      (e: { transaction_id: string }) => e.transaction_id
    ),
    ['tx-1']
  )
  t.same((await graphql(app, list, undefined, user)).data?.excludedTransactions.length, 1)
  assertFieldError(
    t,
    await graphql(app, '{ excludedTransactions(clientId: "client-b") { id } }', undefined, client),
    'excludedTransactions',
    'FORBIDDEN'
  )
  assertRefused(
    t,
    await graphql(app, '{ excludedTransactions(clientId: "  ") { id } }', undefined, user),
    'VALIDATION_FAILED'
  )

  const remove = (id: string) => `mutation { deleteExcludedTransaction(id: "${id}") }`
  assertFieldError(
    t,
    await graphql(app, remove(byUser.data?.excludeTransaction.id), undefined, client),
    'deleteExcludedTransaction',
    'FORBIDDEN'
  )
  t.same((await graphql(app, remove(own.data?.excludeTransaction.id), undefined, client)).data, {
    deleteExcludedTransaction: true
  })
  t.same((await graphql(app, remove(own.data?.excludeTransaction.id), undefined, client)).data, {
    deleteExcludedTransaction: false
  })
  t.same((await graphql(app, remove(byUser.data?.excludeTransaction.id), undefined, user)).data, {
    deleteExcludedTransaction: true
  })
})

/** Counts of what the store and brapi did, from the metrics and the fake. */
async function storeStatements (app: App): Promise<number> {
  const text = await (await fetch(`${app.metricsAddress() ?? ''}/metrics`)).text()
  const line = text.split('\n').find(entry => entry.startsWith('bff_store_query_duration_seconds_count{outcome="ok"}'))
  return Number(line?.split(' ').at(-1) ?? 0)
}

forEachEngine(t, 'no N+1: ' +
  '20 portfolios of 10 assets cost a bounded number of statements and one brapi request', async (t, engine) => {
  const brapi = await startFakeBrapi(t)
  const symbols = ['PETR4', 'VALE3', 'ITUB4', 'BBAS3', 'BOVA11', 'HGLG11', 'WEGE3', 'ABEV3', 'MGLU3', '^BVSP']
  symbols.forEach((symbol, index) => brapi.prices.set(symbol, 10 + index))
  const app = await buildDataApp(t, engine, { METRICS_PORT: '0', QUOTES_PROVIDER: 'brapi', BRAPI_URL: brapi.url })
  for (let p = 0; p < 20; p++) {
    const portfolio = await createPortfolio(app, { name: `P${p}`, userId: 'u' })
    for (let a = 0; a < 10; a++) {
      await createAsset(app, {
        name: `A${a}`,
        symbol: a === 9 ? 'TESOURO SELIC' : symbols[a],
        type: 'STOCK',
        quantity: 1 + a,
        price: 5,
        portfolioId: portfolio.id
      })
    }
  }
  const before = await storeStatements(app)
  const answer = await graphql(app, '{ portfolios(limit: 20) { id totalValue value { totalValue } ' +
    'assets { id symbol quote { symbol price source } } } }')
  t.equal(answer.errors, undefined)
  t.equal(answer.data?.portfolios.length, 20)
  t.ok(answer.data?.portfolios.every((p: { assets: unknown[] }) => p.assets.length === 10))
  t.equal(await storeStatements(app) - before, 2, 'one statement for the portfolios, one for all their assets')
  t.equal(brapi.quoteRequests(), 1, 'one brapi request for every distinct symbol')
  t.equal(
    brapi.requestsTo('/api/quote/')[0]?.path.split('/').at(-1)?.split(',').length,
    9,
    'the nine tickers, each once; a symbol that is no ticker is not asked for'
  )
  // Assets created within one millisecond are listed by id: find them by symbol, not by place.
  const first = answer.data?.portfolios[0].assets as Array<{ symbol: string, quote: unknown }>
  const quoteOf = (symbol: string): unknown => first.find(asset => asset.symbol === symbol)?.quote
  t.match(quoteOf('VALE3'), { symbol: 'VALE3', price: 11, source: 'brapi.dev' })
  t.equal(quoteOf('TESOURO SELIC'), null, 'no quote for a symbol that is no ticker')

  const cached = await app.inject({ method: 'GET', url: '/portfolio-assets/price/VALE3', headers: apiKey() })
  t.equal(cached.json().price, 11)
  t.equal(brapi.quoteRequests(), 1, 'REST finds the quote GraphQL fetched: one cache')

  const firstId = answer.data?.portfolios[0].id as string
  const everyField = 'id name description userId totalValue createdAt updatedAt ' +
    'assets { id name symbol type quantity price totalValue portfolioId createdAt updatedAt }'
  const listed = await graphql(app, `{ portfolios(limit: 1) { ${everyField} } }`)
  const shapes: Array<[string, string]> = [
    ['directly', `query ($id: ID!) { portfolio(id: $id) { ${everyField} } }`],
    [
      'through a fragment',
      `query ($id: ID!) { portfolio(id: $id) { ...Whole } } fragment Whole on Portfolio { ${everyField} }`
    ],
    ['through an inline fragment', `query ($id: ID!) { portfolio(id: $id) { ... on Portfolio { ${everyField} } } }`]
  ]
  // Each shape twice: Mercurius runs a text's second request compiled by graphql-jit.
  // The first read is one statement, as REST's detail; then the instance answers it from memory.
  let expected = 1
  for (const [label, query] of shapes.flatMap(([label, query]): Array<[string, string]> => [
    [label, query],
    [`${label}, compiled`, query]
  ])) {
    const start = await storeStatements(app)
    const one = await graphql(app, query, { id: firstId })
    t.same(
      one.data?.portfolio,
      listed.data?.portfolios[0],
      `portfolio(id) with its assets ${label} answers what the list answers`
    )
    t.equal(
      (await storeStatements(app)) - start,
      expected,
      `the portfolio with its assets ${label}: ${expected === 1 ? 'one statement' : 'from memory'}`
    )
    expected = 0
  }
  const start = await storeStatements(app)
  t.same((await graphql(app, `{ portfolio(id: "${firstId}") { totalValue } }`)).data?.portfolio, {
    totalValue: listed.data?.portfolios[0].totalValue
  })
  t.same((await graphql(app, '{ portfolio(id: "nope") { assets { id } } }')).data, { portfolio: null })
  t.equal(
    (await storeStatements(app)) - start,
    1,
    'without assets from memory too (one read of a portfolio, whatever is asked of it); one that does not exist, ' +
    'one statement'
  )

  const mid = await storeStatements(app)
  const dashboards = await graphql(app, `{ portfolio(id: "${firstId}") { assets { symbol ` +
    'dashboard { basicInfo { ticker lastQuote quantity } transactions { quantity } } } } }')
  t.equal(dashboards.errors, undefined, JSON.stringify(dashboards.errors))
  t.equal(dashboards.data?.portfolio.assets.length, 10)
  t.match(dashboards.data?.portfolio.assets[1].dashboard.basicInfo, { ticker: 'VALE3', lastQuote: 11, quantity: 2 })
  t.equal(
    (await storeStatements(app)) - mid,
    2,
    'the portfolio with its assets from memory, and for every dashboard at once the holdings and their lots'
  )
  t.equal(
    brapi.quoteRequests(),
    2,
    "the assets' quotes were cached: one request more, for the index the dashboards compare with"
  )
  t.equal(brapi.received.filter(request => !request.query.has('range')).at(-1)?.path, '/api/quote/%5EBVSP')
})

t.test('depth, cost, introspection and GraphiQL', async t => {
  const app = await buildTestApp(t, { GRAPHQL_MAX_COST: '2000', METRICS_PORT: '0' })
  // graphql-armor counts each level of selection (fragments included) below the root: here 11.
  const deep = `{ portfolios { ${'... on Portfolio { '.repeat(9)}id${' }'.repeat(9)} } }`
  const tooDeep = await graphql(app, deep)
  t.equal(tooDeep.status, 400)
  t.equal(tooDeep.data, undefined, 'refused before execution')
  t.match(tooDeep.errors?.[0], {
    message: 'query depth (11) exceeds the query depth limit of 10',
    extensions: { code: 'BAD_REQUEST', maxDepth: 10 }
  })
  const deepEnough = deep.replace('... on Portfolio { id }', 'id')
  t.equal((await graphql(app, deepEnough)).status, 200, 'ten levels are fine')
  // Introspection's own levels are not counted: the query GraphiQL and graphql-codegen send (13 levels) works.
  const introspection = await graphql(app, getIntrospectionQuery())
  t.equal(introspection.status, 200)
  t.equal(introspection.data?.__schema.queryType.name, 'Query')

  const before = await storeStatements(app)
  const costly = await graphql(app, '{ portfolios(limit: 1000) { id assets { id quote { price } } } }')
  t.equal(costly.status, 400)
  t.match(costly.errors?.[0], {
    message: /^query cost \d+ exceeds the limit of 2000$/,
    extensions: { code: 'BAD_REQUEST', maxCost: 2000 }
  })
  t.equal(await storeStatements(app), before, 'nothing ran')
  const paged = 'query ($n: Int) { portfolios(limit: $n) { id assets { id } } }'
  t.equal((await graphql(app, paged, { n: 10 })).status, 200)
  const viaVariables = await graphql(app, paged, { n: 1000 })
  t.equal(
    viaVariables.status,
    400,
    'the page a variable asks for counts too, after the same text was priced with another'
  )
  t.equal((await graphql(app, paged, { n: 10 })).status, 200)
  const defaulted = 'query ($n: Int = 5000) { portfolios(limit: $n) { id } }'
  t.equal((await graphql(app, defaulted, { n: null })).status, 200, 'an explicit null page is the default 100')
  t.equal((await graphql(app, defaulted)).status, 400, 'a left-out variable takes its default, priced apart from null')
  const conditional =
    'query ($quotes: Boolean!) { portfolios(limit: 20) { id assets { id quote @include(if: $quotes) { price } } } }'
  t.equal((await graphql(app, conditional, { quotes: false })).status, 200)
  t.equal((await graphql(app, conditional, { quotes: true })).status, 400, 'a directive\'s condition counts')

  t.equal(
    (await graphql(app, '{ __type(name: "Portfolio") { name } }')).data?.__type.name,
    'Portfolio',
    'introspection outside production'
  )
  t.equal((await app.inject({ method: 'GET', url: '/graphiql' })).statusCode, 200, 'GraphiQL outside production')

  const production = await buildTestApp(t, {
    NODE_ENV: 'production',
    DATABASE_URL: 'sqlite::memory:',
    JWT_SECRET: 'p'.repeat(40)
  })
  const hidden = await graphql(production, '{ __schema { types { name } } }')
  t.equal(hidden.status, 400)
  t.match(hidden.errors?.[0], { message: /introspection/i, extensions: { code: 'VALIDATION_FAILED' } })
  t.equal((await production.inject({ method: 'GET', url: '/graphiql' })).statusCode, 404, 'no GraphiQL in production')
  t.equal(
    (await graphql(production, '{ stats { totalPortfolios } }')).data?.stats.totalPortfolios,
    0,
    'queries still work'
  )
})

t.test('GET queries, automatic persisted queries, body limit and rate limit', async t => {
  const app = await buildTestApp(t, { RATE_LIMIT_MAX: '12' })
  const get = await app.inject({
    method: 'GET',
    url: `/graphql?query=${encodeURIComponent('{ stats { totalPortfolios } }')}`,
    headers: apiKey()
  })
  t.equal(get.statusCode, 200)
  t.same(get.json(), { data: { stats: { totalPortfolios: 0 } } })
  const mutationOverGet = await app.inject({
    method: 'GET',
    url: `/graphql?query=${encodeURIComponent('mutation { deletePortfolio(id: "x") }')}`,
    headers: apiKey()
  })
  t.equal(mutationOverGet.statusCode, 405)
  t.match(mutationOverGet.json().errors[0], {
    message: 'Operation cannot be performed via a GET request',
    extensions: { code: 'BAD_REQUEST' }
  })
  const stray = await app.inject({
    method: 'GET',
    url: `/graphql?query=${encodeURIComponent('{ stats { totalPortfolios } }')}&user=1`,
    headers: apiKey()
  })
  t.equal(stray.statusCode, 400, 'an undefined query parameter is refused, as on every route')

  const query = '{ stats { totalAssets } }'
  const sha256Hash = createHash('sha256').update(query).digest('hex')
  const persisted = { persistedQuery: { version: 1, sha256Hash } }
  const unknown = await app.inject({
    method: 'POST',
    url: '/graphql',
    headers: apiKey(),
    payload: { extensions: persisted }
  })
  t.match(
    unknown.json(),
    { errors: [{ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } }] },
    'a hash the instance does not know: the client sends the text'
  )
  const registered = await app.inject({
    method: 'POST',
    url: '/graphql',
    headers: apiKey(),
    payload: { query, extensions: persisted }
  })
  t.same(registered.json(), { data: { stats: { totalAssets: 0 } } })
  const byHash = await app.inject({
    method: 'GET',
    url: `/graphql?extensions=${encodeURIComponent(JSON.stringify(persisted))}`,
    headers: apiKey()
  })
  t.same(byHash.json(), { data: { stats: { totalAssets: 0 } } }, 'then the hash alone, even over GET')
  const mismatch = await app.inject({
    method: 'POST',
    url: '/graphql',
    headers: apiKey(),
    payload: { query: '{ stats { totalValue } }', extensions: persisted }
  })
  t.equal(mismatch.json().errors[0].extensions.code, 'BAD_REQUEST', 'a text that does not match its hash')

  const tooLarge = await app.inject({
    method: 'POST',
    url: '/graphql',
    headers: { ...apiKey(), 'content-type': 'application/json' },
    payload: JSON.stringify({ query: `{ stats { totalValue } } # ${'x'.repeat(1024 * 1024)}` })
  })
  t.equal(tooLarge.statusCode, 413)
  assertErrorBody(t, tooLarge.json(), 413, '/graphql')
  const text = await app.inject({
    method: 'POST',
    url: '/graphql',
    headers: { ...apiKey(), 'content-type': 'text/plain' },
    payload: '{ stats { totalValue } }'
  })
  t.equal(text.statusCode, 415)

  let status = 200
  for (let call = 0; call < 12 && status !== 429; call++) {
    status = (await graphql(app, '{ stats { totalValue } }')).status
  }
  const limited = await app.inject({
    method: 'POST',
    url: '/graphql',
    headers: apiKey(),
    payload: { query: '{ stats { totalValue } }' }
  })
  t.equal(limited.statusCode, 429, 'the REST rate limit')
  assertErrorBody(t, limited.json(), 429, '/graphql')
  t.ok(Number(limited.headers['retry-after']) > 0)
})
