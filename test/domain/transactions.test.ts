import t from 'tap'
import type { App } from '../../src/app.js'
import { apiKey, buildDataApp, forEachEngine } from '../helper.js'
import {
  assertSameNotFound, assertSameRefusal, assertSameValidation, graphql, rest, type GraphqlAnswer
} from './interfaces.js'

const FIELDS = 'id assetId type date quantity price fee totalValue createdAt investmentTransactionId estimated'
const ADD = `mutation ($assetId: ID!, $input: CreateTransactionInput!) {
  addTransaction(assetId: $assetId, input: $input) { ${FIELDS} } }`
const REMOVE = 'mutation ($assetId: ID!, $id: ID!) { removeTransaction(assetId: $assetId, id: $id) }'

function daysAgo (days: number): string {
  return new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 10)
}

async function assetOf (app: App, quantity = 100): Promise<string> {
  const portfolioId = (await rest(app, 'POST', '/portfolios', apiKey(), { name: 'Tx', userId: 'u' })).body.id
  const input = { name: 'A', symbol: 'PETR4', type: 'STOCK', quantity, price: 32, portfolioId, date: daysAgo(40) }
  return (await rest(app, 'POST', '/portfolio-assets', apiKey(), input)).body.id
}

async function addViaGraphql (app: App, assetId: string, input: Record<string, unknown>): Promise<GraphqlAnswer> {
  return await graphql(app, 'addTransaction', ADD, { assetId, input }, apiKey())
}

async function holdingOf (app: App, assetId: string): Promise<{ quantity: number, price: number }> {
  const { quantity, price } = (await rest(app, 'GET', `/portfolio-assets/${assetId}`, apiKey())).body
  return { quantity, price }
}

forEachEngine(t, 'a transaction is the same through both: recorded, listed, undone, the asset following',
  async (t, engine) => {
    const app = await buildDataApp(t, engine)
    const viaRestAsset = await assetOf(app)
    const viaGraphqlAsset = await assetOf(app)
    const input = { type: 'BUY', date: daysAgo(20), quantity: 50, price: 36, fee: 4.9 }
    const viaRest = await rest(app, 'POST', `/portfolio-assets/${viaRestAsset}/transactions`, apiKey(), input)
    const viaGraphql = await addViaGraphql(app, viaGraphqlAsset, input)
    t.equal(viaRest.status, 201)
    t.same(viaGraphql.errors, [])
    const shape = ({ id, assetId, createdAt, ...rest }: Record<string, unknown>): object => rest
    t.same(shape(viaGraphql.value), shape(viaRest.body), 'the same transaction')
    t.same(await holdingOf(app, viaGraphqlAsset), await holdingOf(app, viaRestAsset), 'the same position')
    t.same(await holdingOf(app, viaRestAsset), { quantity: 150, price: 33.33333333 })

    const listed = await graphql(app, 'asset',
      `query ($id: ID!) { asset(id: $id) { transactions { ${FIELDS} } } }`, { id: viaRestAsset }, apiKey())
    const listedRest = await rest(app, 'GET', `/portfolio-assets/${viaRestAsset}/transactions`, apiKey())
    t.same(listed.value.transactions, listedRest.body, 'PortfolioAsset.transactions lists what REST lists')

    const restUndo = await rest(app, 'DELETE',
      `/portfolio-assets/${viaRestAsset}/transactions/${String(viaRest.body.id)}`, apiKey())
    const graphqlUndo = await graphql(app, 'removeTransaction', REMOVE,
      { assetId: viaGraphqlAsset, id: viaGraphql.value.id }, apiKey())
    t.equal(restUndo.status, 200)
    t.equal(graphqlUndo.value, true)
    t.same(await holdingOf(app, viaGraphqlAsset), { quantity: 100, price: 32 })
    t.same(await holdingOf(app, viaRestAsset), { quantity: 100, price: 32 })
  })

