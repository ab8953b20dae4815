import { NotFoundError } from '../errors.js'
import { IdParamsSchema } from '../schemas/common.js'
import { PortfolioSchema } from '../schemas/portfolio.js'
import {
  DEFAULT_PERFORMANCE_RANGE, PerformanceQuerySchema, PortfolioPerformanceSchema
} from '../schemas/performance.js'
import { PortfolioValuationSchema } from '../schemas/valuation.js'
import { IncomeQuerySchema, PortfolioIncomeSchema } from '../schemas/corporate-events.js'
import { batched, operation, stream } from './operation.js'

/*
 * What a portfolio is worth at market prices (docs/api.md#valuation, docs/api.md#performance): the
 * portfolio-valuation module's routes, in its order, and GraphQL's fields. The live valuation's
 * Server-Sent Events are written by the module itself (src/modules/portfolio-valuation).
 */

const errors = [400, 401, 404] as const

/** A performance asks the provider for a history per symbol (cached), and IBOVESPA, SELIC and IPCA. */
const PERFORMANCE_COST = 25
/** An income reads the portfolio's transactions and its symbols' events (cached a day). */
const INCOME_COST = 10

export const portfolioValuationOperations = [
  // The valuations of every portfolio of an answer in one provider batch.
  batched({
    output: PortfolioValuationSchema,
    scope: 'portfolio',
    batch: async (domain, call, portfolios) =>
      await domain.valuations.ofPortfolios(call.access, portfolios.map(portfolio => portfolio.id), call.log),
    graphql: {
      field: 'valuation',
      of: PortfolioSchema,
      description: 'What the portfolio is worth at market prices',
      cost: 5
    }
  }),

  operation({
    input: { params: IdParamsSchema, query: PerformanceQuerySchema },
    output: PortfolioPerformanceSchema,
    scope: 'portfolio',
    run: async (domain, call, { params, query }) => await domain.performances.performance(
      call.access, params.id, query.range ?? DEFAULT_PERFORMANCE_RANGE, call.log),
    rest: {
      method: 'GET',
      url: '/:id/performance',
      operationId: 'getPortfolioPerformance',
      summary: 'How a portfolio did over a range, against IBOVESPA, SELIC and IPCA',
      description: 'A point each trading day (1m, 3m, 6m), week (ytd, 1y) or month (5y, max) with what was held ' +
        'then, at average cost and at its close in BRL; the result net of what was bought and sold; the ' +
        'time-weighted return (money put in or taken out is not performance); IBOVESPA, SELIC and IPCA over ' +
        'the same dates (null when the provider cannot give one); estimated where a value is not a market ' +
        'close (docs/api.md#performance). Kept until the portfolio changes or the next close.',
      errors: [400, 401, 404, 502, 504]
    },
    graphql: {
      field: 'performance',
      of: PortfolioSchema,
      args: { range: { path: 'query.range', default: DEFAULT_PERFORMANCE_RANGE } },
      description: 'How the portfolio did over a range, against IBOVESPA, SELIC and IPCA',
      cost: PERFORMANCE_COST
    }
  }),

  operation({
    input: { params: IdParamsSchema, query: IncomeQuerySchema },
    output: PortfolioIncomeSchema,
    scope: 'portfolio',
    run: async (domain, call, { params, query }) =>
      await domain.events.income(call.access, params.id, query.year, call.log),
    rest: {
      method: 'GET',
      url: '/:id/income',
      operationId: 'getPortfolioIncome',
      summary: 'The dividends, JCP and rendimentos of a year, by payment month',
      description: 'The cash of the corporate events the portfolio\'s assets were entitled to (the shares held at ' +
        'each data com), whose payment date falls in `year` (default this year): gross, withheld (15 % of a JCP) ' +
        'and net by month (12 of them; the net split into paid and announced) and by symbol ' +
        '(docs/api.md#corporate-events).',
      errors: [400, 401, 404, 502, 504]
    },
    graphql: {
      field: 'income',
      of: PortfolioSchema,
      args: { year: 'query.year' },
      description: 'The dividends, JCP and rendimentos of a year (default this year), by payment month',
      cost: INCOME_COST
    }
  }),

  operation({
    input: { params: IdParamsSchema },
    output: PortfolioValuationSchema,
    scope: 'portfolio',
    run: async (domain, call, { params }) => await domain.valuations.valuation(call.access, params.id, call.log),
    rest: {
      method: 'GET',
      url: '/:id/valuation',
      operationId: 'getPortfolioValuation',
      summary: 'What a portfolio is worth at market prices',
      description: 'What a portfolio is worth at market prices: each asset\'s quantity times its symbol\'s quote, ' +
        'rounded to cents, summed; an asset without a quote counts at its own totalValue and its symbol ' +
        'is listed in unquotedSymbols. One provider request for all the portfolio\'s symbols ' +
        '(docs/api.md#valuation).',
      errors
    }
  }),

  stream({
    input: { params: IdParamsSchema },
    output: PortfolioValuationSchema,
    scope: 'portfolio',
    run: async (domain, call, { params }) => await domain.liveValuations.open(call.access, params.id),
    graphql: {
      subscription: 'portfolioValuation',
      args: { id: 'params.id' },
      description: 'The portfolio\'s valuation at once, then each time a value changes; when the portfolio is ' +
        'deleted, an error NOT_FOUND and the end',
      each: event => {
        if (event.kind === 'deleted') throw new NotFoundError('Portfolio')
        return event.valuation
      }
    }
  })
]
