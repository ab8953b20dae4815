import { reusableModule } from '../../plugins/reusable-module.js'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ensureDomain } from '../../plugins/domain.js'
import { documentRoutes } from '../../plugins/openapi.js'
import { operationRoutes } from '../../plugins/operation-routes.js'
import { assetTransactionOperations } from '../../operations/asset-transactions.js'
import { portfolioAssetOperations } from '../../operations/portfolio-assets.js'

/**
 * Portfolio assets, their transactions, quotes and dashboards (docs/api.md#resources), behind the
 * credential PORTFOLIO_ACCESS names (docs/api.md#whose-portfolios): the routes declared in
 * src/operations/portfolio-assets.ts and asset-transactions.ts, each guarded by it and handing the
 * request to a service of src/domain, which owns the rules.
 */
const portfolioAssetsModule: FastifyPluginAsyncTypebox = async app => {
  app.addHook('onRoute', documentRoutes('portfolio-assets'))
  await ensureDomain(app)
  operationRoutes(app, [...portfolioAssetOperations, ...assetTransactionOperations])
}

export default reusableModule(portfolioAssetsModule, {
  name: 'bff-portfolio-assets',
  fastify: '5.x',
  dependencies: ['bff-auth', 'bff-store', 'bff-quotes'],
  decorators: { fastify: ['verifyPortfolioAccess', 'portfolioAccess', 'store', 'quotes'] }
})