forEachEngine(t, 'a sale of more than is held, and a removal leaving less than nothing, are INSUFFICIENT_QUANTITY ' +
  'on both', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const assetId = await assetOf(app)
  const sale = { type: 'SELL', date: daysAgo(50), quantity: 1, price: 30 }
  const message = `Quantidade insuficiente: em ${daysAgo(50)} a posição ficaria negativa`
  assertSameRefusal(t, await rest(app, 'POST', `/portfolio-assets/${assetId}/transactions`, apiKey(), sale),
    await addViaGraphql(app, assetId, sale), 422, 'INSUFFICIENT_QUANTITY', message)
  const sold = await addViaGraphql(app, assetId, { ...sale, date: daysAgo(1), quantity: 100 })
  const [buy] = (await rest(app, 'GET', `/portfolio-assets/${assetId}/transactions`, apiKey())).body
  assertSameRefusal(t,
    await rest(app, 'DELETE', `/portfolio-assets/${assetId}/transactions/${String(buy.id)}`, apiKey()),
    await graphql(app, 'removeTransaction', REMOVE, { assetId, id: buy.id }, apiKey()),
    422, 'INSUFFICIENT_QUANTITY', `Quantidade insuficiente: em ${daysAgo(1)} a posição ficaria negativa`)
  t.same(await holdingOf(app, assetId), { quantity: 0, price: 0 }, 'the sale of everything stands')
  t.equal(sold.value.type, 'SELL')
})

forEachEngine(t, 'input rules and unknown ids answer the same on both', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const assetId = await assetOf(app)
  const url = `/portfolio-assets/${assetId}/transactions`
  const refused = { type: 'BUY', date: daysAgo(-3), quantity: 1.123456789, price: 1, fee: 0.005 }
  assertSameValidation(t, await rest(app, 'POST', url, apiKey(), refused), await addViaGraphql(app, assetId, refused), [
    'quantity must be a number conforming to the specified constraints',
    'fee must be a number conforming to the specified constraints',
    `maximal allowed date for date is ${daysAgo(0)}`
  ])
  const input = { type: 'BUY', date: daysAgo(1), quantity: 1, price: 1 }
  const unknownAsset = await addViaGraphql(app, 'no-such-asset', input)
  assertSameRefusal(t, await rest(app, 'POST', '/portfolio-assets/no-such-asset/transactions', apiKey(), input),
    unknownAsset, 404, 'NOT_FOUND', 'Ativo não encontrado')
  t.same(unknownAsset.errors[0]?.path, ['addTransaction'], 'GraphQL: a non-null field, so an error')
  for (const [assetOfIt, id] of [[assetId, 'no-such-transaction'], ['no-such-asset', 'x'], [assetId, 'y'.repeat(65)]]) {
    assertSameNotFound(t,
      await rest(app, 'DELETE', `/portfolio-assets/${String(assetOfIt)}/transactions/${String(id)}`, apiKey()),
      await graphql(app, 'removeTransaction', REMOVE, { assetId: assetOfIt, id }, apiKey()), false)
  }
  const portfolioId = (await rest(app, 'GET', `/portfolio-assets/${assetId}`, apiKey())).body.portfolioId
  const datedAsset = { name: 'B', symbol: 'B', type: 'STOCK', quantity: 1, price: 1, portfolioId, date: '1989-12-31' }
  assertSameValidation(t, await rest(app, 'POST', '/portfolio-assets', apiKey(), datedAsset),
    await graphql(app, 'createAsset', 'mutation ($input: CreateAssetInput!) { createAsset(input: $input) { id } }',
      { input: datedAsset }, apiKey()),
    ['minimal allowed date for date is 1990-01-01'])
  const noKey = await graphql(app, 'addTransaction', ADD, { assetId, input }, {})
  assertSameRefusal(t, await rest(app, 'POST', url, {}, input), noKey, 401, 'API_KEY_INVALID')
})
