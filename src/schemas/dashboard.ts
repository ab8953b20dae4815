import { Type, type Static } from '@sinclair/typebox'
import { DaySchema, MonthSchema, RecordId, StoredText, TimestampOf } from './common.js'
import { QUOTE_SOURCES } from './quote.js'

/** An asset's dashboard (docs/api.md#the-asset-dashboard). */
export const DashboardSchema = Type.Object({
  basicInfo: Type.Object({
    ticker: StoredText(200),
    name: StoredText(200),
    // brapi's icon URL around the ticker percent-encoded: 34 characters, and at most 12 per character of the ticker.
    imageUrl: Type.String({ format: 'uri', maxLength: 34 + 12 * 200, description: 'The ticker\'s logo (brapi icons)' }),
    quantity: Type.Number(),
    averagePrice: Type.Number(),
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
    investedValue: Type.Number(),
    grossValue: Type.Number(),
    result: Type.Number(),
    resultPercentage: Type.Number()
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
    type: Type.Literal('BUY'),
    // `Compra de <quantity> <ticker>`: a quantity is at most 24 characters as JavaScript writes it.
    description: StoredText(10 + 24 + 1 + 200),
    quantity: Type.Number(),
    pricePerUnit: Type.Number(),
    totalValue: Type.Number()
  }))
}, { title: 'AssetDashboard' })
export type Dashboard = Static<typeof DashboardSchema>
