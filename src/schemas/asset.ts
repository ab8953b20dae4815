import { Type, type Static } from '@sinclair/typebox'
import { UNIT_DECIMALS } from '../money.js'
import { AtLeastOneOf, NonBlankString, StringEnum, Timestamp } from './common.js'

export const ASSET_TYPES = ['STOCK', 'BOND', 'FUND', 'CRYPTO', 'COMMODITY'] as const
export const AssetTypeSchema = StringEnum(ASSET_TYPES)
export type AssetType = Static<typeof AssetTypeSchema>

/**
 * Bounds keep `quantity × price` and every sum finite (CONTRACT §5: quantity > 0, price ≥ 0);
 * both have at most 8 decimals (CONTRACT §11).
 */
export const Quantity = Type.Number({ exclusiveMinimum: 0, maximum: 1e12, maxDecimals: UNIT_DECIMALS, description: 'At most 8 decimals' })
export const Price = Type.Number({ minimum: 0, maximum: 1e12, maxDecimals: UNIT_DECIMALS, description: 'Unit price in BRL, at most 8 decimals' })

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
}, { title: 'PortfolioAsset' })
export type Asset = Static<typeof AssetSchema>

/** List items carry the fields of spec §4.3. */
export const AssetListItemSchema = Type.Omit(AssetSchema, ['createdAt', 'updatedAt'], { title: 'PortfolioAssetListItem' })

export const CreateAssetInputSchema = Type.Object({
  name: NonBlankString(200),
  symbol: NonBlankString(200),
  type: AssetTypeSchema,
  quantity: Quantity,
  price: Price,
  portfolioId: Type.String({ minLength: 1, maxLength: 64 })
}, { title: 'CreateAssetInput', examples: [{ name: 'Petrobras PN', symbol: 'PETR4', type: 'STOCK', quantity: 100, price: 38.45, portfolioId: '<portfolio id>' }] })
export type CreateAssetInput = Static<typeof CreateAssetInputSchema>

export const UpdateAssetInputSchema = AtLeastOneOf(Type.Object({
  quantity: Type.Optional(Quantity),
  price: Type.Optional(Price)
}, { title: 'UpdateAssetInput', examples: [{ quantity: 150 }] }))
export type UpdateAssetInput = Static<typeof UpdateAssetInputSchema>

/** A validated create input as the store takes it: texts trimmed, the symbol upper-cased (CONTRACT §5). */
export function createAssetInput (input: CreateAssetInput): CreateAssetInput {
  return { ...input, name: input.name.trim(), symbol: input.symbol.trim().toUpperCase() }
}

/** A buy lot of an asset: what was bought, when, at what unit price (the dashboard's transactions). */
export const LotSchema = Type.Object({
  id: Type.String(),
  /** `YYYY-MM-DD`. */
  date: Type.String(),
  quantity: Type.Number(),
  price: Type.Number()
})
export type Lot = Static<typeof LotSchema>
