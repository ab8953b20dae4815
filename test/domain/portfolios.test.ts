import t from 'tap'
import type { App } from '../../src/app.js'
import { apiKey, buildDataApp, forEachEngine } from '../helper.js'
import { assertSameNotFound, assertSameValidation, graphql, rest } from './interfaces.js'

const FIELDS = 'id name description userId totalValue'

async function createViaGraphql (app: App, input: Record<string, unknown>): Promise<Record<string, any>> {
  const query = `mutation ($input: CreatePortfolioInput!) { createPortfolio(input: $input) { ${FIELDS} } }`
  return (await graphql(app, 'createPortfolio', query, { input }, apiKey())).value
}

forEachEngine(t, 'texts are trimmed on create and on update, through both interfaces', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const input = { name: '  Longo prazo ', description: '  Ações  ', userId: ' ana ' }
  const viaRest = (await rest(app, 'POST', '/portfolios', apiKey(), input)).body
  const viaGraphql = await createViaGraphql(app, input)
  const trimmed = { name: 'Longo prazo', description: 'Ações', userId: 'ana', totalValue: 0 }
  t.match(viaRest, trimmed, 'REST')
  t.match(viaGraphql, trimmed, 'GraphQL')

  const update = { name: '\tRenomeada\n', description: '  nova ' }
  const restUpdate = await rest(app, 'PATCH', `/portfolios/${viaRest.id as string}`, apiKey(), update)
  const graphqlUpdate = await graphql(app, 'updatePortfolio',
    `mutation ($id: ID!, $input: UpdatePortfolioInput!) { updatePortfolio(id: $id, input: $input) { ${FIELDS} } }`,
    { id: viaGraphql.id, input: update }, apiKey())
  t.match(restUpdate.body, { name: 'Renomeada', description: 'nova' }, 'REST')
  t.match(graphqlUpdate.value, { name: 'Renomeada', description: 'nova' }, 'GraphQL')
  const cleared = await rest(app, 'PATCH', `/portfolios/${viaRest.id as string}`, apiKey(), { description: null })
  t.equal(cleared.body.description, null, 'a null description clears it')

  const blank = { name: '   ', userId: 'u' }
  assertSameValidation(t,
    await rest(app, 'POST', '/portfolios', apiKey(), blank),
    await graphql(app, 'createPortfolio',
      'mutation ($input: CreatePortfolioInput!) { createPortfolio(input: $input) { id } }', { input: blank }, apiKey()),
    ['name should not be empty'])
})

forEachEngine(t, 'an unknown or overlong id is 404 NOT_FOUND on REST, null or false on GraphQL', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const kept = (await rest(app, 'POST', '/portfolios', apiKey(), { name: 'Kept', userId: 'u' })).body
  for (const id of ['no-such-portfolio', 'x'.repeat(64), 'x'.repeat(65), 'x'.repeat(500)]) {
    t.test(`id of ${id.length} characters`, async t => {
      const url = `/portfolios/${id}`
      assertSameNotFound(t, await rest(app, 'GET', url, apiKey()),
        await graphql(app, 'portfolio', 'query ($id: ID!) { portfolio(id: $id) { id } }', { id }, apiKey()))
      assertSameNotFound(t, await rest(app, 'GET', url, apiKey()),
        await graphql(app, 'portfolio', 'query ($id: ID!) { portfolio(id: $id) { assets { id } } }', { id }, apiKey()))
      assertSameNotFound(t, await rest(app, 'PATCH', url, apiKey(), { name: 'n' }),
        await graphql(app, 'updatePortfolio',
          'mutation ($id: ID!) { updatePortfolio(id: $id, input: { name: "n" }) { id } }', { id }, apiKey()))
      assertSameNotFound(t, await rest(app, 'DELETE', url, apiKey()),
        await graphql(app, 'deletePortfolio', 'mutation ($id: ID!) { deletePortfolio(id: $id) }', { id }, apiKey()),
        false)
    })
  }
  await t.test('a known id is found by both', async t => {
    t.equal((await rest(app, 'GET', `/portfolios/${kept.id as string}`, apiKey())).body.name, 'Kept')
    const found = await graphql(app, 'portfolio', `{ portfolio(id: "${kept.id as string}") { name } }`, {}, apiKey())
    t.same(found.value, { name: 'Kept' })
  })
})

forEachEngine(t, 'page bounds: limit 1–1000, offset ≥ 0; the same page on both', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  for (const name of ['A', 'B', 'C', 'D']) await rest(app, 'POST', '/portfolios', apiKey(), { name, userId: 'pages' })
  const names = (list: Array<{ name: string }>): string[] => list.map(portfolio => portfolio.name)
  // Ordered by creation (ties, within a millisecond, by id): the pages are slices of the whole list.
  const all = names((await rest(app, 'GET', '/portfolios?userId=pages', apiKey())).body)
  t.same([...all].sort(), ['A', 'B', 'C', 'D'])
  for (const [limit, offset] of [[2, 1], [1000, 3], [1, 0], [5, 4]] as const) {
    const expected = all.slice(offset, offset + limit)
    const viaRest = await rest(app, 'GET', `/portfolios?userId=pages&limit=${limit}&offset=${offset}`, apiKey())
    const viaGraphql = await graphql(app, 'portfolios',
      'query ($limit: Int, $offset: Int) { portfolios(userId: "pages", limit: $limit, offset: $offset) { name } }',
      { limit, offset }, apiKey())
    t.same(names(viaRest.body), expected, `REST limit=${limit} offset=${offset}`)
    t.same(names(viaGraphql.value), expected, `GraphQL limit=${limit} offset=${offset}`)
  }
  const refusals = [
    ['limit=1001', { l: 1001 }, ['limit must not be greater than 1000']],
    ['limit=0', { l: 0 }, ['limit must not be less than 1']],
    ['offset=-1', { o: -1 }, ['offset must not be less than 0']]
  ] as const
  for (const [query, variables, phrases] of refusals) {
    for (const [path, field, document] of [
      ['/portfolios', 'portfolios', 'query ($l: Int, $o: Int) { portfolios(limit: $l, offset: $o) { id } }'],
      ['/portfolio-assets', 'assets', 'query ($l: Int, $o: Int) { assets(limit: $l, offset: $o) { id } }']
    ] as const) {
      assertSameValidation(t, await rest(app, 'GET', `${path}?${query}`, apiKey()),
        await graphql(app, field, document, variables, apiKey()), [...phrases])
    }
  }
})
