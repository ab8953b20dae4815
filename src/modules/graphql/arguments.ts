import {
  GraphQLError, GraphQLIncludeDirective, GraphQLSkipDirective, Kind, TypeInfo, getArgumentValues, getDirectiveValues,
  getVariableValues, visit, visitWithTypeInfo,
  type DirectiveNode, type DocumentNode, type FragmentDefinitionNode, type GraphQLSchema, type OperationDefinitionNode
} from 'graphql'
import { Type, type Static } from '@sinclair/typebox'
import { ListExclusionsQuerySchema } from '../../schemas/excluded-transaction.js'
import { ListPortfoliosQuerySchema } from '../../schemas/portfolio.js'
import { ListAssetsQuerySchema } from '../../schemas/asset.js'
import { SymbolParamsSchema } from '../../schemas/quote.js'
import {
  AssetTypeSchema, CreateAssetInputSchema, UpdateAssetInputSchema, type CreateAssetInput, type UpdateAssetInput
} from '../../schemas/asset.js'
import {
  CreatePortfolioInputSchema, UpdatePortfolioInputSchema, type CreatePortfolioInput, type UpdatePortfolioInput
} from '../../schemas/portfolio.js'
import { CreateExclusionInputSchema, type CreateExclusionInput } from '../../schemas/excluded-transaction.js'
import { createAssetInput, updateAssetInput } from '../../domain/assets.js'
import { inputValidator } from './errors.js'

/** Arguments a nullable GraphQL argument may leave `null`: the filter is then absent, as in REST. */
function present<T extends Record<string, unknown>> (args: T): T {
  return Object.fromEntries(Object.entries(args).filter(([, value]) => value !== null && value !== undefined)) as T
}

const checkPortfolioList = inputValidator<Static<typeof ListPortfoliosQuerySchema>>(ListPortfoliosQuerySchema, 'query')
const AssetListQuerySchema = Type.Composite([
  ListAssetsQuerySchema,
  Type.Object({ type: Type.Optional(AssetTypeSchema) })
])
const checkAssetList = inputValidator<Static<typeof AssetListQuerySchema>>(AssetListQuerySchema, 'query')
const checkSymbol = inputValidator<Static<typeof SymbolParamsSchema>>(SymbolParamsSchema, 'params')
const checkExclusionList = inputValidator<Static<typeof ListExclusionsQuerySchema>>(ListExclusionsQuerySchema, 'query')
const checkCreatePortfolio = inputValidator<CreatePortfolioInput>(CreatePortfolioInputSchema)
const checkUpdatePortfolio = inputValidator<UpdatePortfolioInput>(UpdatePortfolioInputSchema)
const checkCreateAsset = inputValidator<CreateAssetInput>(CreateAssetInputSchema)
const checkUpdateAsset = inputValidator<UpdateAssetInput>(UpdateAssetInputSchema)
const checkExclusion = inputValidator<CreateExclusionInput>(CreateExclusionInputSchema)
const ItemArgsSchema = Type.Object({ itemId: Type.String({ minLength: 1, maxLength: 200 }) })

/**
 * Each field's arguments checked against the schemas of the matching REST route (bounds, blank
 * texts, formats), failing with the same phrases; the resolvers hand what these answer to the
 * domain services, which normalise it (trim, upper-case) as they do for REST.
 */
export const readArguments = {
  portfolios: (args: Record<string, unknown>) => checkPortfolioList(present(args)),
  assets: (args: Record<string, unknown>) => checkAssetList(present(args)),
  quoteSymbol: (args: Record<string, unknown>) => checkSymbol(args).symbol,
  excludedTransactions: (args: Record<string, unknown>) => checkExclusionList({ client_id: args.clientId }),
  createPortfolio: ({ input }: Record<string, unknown>) => checkCreatePortfolio(input),
  updatePortfolio: ({ input }: Record<string, unknown>) => checkUpdatePortfolio(input),
  createAsset: ({ input }: Record<string, unknown>) => checkCreateAsset(input),
  updateAsset: ({ input }: Record<string, unknown>) => checkUpdateAsset(input),
  excludeTransaction: ({ input }: Record<string, unknown>) => checkExclusion(input),
  aggregatorItem: inputValidator<Static<typeof ItemArgsSchema>>(ItemArgsSchema, 'args')
}

