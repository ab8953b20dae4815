import { Type, type Static } from '@sinclair/typebox'
import { Price, Quantity, TradeDate } from './asset.js'
import { DaySchema, RecordId, StringEnum, Timestamp } from './common.js'

export const TRANSACTION_TYPES = ['BUY', 'SELL'] as const
export const TransactionTypeSchema = StringEnum(TRANSACTION_TYPES)
export type TransactionType = Static<typeof TransactionTypeSchema>

/** Fees and taxes of a transaction: money, so at most 2 decimals (checked by the domain, docs/api.md#money). */
export const Fee = Type.Number({
  minimum: 0, maximum: 1e12, description: 'Fees and taxes paid on it in BRL, at most 2 decimals; 0 when absent'
})

/** A dated buy or sale of an asset (docs/api.md#transactions). */
export const AssetTransactionSchema = Type.Object({
  id: RecordId('The transaction\'s id (a UUID)'),
  assetId: RecordId('The asset bought or sold'),
  type: TransactionTypeSchema,
  date: Type.String({ ...DaySchema, format: 'date', description: 'When it was made, YYYY-MM-DD' }),
  quantity: Type.Number({ description: 'Units bought or sold, at most 8 decimals' }),
  price: Type.Number({ description: 'Unit price in BRL, at most 8 decimals' }),
  fee: Type.Number({ description: 'Fees and taxes paid on it in BRL' }),
  totalValue: Type.Number({
    description: 'quantity × price in BRL, rounded half away from zero to 2 decimals (the fee apart)'
  }),
  createdAt: Timestamp,
  investmentTransactionId: Type.Union([RecordId(), Type.Null()], {
    description: 'The aggregator\'s id of the investment transaction it was imported from (docs/api.md#imports); ' +
      'null when recorded here'
  }),
  estimated: Type.Boolean({
    description: 'true when no institution reported it: an import\'s opening buy or closing sale, which make the ' +
      'quantity held the institution\'s (docs/api.md#imports)'
  })
}, { title: 'AssetTransaction', description: 'A dated buy or sale of an asset' })
export type AssetTransaction = Static<typeof AssetTransactionSchema>

export const CreateTransactionInputSchema = Type.Object({
  type: TransactionTypeSchema,
  date: TradeDate,
  quantity: Quantity,
  price: Price,
  fee: Type.Optional(Fee)
}, {
  title: 'CreateTransactionInput',
  examples: [
    { type: 'BUY', date: '2024-03-15', quantity: 100, price: 36.9, fee: 4.9 },
    { type: 'SELL', date: '2025-08-01', quantity: 40, price: 39.12 }
  ]
})
export type CreateTransactionInput = Static<typeof CreateTransactionInputSchema>
