import { Type, type Static } from '@sinclair/typebox'
import { DaySchema, MonthSchema, RecordId, StoredText, StringEnum } from './common.js'

/*
 * Corporate events (docs/api.md#corporate-events): what a quote provider gives of a symbol's splits, groupings,
 * bonus shares, dividends, JCP and rendimentos, field by field as brapi's SDKs define them, and the answers the
 * service makes of them.
 */

/**
 * A stock event as the provider gives it (brapi's `stockDividends[]`): the label upper-cased without accents
 * (`DESDOBRAMENTO`, `GRUPAMENTO`, `BONIFICACAO`, or any other as sent), days as `YYYY-MM-DD`, and `null` for what
 * it left out or could not be read.
 */
export interface ProviderStockEvent {
  label: string
  /** The ratio (a split, a grouping) or the new shares per share (a bonus issue; above 1, a percent). */
  factor: number | null
  /** `"a para b"`: b shares become a. */
  completeFactor: string | null
  /** The *data com*: the last day whose holders are entitled. */
  lastDatePrior: string | null
  /** The first day without the entitlement. */
  exDate: string | null
  approvedOn: string | null
  isinCode: string | null
  assetIssued: string | null
  remarks: string | null
}

/** A cash event as the provider gives it (brapi's `cashDividends[]`): labels and days as a stock event's. */
export interface ProviderCashEvent {
  /** `DIVIDENDO`, `JCP`, `RENDIMENTO`, or any other as sent. */
  label: string
  /** Per share, on the scale of the provider's adjusted prices (restated for the stock events after it). */
  rate: number | null
  /** Per share, on the scale of the prices of the day (brapi's `includeRaw=true`). */
  rawRate: number | null
  lastDatePrior: string | null
  exDate: string | null
  paymentDate: string | null
  approvedOn: string | null
  relatedTo: string | null
  isinCode: string | null
  assetIssued: string | null
  remarks: string | null
}

/** A symbol's corporate events as the provider gives them; none for a symbol it has none of (or does not know). */
export interface ProviderEvents {
  stock: ProviderStockEvent[]
  cash: ProviderCashEvent[]
}

export const NO_PROVIDER_EVENTS: ProviderEvents = { stock: [], cash: [] }

/** A symbol's events and when they were read of the provider (ISO 8601). */
export interface EventsRead {
  events: ProviderEvents
  asOf: string
}

/** A provider's label as matched: upper-cased, its accents taken off (`Bonificação` → `BONIFICACAO`). */
export function labelOf (text: string): string {
  return text.normalize('NFD').replace(/\p{M}/gu, '').trim().toUpperCase()
}

/** The kinds of event the service applies, by what they do (docs/api.md#corporate-events). */
const STOCK_EVENT_TYPES = ['SPLIT', 'REVERSE_SPLIT', 'BONUS'] as const
const CASH_EVENT_TYPES = ['DIVIDEND', 'JCP', 'INCOME'] as const
export const CORPORATE_EVENT_TYPES = [...STOCK_EVENT_TYPES, ...CASH_EVENT_TYPES] as const
export type StockEventType = typeof STOCK_EVENT_TYPES[number]
export type CashEventType = typeof CASH_EVENT_TYPES[number]

/** A cash event's money: `paid` once its payment date has come, else `announced`. */
export const INCOME_STATUSES = ['paid', 'announced'] as const
export type IncomeStatus = typeof INCOME_STATUSES[number]

const Money = (description: string) => Type.Number({ description: `${description}, in BRL (2 decimals)` })