type ArgumentRule = (args: Record<string, unknown>) => unknown

/** The fields whose arguments have rules beyond their GraphQL types, by parent type. */
const RULES: Record<string, Record<string, ArgumentRule>> = {
  Query: {
    portfolios: readArguments.portfolios,
    assets: readArguments.assets,
    quote: readArguments.quoteSymbol,
    excludedTransactions: readArguments.excludedTransactions
  },
  Mutation: {
    createPortfolio: readArguments.createPortfolio,
    updatePortfolio: readArguments.updatePortfolio,
    // The asset service's own input rules (decimals of an amount) too, so that they fail before anything runs.
    createAsset: args => createAssetInput(readArguments.createAsset(args)),
    updateAsset: args => updateAssetInput(readArguments.updateAsset(args)),
    excludeTransaction: readArguments.excludeTransaction
  },
  Subscription: { aggregatorItem: readArguments.aggregatorItem }
}

/** Field names with rules, whatever their type: a document naming none of them has nothing to check. */
const RULED_NAMES = new Set(Object.values(RULES).flatMap(fields => Object.keys(fields)))
const namesRuledFields = new WeakMap<DocumentNode, boolean>()

function mayNeedChecks (document: DocumentNode): boolean {
  let found = namesRuledFields.get(document)
  if (found === undefined) {
    found = false
    visit(document, { Field: node => { if (RULED_NAMES.has(node.name.value)) found = true } })
    namesRuledFields.set(document, found)
  }
  return found
}

/**
 * Checks, before execution, the arguments of every field the operation would run (fields left
 * out by `@skip`/`@include` excepted) and throws all their failures at once: a document with
 * one invalid argument runs nothing, so none of its other fields reaches the store or a provider.
 */
export function assertArguments (
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | undefined,
  variables: Record<string, unknown> | undefined
): void {
  // Mercurius hands over the same parsed document for the same text: most requests stop here.
  if (!mayNeedChecks(document)) return
  const operations = document.definitions
    .filter((definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION)
  const operation = operations.length === 1
    ? operations[0]
    : operations.find(candidate => candidate.name?.value === operationName)
  if (operation === undefined) return
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], variables ?? {})
  if (coerced.errors !== undefined) throw refusal(coerced.errors)
  const values = coerced.coerced
  const fragments = new Map<string, FragmentDefinitionNode>()
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition)
  }
  const included = (node: { readonly directives?: readonly DirectiveNode[] }): boolean =>
    getDirectiveValues(GraphQLSkipDirective, node, values)?.if !== true &&
    getDirectiveValues(GraphQLIncludeDirective, node, values)?.if !== false

  const errors: GraphQLError[] = []
  const pending: Array<OperationDefinitionNode | FragmentDefinitionNode> = [operation]
  const reached = new Set<string>()
  const typeInfo = new TypeInfo(schema)
  for (let definition = pending.pop(); definition !== undefined; definition = pending.pop()) {
    visit(definition, visitWithTypeInfo(typeInfo, {
      Field: node => {
        if (!included(node)) return false
        const field = typeInfo.getFieldDef()
        if (field === null || field === undefined) return undefined
        const rule = RULES[typeInfo.getParentType()?.name ?? '']?.[field.name]
        if (rule === undefined) return undefined
        try {
          rule(getArgumentValues(field, node, values))
        } catch (error) {
          const failure = error as Error
          const located = new GraphQLError(failure.message, { nodes: [node], originalError: failure })
          errors.push(failure instanceof GraphQLError ? failure : located)
        }
        return undefined
      },
      InlineFragment: node => included(node) ? undefined : false,
      FragmentSpread: node => {
        const fragment = fragments.get(node.name.value)
        if (included(node) && fragment !== undefined && !reached.has(node.name.value)) {
          reached.add(node.name.value)
          pending.push(fragment)
        }
      }
    }))
  }
  if (errors.length > 0) throw refusal(errors)
}

/** One error carrying every failure: the error handler answers each of them, with 400. */
function refusal (errors: readonly GraphQLError[]): GraphQLError {
  const carrier = Object.assign(new Error('invalid arguments'), { errors })
  return new GraphQLError('invalid arguments', { originalError: carrier })
}
