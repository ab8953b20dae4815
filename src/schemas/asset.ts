import { Type, type Static } from '@sinclair/typebox'
import {
  AtLeastOneOf, DaySchema, IdSchema, NonBlankString, PageQuerySchema, RecordId, StoredText, StringEnum, Timestamp
} from './common.js'

export const ASSET_TYPES = ['STOCK', 'BOND', 'FUND', 'CRYPTO', 'COMMODITY'] as const
export const AssetTypeSchema = StringEnum(ASSET_TYPES)
export type AssetType = Static<typeof AssetTypeSchema>

/**
 * Bounds keep `quantity × price` and every sum finite (quantity > 0, price ≥ 0: docs/api.md#inputs);
 * both have at most 8 decimals (docs/api.md#money), checked by the asset service (src/domain/assets.ts).
 */
export const Quantity = Type.Number({ exclusiveMinimum: 0, maximum: 1e12, description: 'At most 8 decimals' })
export const Price = Type.Number({ minimum: 0, maximum: 1e12, description: 'Unit price in BRL, at most 8 decimals' })

/** A portfolio asset (docs/api.md#resources); `totalValue` is `quantity × price`, rounded to cents. */
export const AssetSchema = Type.Object({
  id: RecordId('The asset\'s id (a UUID)'),
  name: StoredText(200, 'Its name, 1 to 200 characters'),
  symbol: StoredText(200, 'Its ticker, upper-cased (PETR4, ^BVSP)'),
  type: AssetTypeSchema,
  quantity: Type.Number({ description: 'Units held, at most 8 decimals' }),
  price: Type.Number({ description: 'Unit price in BRL, at most 8 decimals' }),
  totalValue: Type.Number({ description: 'quantity × price in BRL, rounded half away from zero to 2 decimals' }),
  portfolioId: RecordId('The portfolio that holds it'),
  createdAt: Timestamp,
  updatedAt: Timestamp
}, { title: 'PortfolioAsset', description: 'An asset held in a portfolio' })
export type Asset = Static<typeof AssetSchema>

/** List items: the asset without its timestamps. */
export const AssetListItemSchema = Type.Omit(AssetSchema, ['createdAt', 'updatedAt'], {
  title: 'PortfolioAssetListItem'
})

export const CreateAssetInputSchema = Type.Object({
  name: NonBlankString(200),
  symbol: NonBlankString(200),
  type: AssetTypeSchema,
  quantity: Quantity,
  price: Price,
  portfolioId: IdSchema
}, {
  title: 'CreateAssetInput',
  examples: [
    { name: 'Petrobras PN', symbol: 'PETR4', type: 'STOCK', quantity: 100, price: 38.45, portfolioId: '<portfolio id>' }
  ]
})
export type CreateAssetInput = Static<typeof CreateAssetInputSchema>

export const UpdateAssetInputSchema = AtLeastOneOf(Type.Object({
  quantity: Type.Optional(Quantity),
  price: Type.Optional(Price)
}, { title: 'UpdateAssetInput', examples: [{ quantity: 150 }] }))
export type UpdateAssetInput = Static<typeof UpdateAssetInputSchema>

/** A buy lot of an asset: what was bought, when, at what unit price (the dashboard's transactions). */
export const LotSchema = Type.Object({
  id: RecordId(),
  date: DaySchema,
  quantity: Type.Number(),
  price: Type.Number()
})
export type Lot = Static<typeof LotSchema>

/** `GET /portfolio-assets` and GraphQL's `assets`: a page, optionally of one portfolio. */
export const ListAssetsQuerySchema = Type.Composite([
  PageQuerySchema,
  Type.Object({ portfolioId: Type.Optional(IdSchema) })
])
