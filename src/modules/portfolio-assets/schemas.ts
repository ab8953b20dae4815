import { Type } from '@sinclair/typebox'
import { IdSchema, PageQuerySchema } from '../../schemas/common.js'
import { AssetTypeSchema } from '../../schemas/asset.js'
import { TICKER_PATTERN } from '../../quotes/provider.js'

export const ListAssetsQuerySchema = Type.Composite([
  PageQuerySchema,
  Type.Object({ portfolioId: Type.Optional(IdSchema) })
])

export const AssetTypeParamsSchema = Type.Object({ type: AssetTypeSchema })

export const SymbolParamsSchema = Type.Object({ symbol: Type.String({ pattern: TICKER_PATTERN }) })
