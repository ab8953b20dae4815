import { Type, type Static } from '@sinclair/typebox'
import { NonBlankString, PageQuerySchema, StringEnum, Timestamp } from '../../schemas.js'
import { TICKER_PATTERN } from '../../quotes/provider.js'

export const ASSET_TYPES = ['STOCK', 'BOND', 'FUND', 'CRYPTO', 'COMMODITY'] as const
export const AssetTypeSchema = StringEnum(ASSET_TYPES)
export type AssetType = Static<typeof AssetTypeSchema>

/** Bounds keep `quantity × price` and every sum finite (CONTRACT §5: quantity > 0, price ≥ 0). */
export const Quantity = Type.Number({ exclusiveMinimum: 0, maximum: 1e12 })
export const Price = Type.Number({ minimum: 0, maximum: 1e12 })

/** Portfolio asset of spec §2.2; `totalValue` is `quantity × price`. */
export const AssetSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  symbol: Type.String(),
  type: AssetTypeSchema,
  quantity: Type.Number(),
  price: Type.Number(),
  totalValue: Type.Number(),
  portfolioId: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp
})
export type Asset = Static<typeof AssetSchema>

/** List items carry the fields of spec §4.3. */
export const AssetListItemSchema = Type.Omit(AssetSchema, ['createdAt', 'updatedAt'])

export const CreateAssetBodySchema = Type.Object({
  name: NonBlankString(200),
  symbol: NonBlankString(200),
  type: AssetTypeSchema,
  quantity: Quantity,
  price: Price,
  portfolioId: Type.String({ minLength: 1, maxLength: 64 })
})
export type CreateAssetBody = Static<typeof CreateAssetBodySchema>

export const UpdateAssetBodySchema = Type.Object({
  quantity: Type.Optional(Quantity),
  price: Type.Optional(Price)
})
export type UpdateAssetBody = Static<typeof UpdateAssetBodySchema>

export const ListAssetsQuerySchema = Type.Composite([
  PageQuerySchema,
  Type.Object({ portfolioId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })) })
])

export const AssetTypeParamsSchema = Type.Object({ type: AssetTypeSchema })

export const SymbolParamsSchema = Type.Object({ symbol: Type.String({ pattern: TICKER_PATTERN }) })

/** Asset price quote of spec §2.3. */
export const QuoteSchema = Type.Object({
  symbol: Type.String(),
  price: Type.Number(),
  currency: Type.String(),
  lastUpdate: Timestamp,
  source: Type.String()
})

/** Asset dashboard of spec §2.4. */
export const DashboardSchema = Type.Object({
  basicInfo: Type.Object({
    ticker: Type.String(),
    name: Type.String(),
    imageUrl: Type.String(),
    quantity: Type.Number(),
    averagePrice: Type.Number(),
    lastQuote: Type.Number(),
    investedValue: Type.Number(),
    grossValue: Type.Number(),
    result: Type.Number(),
    resultPercentage: Type.Number()
  }),
  monthlyHistory: Type.Array(Type.Object({
    month: Type.String(),
    currentBalance: Type.Number(),
    quantity: Type.Number(),
    returnPercentage: Type.Number(),
    portfolioPercentage: Type.Number(),
    ibovPercentage: Type.Number()
  })),
  historicalChart: Type.Array(Type.Object({
    month: Type.String(),
    appliedValue: Type.Number(),
    grossBalance: Type.Number()
  })),
  transactions: Type.Array(Type.Object({
    id: Type.String(),
    date: Type.String(),
    type: Type.Literal('BUY'),
    description: Type.String(),
    quantity: Type.Number(),
    pricePerUnit: Type.Number(),
    totalValue: Type.Number()
  }))
})
