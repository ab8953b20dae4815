import { GraphQLEnumType, GraphQLNonNull, GraphQLObjectType, GraphQLSchema } from 'graphql'
import { ASSET_TYPES, PRICE_SOURCES } from '../../schemas/asset.js'
import { MeSchema, PRINCIPAL_TYPES } from '../../schemas/auth.js'
import { TRANSACTION_TYPES } from '../../schemas/transaction.js'
import { CORPORATE_EVENT_TYPES, INCOME_STATUSES } from '../../schemas/corporate-events.js'
import { IMPORT_STATUSES } from '../../schemas/import.js'
import { ITEM_STATUSES } from '../../schemas/item-status.js'
import { PERFORMANCE_RANGE_NAMES, PERFORMANCE_RANGES, PortfolioPerformanceSchema } from '../../schemas/performance.js'
import { TypeBoxToGraphql } from '../../schemas/graphql.js'
import { OPERATIONS } from '../../operations/index.js'
import type { Operation } from '../../operations/operation.js'
import type { GraphqlContext } from './context.js'
import { operationFields, type OperationFields } from './fields.js'

/** The ranges of a performance, by GraphQL names (`ONE_YEAR`) whose values are REST's (`1y`). */
const PerformanceRangeEnum = new GraphQLEnumType({
  name: 'PerformanceRange',
  description: 'The period of a performance (REST\'s `range`: 1m, 3m, 6m, ytd, 1y, 5y, max)',
  values: Object.fromEntries(PERFORMANCE_RANGES.map(range => [PERFORMANCE_RANGE_NAMES[range], { value: range }]))
})

/** The schema, and what Mercurius and the operation guard need beside it. */
type GraphqlBuild = Pick<OperationFields, 'loaders' | 'rules'> & { schema: GraphQLSchema }

/**
 * The GraphQL schema (docs/api.md#graphql), its types made from the REST TypeBox schemas and its
 * fields from the declared operations (fields.ts) over the same domain services as REST. Services
 * come from the context (`ctx.domain`), so the schema itself can be built — and printed to
 * `schema.graphql` — without an app. `operations`: the service's, unless a host adds its own.
 */
export function buildGraphql (operations: readonly Operation[] = OPERATIONS): GraphqlBuild {
  const types = new TypeBoxToGraphql<GraphqlContext>({
    AssetType: ASSET_TYPES,
    PrincipalType: PRINCIPAL_TYPES,
    ItemStatus: ITEM_STATUSES,
    TransactionType: TRANSACTION_TYPES,
    ImportStatus: IMPORT_STATUSES,
    PriceSource: PRICE_SOURCES,
    CorporateEventType: CORPORATE_EVENT_TYPES,
    IncomeStatus: INCOME_STATUSES,
    Currency: ['BRL']
  }, [PerformanceRangeEnum])
  // Types named otherwise than their schemas' titles, or with a field of their own.
  types.objectType(MeSchema, undefined, 'Principal')
  types.objectType(PortfolioPerformanceSchema, () => ({
    range: { type: new GraphQLNonNull(PerformanceRangeEnum), description: 'The period' }
  }))
  const { roots, loaders, rules } = operationFields(types, operations)
  const root = (name: string, fields: GraphQLObjectType['_fields']) =>
    Object.keys(fields).length === 0 ? undefined : new GraphQLObjectType({ name, fields })
  const schema = new GraphQLSchema({
    query: root('Query', roots.Query),
    mutation: root('Mutation', roots.Mutation),
    subscription: root('Subscription', roots.Subscription)
  })
  return { schema, loaders, rules }
}
