import { Type, type Static } from '@sinclair/typebox'
import { DaySchema, MonthSchema, RecordId, StoredText, TimestampOf } from './common.js'
import { AssetEventSchema } from './corporate-events.js'
import { QUOTE_SOURCES } from './quote.js'
import { TransactionTypeSchema } from './transaction.js'

/** An asset's dashboard (docs/api.md#the-asset-dashboard). */
export const DashboardSchema = Type.Object({
  basicInfo: Type.Object({
    ticker: StoredText(200),
    name: StoredText(200),
    // brapi's icon URL around the ticker percent-encoded: 34 characters, and at most 12 per character of the ticker.
    imageUrl: Type.String({ format: 'uri', maxLength: 34 + 12 * 200, description: 'The ticker\'s logo (brapi icons)' }),
    quantity: Type.Number({ description: 'Held now, as the trades and the corporate events leave it' }),
    averagePrice: Type.Number({ description: 'What is held cost ÷ quantity (8 decimals)' }),
    lastQuote: Type.Number(),
    quoteSource: Type.Unsafe<string>({
      type: 'string',
      enum: [...QUOTE_SOURCES, 'asset'],
      description: 'Who priced lastQuote (and so grossValue and result): the quote provider as a quote\'s ' +
        'source names it (brapi.dev, or the offline simulation), or `asset` when the provider does not know ' +
        'the symbol and the asset\'s own stored price is used'
    }),
    quoteUpdatedAt: Type.Union([TimestampOf('When the provider last priced it'), Type.Null()], {
      description: 'When the provider last priced lastQuote; null for an asset\'s own stored price'
    }),
    investedValue: Type.Number({ description: 'What the quantity held cost, at average cost' }),
    grossValue: Type.Number(),
    result: Type.Number({ description: 'grossValue − investedValue: the result of what is held, not yet realized' }),
    resultPercentage: Type.Number(),
    realizedResult: Type.Number({
      description: 'What the sales made over the average price, less every transaction\'s fee'
    }),
    fees: Type.Number({ description: 'The fees of every transaction' }),
    income: Type.Number({
      description: 'The net cash of the dividends, JCP and rendimentos paid so far; what the asset made is ' +
        'result + realizedResult + income'
    }),
    incomeAnnounced: Type.Number({
      description: 'The net cash of those it is entitled to and not yet paid (docs/api.md#corporate-events)'
    })
  }),
  monthlyHistory: Type.Array(Type.Object({
    month: MonthSchema,
    currentBalance: Type.Number(),
    quantity: Type.Number(),
    returnPercentage: Type.Number(),
    portfolioPercentage: Type.Number(),
    ibovPercentage: Type.Number(),
    estimated: Type.Boolean({
      description: 'True when a figure of this month rests on a price that is not market data: a month without ' +
        'its own close (valued at the average buy price, or at an earlier close), an asset priced at its own ' +
        'stored price, a close converted with another month\'s exchange rate, or the benchmark missing ' +
        '(ibovPercentage is then not the index\'s change)'
    })
  })),
  historicalChart: Type.Array(Type.Object({
    month: MonthSchema,
    appliedValue: Type.Number(),
    grossBalance: Type.Number()
  })),
  transactions: Type.Array(Type.Object({
    id: RecordId(),
    date: DaySchema,
    type: TransactionTypeSchema,
    // `Compra de <quantity> <ticker>` (or `Venda de …`): a quantity is at most 24 characters as JavaScript writes it.
    description: StoredText(10 + 24 + 1 + 200),
    quantity: Type.Number(),
    pricePerUnit: Type.Number(),
    totalValue: Type.Number({ description: 'quantity × pricePerUnit, the fee apart' }),
    fee: Type.Number()
  })),
  events: Type.Array(AssetEventSchema, {
    description: 'The corporate events the asset was entitled to, by data com (docs/api.md#corporate-events)'
  })
}, { title: 'AssetDashboard' })
export type Dashboard = Static<typeof DashboardSchema>
