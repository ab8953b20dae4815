import {
  GraphQLBoolean, GraphQLID, GraphQLInt, GraphQLList, GraphQLNonNull, getNamedType, Kind,
  type GraphQLFieldConfig, type GraphQLFieldConfigArgumentMap, type GraphQLOutputType,
  type GraphQLResolveInfo, type SelectionNode
} from 'graphql'
import type { TObject, TSchema } from '@sinclair/typebox'
import type { MercuriusLoaders } from 'mercurius'
import { DeletedSchema, MAX_PAGE_SIZE, PageQuerySchema } from '../../schemas/common.js'
import type { TypeBoxToGraphql } from '../../schemas/graphql.js'
import {
  Answer, CREDENTIALS, type Call, type GraphqlField, type Operation, type OperationInput
} from '../../operations/operation.js'
import { formattedSubscriptionError } from '../../plugins/graphql-errors.js'
import type { GraphqlContext } from './context.js'
import { inputReader, type ArgumentPath } from './arguments.js'
import { listCost, type ArgumentRules } from './guard.js'
import { eachOrNull, orFalse, orNull } from './not-found.js'

/*
 * GraphQL's fields, built from the declared operations (src/operations): a root field or a field
 * of an object type per declaration, its arguments read with the REST schemas (arguments.ts), one
 * call of the domain with the request's Access — the service checks the credential, normalises,
 * and throws NOT_FOUND for an unknown id — and its answer: a nullable field's NOT_FOUND is `null`,
 * a removal's `false`. A batched declaration is a Mercurius loader: one call per field per request,
 * whatever the number of parents or aliases.
 */

/** GraphQL lists default to 100 items, REST to 1000 (docs/api.md#limits). */
const GRAPHQL_PAGE_SIZE = 100

type Field = GraphQLFieldConfig<unknown, GraphqlContext>
type Args = Record<string, unknown>
/** A loader's query: the field's parent, and its arguments. */
type Query = { obj: unknown, params: Args }

/** What the schema, Mercurius and the operation guard take of the declarations. */
export interface OperationFields {
  roots: Record<'Query' | 'Mutation' | 'Subscription', Record<string, Field>>
  loaders: MercuriusLoaders<GraphqlContext>
  rules: ArgumentRules
}

/** Whether the query selects `name` on the field being resolved, directly or through fragments. */
function selects (info: GraphQLResolveInfo, name: string): boolean {
  return info.fieldNodes.some(node => within(info, name, node.selectionSet?.selections))
}

function within (info: GraphQLResolveInfo, name: string, selections: readonly SelectionNode[] = []): boolean {
  return selections.some(selection => {
    if (selection.kind === Kind.FIELD) return selection.name.value === name
    if (selection.kind === Kind.INLINE_FRAGMENT) return within(info, name, selection.selectionSet.selections)
    return within(info, name, info.fragments[selection.name.value]?.selectionSet.selections)
  })
}

function outputType (types: TypeBoxToGraphql<GraphqlContext>, schema: TSchema, nullable: boolean): GraphQLOutputType {
  if (schema === DeletedSchema) return new GraphQLNonNull(GraphQLBoolean)
  const { type, items } = schema as { type?: string, items?: TObject }
  // A list that is never null of items that are never null.
  if (type === 'array' && items !== undefined) {
    return new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(types.objectType(items))))
  }
  const object = types.objectType(schema as TObject)
  return nullable ? object : new GraphQLNonNull(object)
}

/** The field's arguments, where each goes in the input, and the path parameters that are ids (left unchecked). */
function argumentsOf (types: TypeBoxToGraphql<GraphqlContext>, operation: Operation, field: GraphqlField) {
  const args: GraphQLFieldConfigArgumentMap = {}
  const paths: ArgumentPath[] = []
  const ids = new Set<string>()
  for (const [name, spec] of Object.entries(field.args ?? {})) {
    const { path, default: defaultValue } = typeof spec === 'string' ? { path: spec, default: undefined } : spec
    const [part, key] = path.split('.') as ['params' | 'query' | 'args' | 'body', string]
    const schema = operation.input[part] as TObject
    const type = part === 'body'
      ? types.argumentType(schema, name, true)
      : types.argumentType(schema.properties[key] as TSchema, name, schema.required?.includes(key) === true)
    if (part === 'params' && getNamedType(type) === GraphQLID) ids.add(key)
    paths.push(part === 'body' ? { name, part } : { name, part, key })
    args[name] = defaultValue === undefined ? { type } : { type, defaultValue }
  }
  if (field.paged === true) {
    const { description } = PageQuerySchema.properties.offset
    args.limit = { type: GraphQLInt, defaultValue: GRAPHQL_PAGE_SIZE, description: `Page size, 1 to ${MAX_PAGE_SIZE}` }
    args.offset = { type: GraphQLInt, defaultValue: 0, description }
    paths.push({ name: 'limit', part: 'query', key: 'limit' }, { name: 'offset', part: 'query', key: 'offset' })
  }
  const checked = field.check !== undefined || paths.some(path => path.part !== 'params' || !ids.has(path.key))
  return { args, read: inputReader(operation.input, paths, ids), checked }
}

