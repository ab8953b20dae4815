import { existsSync, readFileSync } from 'node:fs'
import t from 'tap'
import { printSchema } from 'graphql'
import { buildApp, type App } from '../../src/app.js'
import { OPERATIONS } from '../../src/operations/index.js'
import type { Operation } from '../../src/operations/operation.js'
import { operationRoutes } from '../../src/plugins/operation-routes.js'
import { reusableModule } from '../../src/plugins/reusable-module.js'
import { buildGraphql } from '../../src/modules/graphql/schema.js'
import { apiKey, assertErrorBody, bearer, buildTestApp, testConfig, userToken } from '../helper.js'
import { portfolioWith } from '../fixtures/portfolios.js'
import { graphql } from '../domain/interfaces.js'
import { AllocationRepository } from '../fixtures/added-route/store.js'
import { AllocationService } from '../fixtures/added-route/domain.js'
import { allocationOperations } from '../fixtures/added-route/operations.js'

/*
 * docs/style.md, "Adding a route": a new route with its GraphQL twin is four source files. The
 * module of test/fixtures/added-route/ is those four — its schema, its repository's read, its
 * service's method and its declaration — and nothing else: the service's app serves the
 * declaration through REST and GraphQL, as it serves one more item of an existing list of
 * src/operations, which its module registers and GraphQL reads.
 */

const FIXTURE = new URL('../fixtures/added-route/', import.meta.url)

/** The service's app (PORTFOLIO_ACCESS=both), serving the declared operations and the added ones. */
async function appWith (added: (app: () => App) => Operation[]): Promise<App> {
  // The app is made with its operations; they run once it is.
  const operations = added(() => app)
  const config = testConfig({ PORTFOLIO_ACCESS: 'both' })
  const graphqlOptions = { ...config.modules.graphql, operations: [...OPERATIONS, ...operations] }
  const app = await buildApp({ ...config, modules: { ...config.modules, graphql: graphqlOptions } })
  // Stands for the portfolios module, which registers its file's declarations (src/modules/portfolios).
  const routes = reusableModule(async scope => { operationRoutes(scope, operations) }, { name: 'added-route' })
  await app.register(routes, { prefix: '/portfolios' })
  await app.ready()
  return app
}

const allocations = (app: () => App): Operation[] =>
  allocationOperations(new AllocationService(new AllocationRepository(() => app().store)))

t.test('an added operation is served through REST and GraphQL, documented in both', async t => {
  const app = await appWith(allocations)
  t.teardown(() => app.close())
  const { id } = await portfolioWith(app, [
    { symbol: 'PETR4', quantity: 10, price: 37.5 },
    { symbol: 'VALE3', quantity: 3, price: 61.01 },
    { symbol: 'HGLG11', quantity: 2, price: 160, type: 'FUND' }
  ])

  const answer = await app.inject({ url: `/portfolios/${id}/allocation/STOCK`, headers: apiKey() })
  t.equal(answer.statusCode, 200)
  t.same(answer.json(), { portfolioId: id, type: 'STOCK', assets: 2, totalValue: 558.03 })
  const invalid = await app.inject({ url: `/portfolios/${id}/allocation/SHARES`, headers: apiKey() })
  t.equal(invalid.statusCode, 400, 'its params are validated with its schema')
  assertErrorBody(t, invalid.json(), 400, `/portfolios/${id}/allocation/SHARES`)
  t.equal((await app.inject({ url: `/portfolios/${id}/allocation/STOCK` })).statusCode, 401, 'its scope guards it')
  const other = await app.inject({ url: `/portfolios/${id}/allocation/STOCK`, headers: bearer(userToken({ sub: 7 })) })
  t.equal(other.statusCode, 404, 'another user\'s portfolio is an unknown one')

  const query = 'query ($id: ID!) { portfolio(id: $id) { name allocation(type: FUND) { type assets totalValue } } }'
  const read = await graphql(app, 'portfolio', query, { id }, apiKey())
  t.same(read.value, { name: 'Carteira', allocation: { type: 'FUND', assets: 1, totalValue: 320 } })

  const document = (await app.inject({ url: '/docs/json' })).json() as {
    paths: Record<string, Record<string, { operationId: string, security: unknown, responses: object }>>
    components: { schemas: Record<string, unknown> }
  }
  const entry = document.paths['/portfolios/{id}/allocation/{type}']?.get
  t.equal(entry?.operationId, 'getPortfolioAllocation')
  t.same(entry?.security, [{ apiKey: [] }, { bearerAuth: [] }], 'documented with its scope\'s credentials')
  t.ok(entry?.responses !== undefined && '403' in entry.responses, 'and the 403 a user\'s token may get')
  t.ok(document.components.schemas.PortfolioTypeAllocation, 'its answer is a component')
})

