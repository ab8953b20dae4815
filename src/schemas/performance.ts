import { Type, type Static } from '@sinclair/typebox'
import { DaySchema, RecordId, StringEnum } from './common.js'
import { QuoteSourceSchema } from './quote.js'

/** The periods a performance covers (docs/api.md#performance), up to the last close. */
export const PERFORMANCE_RANGES = ['1m', '3m', '6m', 'ytd', '1y', '5y', 'max'] as const
export type PerformanceRange = typeof PERFORMANCE_RANGES[number]
export const DEFAULT_PERFORMANCE_RANGE: PerformanceRange = '1y'

/** GraphQL's names of the ranges (an enum value cannot start with a digit). */
export const PERFORMANCE_RANGE_NAMES: Readonly<Record<PerformanceRange, string>> = {
  '1m': 'ONE_MONTH',
  '3m': 'THREE_MONTHS',
  '6m': 'SIX_MONTHS',
  ytd: 'YEAR_TO_DATE',
  '1y': 'ONE_YEAR',
  '5y': 'FIVE_YEARS',
  max: 'MAX'
}

const RANGE_DESCRIPTION = 'The period: 1m, 3m, 6m (a point each trading day), ytd, 1y (each week), 5y, max ' +
  '(each month; max from the first transaction)'

export const PerformanceRangeSchema = Type.Unsafe<PerformanceRange>({
  ...StringEnum(PERFORMANCE_RANGES),
  description: RANGE_DESCRIPTION
})

/** `GET /portfolios/:id/performance?range=`. */
export const PerformanceQuerySchema = Type.Object({
  range: Type.Optional(Type.Unsafe<PerformanceRange>({
    ...PerformanceRangeSchema, description: `${RANGE_DESCRIPTION}; default 1y`
  }))
})
export type PerformanceQuery = Static<typeof PerformanceQuerySchema>

/** A percentage over the range, or `null` when the provider cannot give it. */
function nullablePercent (description: string) {
  return Type.Union([Type.Number(), Type.Null()], { description })
}

/** One day of the chart: what was held, what it was worth at that day's close, the returns to that day. */
export const PerformancePointSchema = Type.Object({
  date: Type.String({ ...DaySchema, description: 'The trading day (YYYY-MM-DD)' }),
  invested: Type.Number({ description: 'What was held that day cost, at average cost (2 decimals)' }),
  value: Type.Number({ description: 'What was held that day was worth at its close, in BRL (2 decimals)' }),
  twr: Type.Number({ description: 'The time-weighted return from `from` to this day, percent (2 decimals)' }),
  ibov: nullablePercent('IBOVESPA\'s change from `from` to this day, percent (2 decimals); null without IBOVESPA'),
  estimated: Type.Boolean({
    description: 'True when `value` rests on a price that is not that day\'s market close in BRL (a gap, a day ' +
      'before the provider\'s history, a stored or average price, a rate of another day)'
  })
}, { title: 'PerformancePoint' })
export type PerformancePoint = Static<typeof PerformancePointSchema>

export const PerformanceBenchmarksSchema = Type.Object({
  ibov: nullablePercent('IBOVESPA\'s change from `from` to `to`, percent; null when the provider cannot give it'),
  selic: nullablePercent('The SELIC accumulated over the business days after `from` up to `to`, percent; null ' +
    'when the provider cannot give it'),
  ipca: nullablePercent('The IPCA accumulated over the months that ended after `from` and by `to`, as published, ' +
    'percent; null when the provider cannot give any of them')
}, { title: 'PerformanceBenchmarks', description: 'Each a percent change over the same dates' })

/** `GET /portfolios/:id/performance` and GraphQL's `Portfolio.performance` (docs/api.md#performance). */
export const PortfolioPerformanceSchema = Type.Object({
  portfolioId: RecordId('The portfolio'),
  currency: Type.Literal('BRL'),
  range: PerformanceRangeSchema,
  from: Type.String({ ...DaySchema, description: 'The first day: its close is where the range starts' }),
  to: Type.String({ ...DaySchema, description: 'The last day with a close' }),
  points: Type.Array(PerformancePointSchema, {
    maxItems: 1000,
    description: 'From `from` to `to`: each trading day (1m, 3m, 6m), the last of each week (ytd, 1y) or month ' +
      '(5y, max)'
  }),
  invested: Type.Number({ description: 'What was held at `to` cost, at average cost (2 decimals)' }),
  value: Type.Number({ description: 'What was held at `to` was worth at its close (2 decimals)' }),
  income: Type.Number({
    description: 'The net cash of the dividends, JCP and rendimentos paid after `from` up to `to` (2 decimals; ' +
      'docs/api.md#corporate-events)'
  }),
  result: Type.Number({
    description: 'value at `to` − value at `from` − what was bought + what was sold in between, fees included, + ' +
      'income (2 decimals)'
  }),
  twr: Type.Number({
    description: 'The time-weighted return over the range, percent (2 decimals): money put in or taken out is ' +
      'not performance; cash paid by corporate events is (total return)'
  }),
  benchmarks: PerformanceBenchmarksSchema,
  estimated: Type.Boolean({ description: 'True when any point is' }),
  quoteSource: Type.Unsafe<string>({
    ...QuoteSourceSchema,
    description: 'Who gave the closes: brapi.dev (market closes), or the offline simulation (simulated closes, not ' +
      'market prices)'
  })
}, { title: 'PortfolioPerformance', description: 'How a portfolio did over a range, against IBOVESPA, SELIC and IPCA' })
export type PortfolioPerformance = Static<typeof PortfolioPerformanceSchema>
