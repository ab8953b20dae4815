import { Type } from '@sinclair/typebox'
import { PageQuerySchema } from '../../schemas/common.js'
import { AssetTypeSchema } from '../../schemas/asset.js'
import { TICKER_PATTERN } from '../../quotes/provider.js'

export const ListAssetsQuerySchema = Type.Composite([
  PageQuerySchema,
  Type.Object({ portfolioId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })) })
])

export const AssetTypeParamsSchema = Type.Object({ type: AssetTypeSchema })

export const SymbolParamsSchema = Type.Object({ symbol: Type.String({ pattern: TICKER_PATTERN }) })
