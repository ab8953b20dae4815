import { readFileSync } from 'node:fs'
import t from 'tap'
import { buildSchema, GraphQLEnumType, GraphQLObjectType, isNonNullType, type GraphQLField } from 'graphql'
import { SCHEMA_FILE, schemaSdl } from '../../../src/cli/graphql-schema.js'
import { buildTestApp } from '../../helper.js'

t.test('schema.graphql is the schema the service serves (npm run graphql:schema rewrites it)', async t => {
  t.equal(readFileSync(SCHEMA_FILE, 'utf8'), schemaSdl(), 'run `npm run graphql:schema` and commit schema.graphql')
})

t.test('the schema holds the documented names, arguments and types', async t => {
  const schema = buildSchema(readFileSync(SCHEMA_FILE, 'utf8'))
  const signature = (type: string, field: string): string => {
    const found = (schema.getType(type) as GraphQLObjectType).getFields()[field] as GraphQLField<unknown, unknown>
    const args = found.args.map(
      arg => `${arg.name}: ${String(arg.type)}${arg.defaultValue === undefined ? '' : ` = ${String(arg.defaultValue)}`}`
    )
    return `${field}${args.length > 0 ? `(${args.join(', ')})` : ''}: ${String(found.type)}`
  }
  const expected: Record<string, string[]> = {
    Query: [
      'portfolios(userId: ID, limit: Int = 100, offset: Int = 0): [Portfolio!]!',
      'portfolio(id: ID!): Portfolio',
      'asset(id: ID!): PortfolioAsset',
      'assets(portfolioId: ID, type: AssetType, limit: Int = 100, offset: Int = 0): [PortfolioAsset!]!',
      'quote(symbol: String!): AssetQuote',
      'stats: SystemStats!',
      'me: Principal',
      'excludedTransactions(clientId: ID!, limit: Int = 100, offset: Int = 0): [ExcludedTransaction!]!'
    ],
    Mutation: [
      'createPortfolio(input: CreatePortfolioInput!): Portfolio!',
      'updatePortfolio(id: ID!, input: UpdatePortfolioInput!): Portfolio',
      'deletePortfolio(id: ID!): Boolean!',
      'createAsset(input: CreateAssetInput!): PortfolioAsset!',
      'updateAsset(id: ID!, input: UpdateAssetInput!): PortfolioAsset',
      'deleteAsset(id: ID!): Boolean!',
      'addTransaction(assetId: ID!, input: CreateTransactionInput!): AssetTransaction!',
      'removeTransaction(assetId: ID!, id: ID!): Boolean!',
      'excludeTransaction(input: ExcludeTransactionInput!): ExcludedTransaction!',
      'deleteExcludedTransaction(id: ID!): Boolean!'
    ],
    Subscription: [
      'aggregatorItem(itemId: ID!): AggregatorItemStatus!',
      'portfolioValuation(id: ID!): PortfolioValuation!'
    ]
  }
  for (const [type, fields] of Object.entries(expected)) {
    for (const field of fields) t.equal(signature(type, field.split(/[(:]/)[0] as string), field)
  }
  const fieldsOf = (type: string): string[] => Object.keys((schema.getType(type) as GraphQLObjectType).getFields())
  t.same(fieldsOf('Portfolio'), [
    'id',
    'name',
    'description',
    'userId',
    'totalValue',
    'createdAt',
    'updatedAt',
    'assets',
    'value',
    'valuation',
    'performance',
    'income',
    'imports'
  ])
  const performance = (schema.getType('Portfolio') as GraphQLObjectType).getFields().performance
  t.same(performance?.args.map(arg => [arg.name, String(arg.type), arg.defaultValue]),
    [['range', 'PerformanceRange', 'ONE_YEAR']], 'Portfolio.performance(range: PerformanceRange = ONE_YEAR)')
  const income = (schema.getType('Portfolio') as GraphQLObjectType).getFields().income
  t.same(income?.args.map(arg => [arg.name, String(arg.type), arg.defaultValue]), [['year', 'Int', undefined]],
    'Portfolio.income(year: Int): this year when absent')
  t.same(fieldsOf('PortfolioAsset'), [
    'id',
    'name',
    'symbol',
    'type',
    'quantity',
    'price',
    'totalValue',
    'portfolioId',
    'eventsUnapplied',
    'eventsAsOf',
    'createdAt',
    'updatedAt',
    'investmentId',
    'priceSource',
    'asOf',
    'issuer',
    'dueDate',
    'rate',
    'rateType',
    'isin',
    'transactions',
    'quote',
    'dashboard',
    'events'
  ])
  t.same(fieldsOf('AssetTransaction'),
    ['id', 'assetId', 'type', 'date', 'quantity', 'price', 'fee', 'totalValue', 'createdAt', 'investmentTransactionId',
      'estimated'])
  t.equal(String((schema.getType('PortfolioAsset') as GraphQLObjectType).getFields().transactions?.type),
    '[AssetTransaction!]!')
  t.same(fieldsOf('AggregatorItemStatus'), ['itemId', 'status', 'event', 'updatedAt'])
  const status = (schema.getType('AggregatorItemStatus') as GraphQLObjectType).getFields()
  t.same(
    [status.itemId, status.status, status.event, status.updatedAt].map(field => String(field?.type)),
    ['ID!', 'ItemStatus', 'String!', 'String!']
  )
  // Closed sets are enums, as REST declares them; a token's claims are typed as REST documents them.
  const enumValues = (name: string): string[] => (schema.getType(name) as GraphQLEnumType).getValues().map(v => v.name)
  t.same(enumValues('ItemStatus'), [
    'UPDATED', 'UPDATING', 'WAITING_USER_INPUT', 'WAITING_USER_ACTION', 'MERGING', 'LOGIN_ERROR', 'OUTDATED'
  ])
  t.same(enumValues('TransactionType'), ['BUY', 'SELL'])
  t.same(enumValues('Currency'), ['BRL'])
  t.same(fieldsOf('TokenClaims'), ['iss', 'iat', 'exp', 'nbf', 'sub', 'jti', 'prv'])
  t.equal(String((schema.getType('Principal') as GraphQLObjectType).getFields().payload?.type), 'TokenClaims!')
  t.same(fieldsOf('PortfolioValuation'), [
    'portfolioId', 'currency', 'bookValue', 'marketValue', 'result', 'resultPercent', 'quotedAt', 'quoteSource',
    'unquotedSymbols', 'updatedAt'
  ])
  t.ok(isNonNullType((schema.getType('Portfolio') as GraphQLObjectType).getFields().value?.type))
})

t.test('OpenAPI and GraphQL describe the same fields in the same words', async t => {
  const app = await buildTestApp(t)
  const document = (await app.inject({ method: 'GET', url: '/docs/json' })).json()
  const schema = buildSchema(readFileSync(SCHEMA_FILE, 'utf8'))
  let compared = 0
  for (const [component, type] of [
    ['Portfolio', 'Portfolio'],
    ['PortfolioAsset', 'PortfolioAsset'],
    ['SystemStats', 'SystemStats'],
    ['AssetQuote', 'AssetQuote']
  ]) {
    const properties = document.components.schemas[component as string].properties as Record<
      string,
      { description?: string }
    >
    const fields = (schema.getType(type as string) as GraphQLObjectType).getFields()
    for (const [name, property] of Object.entries(properties)) {
      t.equal(fields[name]?.description ?? undefined, property.description, `${component as string}.${name}`)
      if (property.description !== undefined) compared++
    }
  }
  t.ok(compared >= 15, `${compared} descriptions shared`)
})
