import t from 'tap'
import { apiKey, bearer, buildTestApp, clientToken, TEXTS, userToken } from '../helper.js'
import { assertSameRefusal, graphql, rest } from './interfaces.js'

/** Each API-key route and the GraphQL field over the same service call. */
const API_KEY_PAIRS = [
  { method: 'GET', url: '/portfolios', field: 'portfolios', query: '{ portfolios { id } }' },
  { method: 'GET', url: '/portfolios/p-1', field: 'portfolio', query: '{ portfolio(id: "p-1") { id } }' },
  { method: 'GET', url: '/portfolio-assets/a-1', field: 'asset', query: '{ asset(id: "a-1") { id } }' },
  {
    method: 'GET', url: '/portfolio-assets?portfolioId=p', field: 'assets', query: '{ assets(portfolioId: "p") { id } }'
  },
  {
    method: 'GET', url: '/portfolio-assets/price/VALE3', field: 'quote', query: '{ quote(symbol: "VALE3") { price } }'
  },
  { method: 'GET', url: '/stats', field: 'stats', query: '{ stats { totalPortfolios } }' },
  {
    method: 'POST',
    url: '/portfolios',
    payload: { name: 'Refused', userId: 'u' },
    field: 'createPortfolio',
    query: 'mutation { createPortfolio(input: { name: "Refused", userId: "u" }) { id } }'
  },
  { method: 'DELETE', url: '/portfolio-assets/a-1', field: 'deleteAsset', query: 'mutation { deleteAsset(id: "a-1") }' }
] as const

t.test('the API key is required by the services: missing or wrong, 401 API_KEY_INVALID on both', async t => {
  const app = await buildTestApp(t)
  const withoutKey: Array<[string, Record<string, string>]> = [
    ['no key', {}],
    ['a wrong key', apiKey('not-a-key')],
    ['a Bearer token instead', bearer(userToken())]
  ]
  for (const [name, headers] of withoutKey) {
    for (const pair of API_KEY_PAIRS) {
      const payload = 'payload' in pair ? pair.payload : undefined
      const viaRest = await rest(app, pair.method, pair.url, headers, payload)
      const viaGraphql = await graphql(app, pair.field, pair.query, {}, headers)
      t.test(`${name}: ${pair.method} ${pair.url} and ${pair.field}`, async t => {
        assertSameRefusal(t, viaRest, viaGraphql, 401, 'API_KEY_INVALID', TEXTS.apiKeyInvalid)
        t.equal(viaGraphql.value, null, 'GraphQL: the field is null')
        t.same(viaGraphql.errors[0]?.path, [pair.field], 'GraphQL: the error is the field\'s')
      })
    }
  }
  const stored = await rest(app, 'GET', '/portfolios', apiKey())
  t.same(stored.body, [], 'no refused create stored anything')
})

t.test('with the key, both interfaces serve the same fields', async t => {
  const app = await buildTestApp(t)
  for (const key of [apiKey(), apiKey('test-key-rotated')]) {
    const viaRest = await rest(app, 'GET', '/stats', key)
    const viaGraphql = await graphql(app, 'stats', '{ stats { totalPortfolios totalAssets } }', {}, key)
    t.equal(viaRest.status, 200)
    t.same(viaGraphql.errors, [])
    t.same(viaGraphql.value, { totalPortfolios: viaRest.body.totalPortfolios, totalAssets: viaRest.body.totalAssets })
  }
})

t.test('the Bearer token is required by the exclusion service: none (or an API key) is 401 TOKEN_INVALID', async t => {
  const app = await buildTestApp(t)
  const list = '{ excludedTransactions(clientId: "client-a") { id } }'
  const input = { client_id: 'c', transaction_id: 't', reason: 'r' }
  const exclude = 'mutation { excludeTransaction(input: { client_id: "c", transaction_id: "t", reason: "r" }) { id } }'
  for (const headers of [{}, apiKey(), bearer('not.a.token')]) {
    assertSameRefusal(t,
      await rest(app, 'GET', '/openfinance-excluded-transactions?client_id=client-a', headers),
      await graphql(app, 'excludedTransactions', list, {}, headers),
      401, 'TOKEN_INVALID', TEXTS.tokenInvalid)
    assertSameRefusal(t,
      await rest(app, 'POST', '/openfinance-excluded-transactions', headers, input),
      await graphql(app, 'excludeTransaction', exclude, {}, headers),
      401, 'TOKEN_INVALID', TEXTS.tokenInvalid)
  }
  const expired = bearer(clientToken({ sub: 'client-a', iatOffset: -7200, nbfOffset: -7200, expOffset: -3600 }))
  assertSameRefusal(t,
    await rest(app, 'GET', '/openfinance-excluded-transactions?client_id=client-a', expired),
    await graphql(app, 'excludedTransactions', list, {}, expired),
    401, 'TOKEN_EXPIRED', TEXTS.tokenExpired)
})
