import { Type, type Static } from '@sinclair/typebox'
import {
  AtLeastOneOf, DaySchema, IdSchema, NonBlankString, PageQuerySchema, RecordId, StoredText, StringEnum, Timestamp,
  TimestampOf
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

/** The first date a transaction may have (docs/api.md#transactions). */
export const FIRST_TRADE_DATE = '1990-01-01'

const TRADE_DATE_RULE = `YYYY-MM-DD (UTC), from ${FIRST_TRADE_DATE} to today`

/** A transaction's date, `YYYY-MM-DD`; its bounds (1990-01-01 to today, UTC) are checked by the domain. */
export const TradeDate = Type.String({ format: 'date', maxLength: 10, description: TRADE_DATE_RULE })

/** What prices an asset other than its transactions (docs/api.md#imports): its institution's own figures. */
export const PRICE_SOURCES = ['institution'] as const

/** A day an institution gave (`YYYY-MM-DD`), or null when it gave none. */
function InstitutionDay (description: string) {
  return Type.Union([Type.String({ ...DaySchema, format: 'date' }), Type.Null()], { description })
}

/** A text as an institution gave it, or null when it gave none (an asset recorded by hand has none). */
function InstitutionText (maxLength: number, description: string) {
  return Type.Union([StoredText(maxLength), Type.Null()], { description })
}

/**
 * A portfolio asset (docs/api.md#resources); `totalValue` is `quantity × price`, rounded to cents. An asset imported
 * from an investment (docs/api.md#imports) keeps the aggregator's id of it and what its institution says of it.
 */
export const AssetSchema = Type.Object({
  id: RecordId('The asset\'s id (a UUID)'),
  name: StoredText(200, 'Its name, 1 to 200 characters'),
  symbol: StoredText(200, 'Its ticker, upper-cased (PETR4, ^BVSP)'),
  type: AssetTypeSchema,
  quantity: Type.Number({ description: 'Units held, at most 8 decimals' }),
  price: Type.Number({ description: 'Unit price in BRL, at most 8 decimals' }),
  totalValue: Type.Number({ description: 'quantity × price in BRL, rounded half away from zero to 2 decimals' }),
  portfolioId: RecordId('The portfolio that holds it'),
  eventsUnapplied: Type.Boolean({
    description: 'True when a corporate event of its symbol it was entitled to is not applied to quantity and ' +
      'price (an unknown label, an implausible ratio, or sales recorded against it: docs/api.md#corporate-events)'
  }),
  eventsAsOf: Type.Union([TimestampOf('When its corporate events were read'), Type.Null()], {
    description: 'When the corporate events its quantity and price follow were read of the provider; null when ' +
      'never (a symbol the provider gives no events of)'
  }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  investmentId: Type.Union([RecordId(), Type.Null()], {
    description: 'The aggregator\'s investment it was imported from (docs/api.md#imports); null when recorded by hand'
  }),
  priceSource: Type.Union([StringEnum(PRICE_SOURCES), Type.Null()], {
    description: '`institution`: price is its institution\'s own figure of asOf (what it holds is worth, per unit), ' +
      'not a market price; null: price is the average price, or the investor\'s own (PATCH)'
  }),
  asOf: InstitutionDay('The day of the institution\'s figure price is, when priceSource is institution; else null'),
  issuer: InstitutionText(200, 'Who issued it (a bond\'s issuer), as its institution says; null when not said'),
  dueDate: InstitutionDay('When it matures (a bond), as its institution says; null when not said'),
  rate: Type.Union([Type.Number(), Type.Null()], {
    description: 'Its rate as its institution gives it (110 with rateType CDI: 110 % of the CDI); null when not said'
  }),
  rateType: InstitutionText(50, 'What rate is of (CDI, SELIC, IPCA…), as its institution says; null when not said'),
  isin: InstitutionText(12, 'Its ISIN, as its institution says; null when not said')
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
  portfolioId: IdSchema,
  date: Type.Optional(Type.String({
    format: 'date', maxLength: 10, description: `The first buy's date, ${TRADE_DATE_RULE}; today when absent`
  }))
}, {
  title: 'CreateAssetInput',
  examples: [
    {
      name: 'Petrobras PN', symbol: 'PETR4', type: 'STOCK', quantity: 100, price: 38.45, portfolioId: '<portfolio id>'
    },
    {
      name: 'Vale ON',
      symbol: 'VALE3',
      type: 'STOCK',
      quantity: 50,
      price: 61.18,
      portfolioId: '<portfolio id>',
      date: '2024-03-15'
    }
  ]
})
export type CreateAssetInput = Static<typeof CreateAssetInputSchema>

export const UpdateAssetInputSchema = AtLeastOneOf(Type.Object({
  quantity: Type.Optional(Quantity),
  price: Type.Optional(Price)
}, { title: 'UpdateAssetInput', examples: [{ quantity: 150 }] }))
export type UpdateAssetInput = Static<typeof UpdateAssetInputSchema>

/** `GET /portfolio-assets` and GraphQL's `assets`: a page, optionally of one portfolio. */
export const ListAssetsQuerySchema = Type.Composite([
  PageQuerySchema,
  Type.Object({ portfolioId: Type.Optional(IdSchema) })
])
