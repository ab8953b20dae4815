import t from 'tap'
import type { App } from '../../src/app.js'
import { apiKey, buildDataApp, forEachEngine } from '../helper.js'
import {
  assertSameNotFound, assertSameRefusal, assertSameValidation, graphql, rest, type GraphqlAnswer
} from './interfaces.js'

const FIELDS = 'id name symbol type quantity price totalValue portfolioId'
const CREATE = `mutation ($input: CreateAssetInput!) { createAsset(input: $input) { ${FIELDS} } }`

async function portfolioOf (app: App): Promise<string> {
  return (await rest(app, 'POST', '/portfolios', apiKey(), { name: 'Assets', userId: 'u' })).body.id
}

async function createViaGraphql (app: App, input: Record<string, unknown>): Promise<GraphqlAnswer> {
  return await graphql(app, 'createAsset', CREATE, { input }, apiKey())
}

forEachEngine(t, 'the symbol is upper-cased and texts trimmed on create, on both', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const portfolioId = await portfolioOf(app)
  const input = { name: '  Petrobras PN ', symbol: ' petr4 ', type: 'STOCK', quantity: 1, price: 1, portfolioId }
  const viaRest = await rest(app, 'POST', '/portfolio-assets', apiKey(), input)
  const viaGraphql = await createViaGraphql(app, input)
  t.equal(viaRest.status, 201)
  t.match(viaRest.body, { name: 'Petrobras PN', symbol: 'PETR4' }, 'REST')
  t.match(viaGraphql.value, { name: 'Petrobras PN', symbol: 'PETR4' }, 'GraphQL')
  const listed = await rest(app, 'GET', `/portfolio-assets?portfolioId=${portfolioId}`, apiKey())
  t.same(listed.body.map((asset: { symbol: string }) => asset.symbol), ['PETR4', 'PETR4'], 'stored upper-cased')
})

forEachEngine(t, 'money: totalValue is quantity × price, half away from zero to cents, on both', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const portfolioId = await portfolioOf(app)
  const cases = [
    [3, 10.005, 30.02], [1, 1.005, 1.01], [0.5, 0.01, 0.01], [0.49999999, 0.01, 0], [2, 38.45, 76.9]
  ] as const
  let total = 0
  for (const [quantity, price, totalValue] of cases) {
    const input = { name: 'A', symbol: 'TEST11', type: 'FUND', quantity, price, portfolioId }
    const viaRest = await rest(app, 'POST', '/portfolio-assets', apiKey(), input)
    t.equal(viaRest.body.totalValue, totalValue, `REST ${quantity} × ${price}`)
    t.equal((await createViaGraphql(app, input)).value.totalValue, totalValue, `GraphQL ${quantity} × ${price}`)
    total = Math.round((total + 2 * totalValue) * 100) / 100
  }
  const restTotal = (await rest(app, 'GET', `/portfolios/${portfolioId}/value`, apiKey())).body.totalValue
  const graphqlTotal = await graphql(app, 'portfolio', `{ portfolio(id: "${portfolioId}") { totalValue } }`, {},
    apiKey())
  t.equal(restTotal, total, 'REST: the portfolio total is the sum of its assets\' values')
  t.equal(graphqlTotal.value.totalValue, total, 'GraphQL: the same total')

  const tooPrecise = { name: 'A', symbol: 'A', type: 'STOCK', quantity: 1.123456789, price: 1, portfolioId }
  assertSameValidation(t, await rest(app, 'POST', '/portfolio-assets', apiKey(), tooPrecise),
    await createViaGraphql(app, tooPrecise), ['quantity must be a number conforming to the specified constraints'])
  const tooLarge = { name: 'A', symbol: 'A', type: 'STOCK', quantity: 1e12, price: 1e12, portfolioId }
  assertSameRefusal(t,
    await rest(app, 'POST', '/portfolio-assets', apiKey(), tooLarge), await createViaGraphql(app, tooLarge),
    400, 'BAD_REQUEST', 'totalValue must not be greater than 10000000000000')
  const after = await rest(app, 'GET', `/portfolio-assets?portfolioId=${portfolioId}`, apiKey())
  t.equal(after.body.length, 2 * cases.length, 'refused assets are not stored')
})

forEachEngine(t, 'an asset for an unknown portfolio is 404 NOT_FOUND on both, nothing stored', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  for (const portfolioId of ['no-such-portfolio', 'x'.repeat(64)]) {
    const input = { name: 'A', symbol: 'A', type: 'STOCK', quantity: 1, price: 1, portfolioId }
    const viaGraphql = await createViaGraphql(app, input)
    assertSameRefusal(t, await rest(app, 'POST', '/portfolio-assets', apiKey(), input), viaGraphql,
      404, 'NOT_FOUND', 'Portfolio não encontrado')
    t.same(viaGraphql.errors[0]?.path, ['createAsset'], 'GraphQL: a non-null field, so an error')
  }
  t.same((await rest(app, 'GET', '/portfolio-assets', apiKey())).body, [])
})

forEachEngine(t, 'an unknown or overlong asset id is 404 on REST, null or false on GraphQL', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  for (const id of ['no-such-asset', 'y'.repeat(65)]) {
    const url = `/portfolio-assets/${id}`
    assertSameNotFound(t, await rest(app, 'GET', url, apiKey()),
      await graphql(app, 'asset', 'query ($id: ID!) { asset(id: $id) { id } }', { id }, apiKey()))
    assertSameNotFound(t, await rest(app, 'PATCH', url, apiKey(), { quantity: 2 }),
      await graphql(app, 'updateAsset', 'mutation ($id: ID!) { updateAsset(id: $id, input: { quantity: 2 }) { id } }',
        { id }, apiKey()))
    assertSameNotFound(t, await rest(app, 'DELETE', url, apiKey()),
      await graphql(app, 'deleteAsset', 'mutation ($id: ID!) { deleteAsset(id: $id) }', { id }, apiKey()), false)
  }
  const asset = (await createViaGraphql(app, {
    name: 'A', symbol: 'TEST11', type: 'FUND', quantity: 1, price: 1, portfolioId: await portfolioOf(app)
  })).value
  const url = `/portfolio-assets/${asset.id as string}`
  t.equal((await rest(app, 'DELETE', url, apiKey())).status, 200, 'REST deletes it')
  assertSameNotFound(t, await rest(app, 'DELETE', `/portfolio-assets/${asset.id as string}`, apiKey()),
    await graphql(app, 'deleteAsset', `mutation { deleteAsset(id: "${asset.id as string}") }`, {}, apiKey()), false)
})