t.test('its GraphQL field and type are in the schema; the service\'s schema does not have them', async t => {
  const sdl = printSchema(buildGraphql([...OPERATIONS, ...allocations(() => { throw new Error('not run') })]).schema)
  t.match(sdl, /type Portfolio \{[^}]*\n {2}allocation\(type: AssetType!\): PortfolioTypeAllocation!\n\}/)
  t.match(sdl, /"""What a portfolio holds of one asset type"""\ntype PortfolioTypeAllocation \{/)
  t.notMatch(printSchema(buildGraphql().schema), /allocation/)
  const queriesOnly = buildGraphql(OPERATIONS.filter(({ graphql }) => graphql?.query !== undefined)).schema
  t.equal(queriesOnly.getMutationType(), undefined, 'a root type without a declared field is left out')
  t.equal(queriesOnly.getSubscriptionType(), undefined)
})

t.test('every declared operation is served: its route by its module, its field by GraphQL', async t => {
  const app = await buildTestApp(t)
  const document = (await app.inject({ url: '/docs/json' })).json() as { paths: Record<string, object> }
  const served = new Set(Object.values(document.paths).flatMap(path => Object.values(path))
    .map(entry => (entry as { operationId: string }).operationId))
  const { schema } = buildGraphql()
  const typeOf = (of: unknown): string => of === undefined ? '' : (of as { title: string }).title
  for (const { rest, graphql } of OPERATIONS) {
    if (rest !== undefined) t.ok(served.has(rest.operationId), `${rest.operationId} is served`)
    if (graphql === undefined) continue
    const [type, name] = graphql.of !== undefined
      ? [typeOf(graphql.of), graphql.field]
      : graphql.query !== undefined
        ? ['Query', graphql.query]
        : graphql.mutation !== undefined ? ['Mutation', graphql.mutation] : ['Subscription', graphql.subscription]
    const parent = schema.getType(type) as { getFields: () => Record<string, unknown> } | undefined
    t.ok(parent?.getFields()[name ?? ''], `${type}.${name ?? ''} is in the schema`)
  }
})

t.test('docs/style.md, "Adding a route", names the four files this test adds, in its order', async t => {
  const style = readFileSync(new URL('../../docs/style.md', import.meta.url), 'utf8')
  const section = /^## Adding a route\n([\s\S]*?)(?=^## )/m.exec(style)?.[1] ?? ''
  const steps = [...section.matchAll(/^\d+\. `(src\/[\w/<>.-]+)`/gm)].map(([, path]) => path)
  t.same(steps, [
    'src/schemas/<domain>.ts',
    'src/store/<domain>.ts',
    'src/domain/<domain>.ts',
    'src/operations/<module>.ts'
  ], 'a schema, a repository method, a service method, a declaration: at most four source files')
  for (const [step, file] of ['schema.ts', 'store.ts', 'domain.ts', 'operations.ts'].entries()) {
    t.ok(existsSync(new URL(file, FIXTURE)), `step ${step + 1} is test/fixtures/added-route/${file}`)
    t.match(readFileSync(new URL(file, FIXTURE), 'utf8'), `"Adding a route", step ${step + 1} (${steps[step] ?? ''})`)
  }
})
