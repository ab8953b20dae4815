import t from 'tap'
import { startFakeBrapi } from '../fixtures/fake-brapi.js'
import { apiKey, buildTestApp } from '../helper.js'
import { assertSameNotFound, assertSameValidation, graphql, rest } from './interfaces.js'

const QUOTE = 'query ($symbol: String!) { quote(symbol: $symbol) { symbol price currency lastUpdate source } }'

t.test('a ticker is upper-cased before the provider is asked, on both interfaces', async t => {
  const brapi = await startFakeBrapi(t)
  brapi.prices.set('PETR4', 37.42)
  brapi.prices.set('^BVSP', 128_500)
  const app = await buildTestApp(t, { QUOTES_PROVIDER: 'brapi', BRAPI_URL: brapi.url, BRAPI_TOKEN: 'token' })
  for (const symbol of ['petr4', 'Petr4', 'PETR4']) {
    const viaRest = await rest(app, 'GET', `/portfolio-assets/price/${symbol}`, apiKey())
    const viaGraphql = await graphql(app, 'quote', QUOTE, { symbol }, apiKey())
    t.equal(viaRest.status, 200, `REST ${symbol}`)
    t.same(viaGraphql.errors, [], `GraphQL ${symbol}`)
    t.same(viaGraphql.value, viaRest.body, `${symbol}: the same quote`)
    t.match(viaRest.body, { symbol: 'PETR4', price: 37.42, source: 'brapi.dev' })
  }
  const asked = brapi.requestsTo('/api/quote/')
    .map(request => decodeURIComponent(request.path.slice('/api/quote/'.length)))
  t.ok(asked.length > 0 && asked.every(ticker => ticker === 'PETR4'), `brapi was only asked for PETR4: ${asked.join()}`)
})

t.test('an unknown ticker is 404 on REST and null on GraphQL; a malformed one is 400 on both', async t => {
  const brapi = await startFakeBrapi(t)
  brapi.prices.set('NOPRICE3', null)
  const app = await buildTestApp(t, { QUOTES_PROVIDER: 'brapi', BRAPI_URL: brapi.url, BRAPI_TOKEN: 'token' })
  for (const symbol of ['unknown3', 'NOPRICE3']) {
    const viaRest = await rest(app, 'GET', `/portfolio-assets/price/${symbol}`, apiKey())
    assertSameNotFound(t, viaRest, await graphql(app, 'quote', QUOTE, { symbol }, apiKey()))
    const named = `Cotação não encontrada para ${symbol.toUpperCase()}`
    t.equal(viaRest.body.message, named, 'REST names the ticker, upper-cased')
  }
  const before = brapi.received.length
  assertSameValidation(t, await rest(app, 'GET', '/portfolio-assets/price/PETR4%2F..', apiKey()),
    await graphql(app, 'quote', QUOTE, { symbol: 'PETR4/..' }, apiKey()),
    ['symbol must match ^[A-Za-z0-9^][A-Za-z0-9.^=-]{0,19}$ regular expression'])
  t.equal(brapi.received.length, before, 'a malformed ticker never reaches the provider')
})
