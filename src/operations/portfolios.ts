import { Type } from '@sinclair/typebox'
import { AssetSchema, type Asset } from '../schemas/asset.js'
import { DeletedSchema, IdParamsSchema, PageOf } from '../schemas/common.js'
import {
  CreatePortfolioInputSchema,
  CreatedPortfolioSchema,
  ListPortfoliosQuerySchema,
  PortfolioDetailSchema,
  PortfolioSchema,
  PortfolioValueSchema,
  UpdatePortfolioInputSchema,
  portfolioValue,
  type Portfolio
} from '../schemas/portfolio.js'
import { Answer, batched, operation, tagged } from './operation.js'

/*
 * Portfolios (docs/api.md#resources), the portfolios module's routes in the order it registers them
 * (the OpenAPI document lists them so) and GraphQL's fields in the order it lists them.
 */

const errors = [400, 401, 404] as const

/** A portfolio's assets are unbounded; cost estimates assume this many. */
const ASSETS_PER_PORTFOLIO_ESTIMATE = 20

/** The assets read with their portfolio in the same statement (`Query.portfolio`), so not read again. */
const READ_ASSETS = Symbol('assets read with the portfolio')
type PortfolioRead = Portfolio & { [READ_ASSETS]?: Asset[] }

export const portfolioOperations = [
  operation({
    input: { query: ListPortfoliosQuerySchema },
    output: PageOf(PortfolioSchema),
    scope: 'portfolio',
    run: async (domain, call, { query }) => await domain.portfolios.list(call.access, query, query),
    rest: {
      method: 'GET',
      url: '/',
      operationId: 'listPortfolios',
      summary: 'List portfolios, optionally of one user',
      description: 'A page of portfolios (limit 1-1000, default 1000; offset), optionally of one user (userId), in ' +
        'creation order; with a user\'s token, only its own (docs/api.md#whose-portfolios).',
      errors
    },
    graphql: {
      query: 'portfolios',
      args: { userId: 'query.userId' },
      paged: true,
      description: 'Portfolios, optionally of one user'
    }
  }),

  operation({
    input: { params: IdParamsSchema },
    output: PortfolioDetailSchema,
    scope: 'portfolio',
    run: async (domain, call, { params }) => tagged(await domain.portfolios.taggedDetail(call.access, params.id)),
    rest: {
      method: 'GET',
      url: '/:id',
      operationId: 'getPortfolio',
      summary: 'A portfolio with its assets',
      description: 'A portfolio with its assets; its totalValue is the sum of the assets\' totalValue as listed ' +
        '(docs/api.md#money). Strong ETag: If-None-Match answers 304 while it is unchanged ' +
        '(docs/api.md#caching).',
      errors,
      entityTag: true
    }
  }),

  // GraphQL reads the detail's portfolio alone, or with its assets when the document asks for them.
  operation({
    input: { params: IdParamsSchema },
    output: PortfolioSchema,
    scope: 'portfolio',
    run: async (domain, call, { params }) => {
      if (call.selects?.('assets') !== true) return await domain.portfolios.portfolioOnly(call.access, params.id)
      // One statement, as REST's detail, whose total is the assets'.
      const read = await domain.portfolios.portfolioAndAssets(call.access, params.id)
      const answered: PortfolioRead = { ...read.portfolio, [READ_ASSETS]: read.assets }
      return answered
    },
    graphql: {
      query: 'portfolio',
      args: { id: 'params.id' },
      nullable: true,
      description: 'One portfolio; null when no portfolio has this id'
    }
  }),

  // The assets of every portfolio of an answer in one statement.
  batched({
    output: Type.Array(AssetSchema),
    scope: 'portfolio',
    batch: async (domain, call, portfolios: PortfolioRead[]) => {
      const unread = portfolios.filter(portfolio => portfolio[READ_ASSETS] === undefined).map(portfolio => portfolio.id)
      const byPortfolio = unread.length === 0 ? undefined : await domain.assets.ofPortfolios(call.access, unread)
      return portfolios.map(portfolio => portfolio[READ_ASSETS] ?? byPortfolio?.get(portfolio.id) ?? [])
    },
    graphql: {
      field: 'assets',
      of: PortfolioSchema,
      description: 'The portfolio\'s assets, oldest first',
      cost: { items: ASSETS_PER_PORTFOLIO_ESTIMATE }
    }
  }),

  operation({
    input: { params: IdParamsSchema },
    output: PortfolioValueSchema,
    scope: 'portfolio',
    run: async (domain, call, { params }) => await domain.portfolios.value(call.access, params.id),
    rest: {
      method: 'GET',
      url: '/:id/value',
      operationId: 'getPortfolioValue',
      summary: 'Total value of a portfolio',
      description: 'A portfolio\'s total value in BRL (the sum of its assets\' totalValue, 2 decimals) and the ' +
        'time of its last change (docs/api.md#money).',
      errors
    },
    // GraphQL has the portfolio already: its value is computed from it, not read again.
    graphql: { field: 'value', of: PortfolioSchema, from: portfolioValue, description: 'Total value of the portfolio' }
  }),

  operation({
    input: { body: CreatePortfolioInputSchema },
    output: PortfolioSchema,
    scope: 'portfolio',
    run: async (domain, call, { body }) => await domain.portfolios.create(call.access, body),
    rest: {
      method: 'POST',
      url: '/',
      operationId: 'createPortfolio',
      summary: 'Create a portfolio',
      description: 'Creates a portfolio (name 1-200 characters, trimmed; description up to 2000; userId) and ' +
        'answers it with 201. Safe to retry with Idempotency-Key (docs/api.md#safe-retries).',
      errors,
      status: 201,
      output: CreatedPortfolioSchema,
      idempotent: true
    },
    graphql: { mutation: 'createPortfolio', args: { input: 'body' }, description: 'Create a portfolio' }
  }),

  operation({
    input: { params: IdParamsSchema, body: UpdatePortfolioInputSchema },
    output: PortfolioSchema,
    scope: 'portfolio',
    run: async (domain, call, { params, body }) => {
      const changed = await domain.portfolios.update(call.access, params.id, body, call.ifMatch)
      // The tag GET /portfolios/:id now answers (the detail's), so the next edit can send it as If-Match.
      return new Answer(changed.portfolio, changed.etag)
    },
    rest: {
      method: 'PATCH',
      url: '/:id',
      operationId: 'updatePortfolio',
      summary: 'Rename or describe a portfolio',
      description: 'Changes a portfolio\'s name or description (at least one of them) and answers the whole ' +
        'portfolio with its new ETag. If-Match makes the change conditional (412 when the portfolio ' +
        'changed meanwhile); Idempotency-Key makes it safe to retry (docs/api.md#safe-retries).',
      errors,
      idempotent: true,
      entityTag: true,
      ifMatch: true
    },
    graphql: {
      mutation: 'updatePortfolio',
      args: { id: 'params.id', input: 'body' },
      nullable: true,
      description: 'Rename or describe a portfolio; null when no portfolio has this id'
    }
  }),

  operation({
    input: { params: IdParamsSchema },
    output: DeletedSchema,
    scope: 'portfolio',
    run: async (domain, call, { params }) => {
      await domain.portfolios.delete(call.access, params.id, call.ifMatch)
      return { message: 'Portfolio removido com sucesso', id: params.id }
    },
    rest: {
      method: 'DELETE',
      url: '/:id',
      operationId: 'deletePortfolio',
      summary: 'Delete a portfolio and its assets',
      description: 'Deletes a portfolio and all its assets; its live valuation streams end with a deleted event. ' +
        'If-Match makes it conditional (docs/api.md#safe-retries).',
      errors,
      ifMatch: true
    },
    graphql: {
      mutation: 'deletePortfolio',
      args: { id: 'params.id' },
      description: 'Delete a portfolio and its assets; false when no portfolio has this id'
    }
  })
]