/** Builds every declared field, each on its root type or on the object type of its parent's schema. */
export function operationFields (
  types: TypeBoxToGraphql<GraphqlContext>, operations: readonly Operation[]
): OperationFields {
  const built: OperationFields = { roots: { Query: {}, Mutation: {}, Subscription: {} }, loaders: {}, rules: {} }
  // The object types that get fields are made first, with them: any field's type may name them.
  const typeFields = new Map<TObject, Record<string, Field>>()
  for (const of of operations.map(({ graphql }) => graphql?.of)) {
    if (of === undefined || typeFields.has(of)) continue
    const fields: Record<string, Field> = {}
    typeFields.set(of, fields)
    types.objectType(of, () => fields)
  }
  for (const operation of operations) {
    const field = operation.graphql
    if (field === undefined) continue
    const root = field.query !== undefined ? 'Query' : field.mutation !== undefined ? 'Mutation' : 'Subscription'
    const name = (field.field ?? field.query ?? field.mutation ?? field.subscription) as string
    const typeName = field.of === undefined ? root : types.objectType(field.of).name
    const { args, read, checked } = argumentsOf(types, operation, field)
    const inputOf = (values: Args): OperationInput => read?.(values) ?? {}
    if (checked) {
      const rule = (values: Args): void => {
        const input = inputOf(values)
        field.check?.(input)
      }
      built.rules[typeName] = { ...built.rules[typeName], [name]: rule }
    }
    const cost = field.paged === true ? { items: GRAPHQL_PAGE_SIZE } : field.cost
    const complexity = typeof cost === 'object' ? listCost(cost.items) : cost
    const credential = `${CREDENTIALS[operation.scope]}${field.credential === undefined ? '' : `; ${field.credential}`}`
    const fields = field.of === undefined ? built.roots[root] : typeFields.get(field.of) as Record<string, Field>
    fields[name] = {
      type: outputType(types, field.output ?? operation.output, field.nullable === true),
      description: field.of === undefined ? `${field.description} (${credential})` : field.description,
      ...(Object.keys(args).length === 0 ? {} : { args }),
      ...(complexity === undefined ? {} : { extensions: { complexity } }),
      ...resolverOf(operation, field, name, inputOf)
    }
    if (operation.batch === undefined) continue
    built.loaders[typeName] = { ...built.loaders[typeName], [name]: loaderOf(operation, inputOf) }
  }
  return built
}

/** A batched field's Mercurius loader: the parents (or the root fields' inputs) of a request in one domain call. */
function loaderOf (operation: Operation, inputOf: (args: Args) => OperationInput) {
  const batch = operation.batch as NonNullable<Operation['batch']>
  const { of, nullable } = operation.graphql as GraphqlField
  const itemOf = of === undefined ? ({ params }: Query) => inputOf(params) : ({ obj }: Query) => obj
  return {
    loader: async (queries: Query[], ctx: GraphqlContext) => {
      const answers = batch(ctx.domain, ctx, queries.map(itemOf))
      return nullable === true ? eachOrNull(await answers) : await answers
    },
    opts: { cache: false }
  }
}

/** How the field answers: from its parent, by one domain call, or as a subscription. */
function resolverOf (
  operation: Operation, field: GraphqlField, name: string, inputOf: (args: Args) => OperationInput
): Pick<Field, 'resolve' | 'subscribe'> {
  const { run } = operation
  const { from, each } = field
  if (from !== undefined) return { resolve: parent => from(parent) }
  if (run === undefined) return {}
  if (field.subscription !== undefined) {
    return {
      // Mercurius sends a subscription's refusal unformatted: it is formatted here.
      subscribe: async (_root, args: Args, ctx: GraphqlContext) => {
        try {
          return await run(ctx.domain, ctx, inputOf(args))
        } catch (error) {
          throw formattedSubscriptionError(error, name, ctx.log)
        }
      },
      resolve: each ?? (event => event)
    }
  }
  return {
    resolve: async (parent, args: Args, ctx, info) => {
      const call: Call = { access: ctx.access, log: ctx.log, selects: selects.bind(undefined, info) }
      // A field of an object type is asked of its parent: its id is the input's path parameter.
      const input = inputOf(args)
      if (field.of !== undefined) input.params = { ...input.params as object, id: (parent as { id: string }).id }
      const answer = run(ctx.domain, call, input)
      // A removal is `true`, or `false` when nothing had the id; an answer's value (its ETag or status are REST's).
      if (operation.output === DeletedSchema) return await orFalse(answer)
      const result = field.nullable === true ? await orNull(answer) : await answer
      return result instanceof Answer ? result.value : result
    }
  }
}
