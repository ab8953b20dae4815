import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { ValidationError, type ValidationIssue } from '../../errors.js'
import { compileValidator } from '../../plugins/schema-compilers.js'
import {
  AssetTypeSchema, CreateAssetInputSchema, ListAssetsQuerySchema, UpdateAssetInputSchema
} from '../../schemas/asset.js'
import { CreateExclusionInputSchema, ListExclusionsQuerySchema } from '../../schemas/excluded-transaction.js'
import {
  CreatePortfolioInputSchema, ListPortfoliosQuerySchema, UpdatePortfolioInputSchema
} from '../../schemas/portfolio.js'
import { SymbolParamsSchema } from '../../schemas/quote.js'
import { CreateTransactionInputSchema } from '../../schemas/transaction.js'
import { ItemIdSchema } from '../../schemas/common.js'

/**
 * A REST schema as a GraphQL argument's validator, compiled by the app's own Ajv pool with its
 * options: the same rules (bounds, blank texts, formats), failing with the same phrases.
 */
function validator<S extends TSchema> (schema: S, root = 'input'): (value: unknown) => Static<S> {
  const validate = compileValidator(schema)
  return value => {
    if (!validate(value)) throw new ValidationError(root, (validate.errors ?? []) as unknown as ValidationIssue[])
    return value as Static<S>
  }
}

/** Arguments a nullable GraphQL argument may leave `null`: the filter is then absent, as in REST. */
function present (args: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(args).filter(([, value]) => value !== null && value !== undefined))
}

const checkPortfolioList = validator(ListPortfoliosQuerySchema, 'query')
const checkAssetList = validator(Type.Composite([
  ListAssetsQuerySchema,
  Type.Object({ type: Type.Optional(AssetTypeSchema) })
]), 'query')
const checkSymbol = validator(SymbolParamsSchema, 'params')
const checkExclusionList = validator(ListExclusionsQuerySchema, 'query')
const checkCreatePortfolio = validator(CreatePortfolioInputSchema)
const checkUpdatePortfolio = validator(UpdatePortfolioInputSchema)
const checkCreateAsset = validator(CreateAssetInputSchema)
const checkUpdateAsset = validator(UpdateAssetInputSchema)
const checkTransaction = validator(CreateTransactionInputSchema)
const checkExclusion = validator(CreateExclusionInputSchema)

type Args = Record<string, unknown>

/**
 * Each field's arguments read with the schemas of the matching REST route; the resolvers hand
 * what these answer to the domain services, which normalise it (trim, upper-case) as for REST.
 */
export const readArguments = {
  portfolios: (args: Args) => checkPortfolioList(present(args)),
  assets: (args: Args) => checkAssetList(present(args)),
  quoteSymbol: (args: Args) => checkSymbol(args).symbol,
  excludedTransactions: ({ clientId, ...page }: Args) => checkExclusionList(present({ client_id: clientId, ...page })),
  createPortfolio: ({ input }: Args) => checkCreatePortfolio(input),
  updatePortfolio: ({ input }: Args) => checkUpdatePortfolio(input),
  createAsset: ({ input }: Args) => checkCreateAsset(input),
  updateAsset: ({ input }: Args) => checkUpdateAsset(input),
  addTransaction: ({ input }: Args) => checkTransaction(input),
  excludeTransaction: ({ input }: Args) => checkExclusion(input),
  aggregatorItem: validator(Type.Object({ itemId: ItemIdSchema }), 'args')
}
