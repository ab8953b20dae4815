import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { reusableModule } from '../../plugins/reusable-module.js'
import { ensureDomain, runJobs } from '../../plugins/domain.js'
import { documentRoutes } from '../../plugins/openapi.js'
import { operationRoutes } from '../../plugins/operation-routes.js'
import { portfolioImportOperations } from '../../operations/portfolio-imports.js'

/**
 * Investments imported from the investor's institution through the aggregator (docs/api.md#imports), mounted beside
 * the portfolios module under the same prefix (`/portfolios/:id/imports`) and behind the same credential
 * (PORTFOLIO_ACCESS): the routes declared in src/operations/portfolio-imports.ts. The imports run from the queue of
 * background work (src/domain/jobs.ts), which this module runs on the instance; they read the aggregator, which
 * the portfolios module, reusable without it, does not.
 */
const portfolioImportsModule: FastifyPluginAsyncTypebox = async app => {
  app.addHook('onRoute', documentRoutes('portfolios'))
  await ensureDomain(app)
  operationRoutes(app, portfolioImportOperations)
  runJobs(app)
}

export default reusableModule(portfolioImportsModule, {
  name: 'bff-portfolio-imports',
  fastify: '5.x',
  dependencies: ['bff-auth', 'bff-store', 'bff-upstreams'],
  decorators: { fastify: ['verifyPortfolioAccess', 'portfolioAccess', 'store', 'aggregator'] }
})
