import { Type } from '@sinclair/typebox'
import { IdParamsSchema, ItemIdSchema, PageOf, PageQuerySchema } from '../schemas/common.js'
import { ImportInputSchema, ImportParamsSchema, InvestmentImportSchema } from '../schemas/import.js'
import { PortfolioSchema } from '../schemas/portfolio.js'
import { operation } from './operation.js'

/*
 * Investments imported from the investor's institution through the aggregator (docs/api.md#imports): the
 * portfolio-imports module's routes, in its order, and GraphQL's fields.
 */

/** What asking for an import answers besides 401 and 403: the portfolio or the item unknown, the aggregator's. */
const askErrors = [400, 401, 403, 404, 429, 502, 503, 504] as const

/** A portfolio's imports are few; cost estimates assume this many. */
const IMPORTS_PER_PORTFOLIO_ESTIMATE = 10

/** Asking costs a read of the item at the aggregator. */
const ASK_COST = 5

export const portfolioImportOperations = [
  operation({
    input: { params: IdParamsSchema, body: ImportInputSchema },
    output: InvestmentImportSchema,
    scope: 'portfolio',
    run: async (domain, call, { params, body }) =>
      await domain.imports.request(call.access, params.id, body.itemId, call.log),
    rest: {
      method: 'POST',
      url: '/:id/imports',
      operationId: 'importInvestments',
      summary: 'Import an aggregator item\'s investments into a portfolio',
      description: 'Queues an import of the investments of an aggregator item (the portfolio owner\'s: 403 ' +
        'otherwise, 404 for an unknown one) and answers it with 202; it runs in the background, and the item is ' +
        'imported again after each of its updates. An import of the item already queued is the one answered. Safe ' +
        'to retry with Idempotency-Key (docs/api.md#imports).',
      errors: askErrors,
      status: 202,
      idempotent: true
    }
  }),

  // GraphQL's mutation names the item as an argument of its own.
  operation({
    input: { params: IdParamsSchema, args: Type.Object({ itemId: ItemIdSchema }) },
    output: InvestmentImportSchema,
    scope: 'portfolio',
    run: async (domain, call, { params, args }) =>
      await domain.imports.request(call.access, params.id, args.itemId, call.log),
    graphql: {
      mutation: 'importInvestments',
      args: { portfolioId: 'params.id', itemId: 'args.itemId' },
      cost: ASK_COST,
      description: 'Import an aggregator item\'s investments into a portfolio: queued, run in the background, ' +
        'and again after each update of the item'
    }
  }),

  operation({
    input: { params: IdParamsSchema, query: PageQuerySchema },
    output: PageOf(InvestmentImportSchema),
    scope: 'portfolio',
    run: async (domain, call, { params, query }) => await domain.imports.list(call.access, params.id, query),
    rest: {
      method: 'GET',
      url: '/:id/imports',
      operationId: 'listImports',
      summary: 'A portfolio\'s investment imports',
      description: 'A page of the portfolio\'s imports (limit 1-1000, default 1000; offset), the latest first, each ' +
        'with its status, counts, skipped investments and error (docs/api.md#imports).',
      errors: [400, 401, 404]
    },
    graphql: {
      field: 'imports',
      of: PortfolioSchema,
      args: { limit: 'query.limit', offset: 'query.offset' },
      cost: { items: IMPORTS_PER_PORTFOLIO_ESTIMATE },
      description: 'The portfolio\'s investment imports, the latest first'
    }
  }),

  operation({
    input: { params: ImportParamsSchema },
    output: InvestmentImportSchema,
    scope: 'portfolio',
    run: async (domain, call, { params }) => await domain.imports.get(call.access, params.id, params.importId),
    rest: {
      method: 'GET',
      url: '/:id/imports/:importId',
      operationId: 'getImport',
      summary: 'An investment import',
      description: 'One import of the portfolio: its status (queued, running, done, failed), counts, skipped ' +
        'investments and error (docs/api.md#imports).',
      errors: [400, 401, 404]
    }
  })
]