/** One event an asset was entitled to: `GET /portfolio-assets/:id/events` and `PortfolioAsset.events`. */
export const AssetEventSchema = Type.Object({
  type: Type.Unsafe<typeof CORPORATE_EVENT_TYPES[number]>({
    ...StringEnum(CORPORATE_EVENT_TYPES),
    description: 'SPLIT (desdobramento), REVERSE_SPLIT (grupamento), BONUS (bonificação), DIVIDEND (dividendo), ' +
      'JCP (juros sobre capital próprio), INCOME (rendimento)'
  }),
  dataCom: Type.String({ ...DaySchema, description: 'The data com: what was held at its end is entitled' }),
  exDate: Type.String({
    ...DaySchema,
    description: 'The first day without the entitlement; a stock event takes effect on it (the day after the data ' +
      'com when the provider gives none)'
  }),
  paymentDate: Type.Union([Type.String(DaySchema), Type.Null()], {
    description: 'When the cash is paid; null for a stock event, and for a cash event whose date is not announced'
  }),
  ratio: Type.Optional(Type.Number({ description: 'Shares after ÷ shares before (8 decimals): 2 for 2 for 1' })),
  quantityBefore: Type.Optional(Type.Number({
    description: 'The shares held at the end of the data com: what the event counts'
  })),
  quantityAfter: Type.Optional(Type.Number({
    description: 'What those shares became (quantityBefore × ratio, 8 decimals): a stock event\'s'
  })),
  rate: Type.Optional(Type.Number({ description: 'Per share held at the data com, in BRL (8 decimals)' })),
  gross: Type.Optional(Money('quantityBefore × rate')),
  withheld: Type.Optional(Money('The income tax withheld at source: 15 % of a JCP\'s gross, none otherwise')),
  net: Type.Optional(Money('gross − withheld: what is paid')),
  status: Type.Optional(Type.Unsafe<IncomeStatus>({
    ...StringEnum(INCOME_STATUSES),
    description: 'paid once paymentDate has come, else announced'
  }))
}, { title: 'AssetEvent', description: 'A corporate event the asset was entitled to (docs/api.md#corporate-events)' })
export type AssetEvent = Static<typeof AssetEventSchema>

/** `GET /portfolio-assets/:id/events`: every event the asset was entitled to, by data com. */
export const AssetEventsSchema = Type.Array(AssetEventSchema, {
  title: 'AssetEvents', description: 'The corporate events the asset was entitled to, by data com'
})

/** The first year an income may be asked of (the first a transaction may be dated in). */
const FIRST_INCOME_YEAR = 1990

/** `GET /portfolios/:id/income?year=`. */
export const IncomeQuerySchema = Type.Object({
  year: Type.Optional(Type.Integer({
    minimum: FIRST_INCOME_YEAR, maximum: 9999, description: 'The calendar year of the payments; default this year'
  }))
})

const IncomeTotalsSchema = Type.Object({
  gross: Money('What the events paying in it pay before tax'),
  withheld: Money('The tax withheld at source'),
  net: Money('gross − withheld')
}, { title: 'IncomeTotals' })

/** `GET /portfolios/:id/income` and GraphQL's `Portfolio.income(year:)`: a year's *proventos*, by payment month. */
export const PortfolioIncomeSchema = Type.Object({
  portfolioId: RecordId('The portfolio'),
  currency: Type.Literal('BRL'),
  year: Type.Integer({ minimum: FIRST_INCOME_YEAR, maximum: 9999 }),
  total: IncomeTotalsSchema,
  months: Type.Array(Type.Object({
    month: Type.String({ ...MonthSchema, description: 'YYYY-MM: the events whose payment date falls in it' }),
    gross: Money('What the month\'s events pay before tax'),
    withheld: Money('The tax withheld at source'),
    net: Money('gross − withheld'),
    paid: Money('The net of the month\'s events already paid'),
    announced: Money('The net of the month\'s events not yet paid')
  }, { title: 'IncomeMonth' }), { minItems: 12, maxItems: 12, description: 'January to December' }),
  bySymbol: Type.Array(Type.Object({
    symbol: StoredText(200, 'The ticker'),
    gross: Money('What its events paying in the year pay before tax'),
    withheld: Money('The tax withheld at source'),
    net: Money('gross − withheld')
  }, { title: 'IncomeOfSymbol' }), { description: 'Each symbol that pays in the year, by symbol' })
}, {
  title: 'PortfolioIncome',
  description: 'The dividends, JCP and rendimentos a portfolio was entitled to, by payment month ' +
    '(docs/api.md#corporate-events)'
})
export type PortfolioIncome = Static<typeof PortfolioIncomeSchema>
