import { reusableModule } from '../../plugins/reusable-module.js'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ensureDomain } from '../../plugins/domain.js'
import { documentRoutes } from '../../plugins/openapi.js'
import { operationRoutes } from '../../plugins/operation-routes.js'
import { portfolioOperations } from '../../operations/portfolios.js'

/**
 * Portfolios (docs/api.md#resources), behind the credential PORTFOLIO_ACCESS names (the API key,
 * a user's token, or either: docs/api.md#whose-portfolios): the routes declared in
 * src/operations/portfolios.ts, each guarded by it and handing the request to the portfolio
 * service (src/domain/portfolios.ts), which owns the rules, a user's scope among them. It reads
 * the store alone: what a portfolio is worth at market prices (valuation, performance) is the
 * portfolio-valuation module's, which needs quotes.
 */
const portfoliosModule: FastifyPluginAsyncTypebox = async app => {
  app.addHook('onRoute', documentRoutes('portfolios'))
  await ensureDomain(app)
  operationRoutes(app, portfolioOperations)
}

export default reusableModule(portfoliosModule, {
  name: 'bff-portfolios',
  fastify: '5.x',
  dependencies: ['bff-auth', 'bff-store'],
  decorators: { fastify: ['verifyPortfolioAccess', 'portfolioAccess', 'store'] }
})
