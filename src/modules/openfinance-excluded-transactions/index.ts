import { reusableModule } from '../../plugins/reusable-module.js'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ensureDomain } from '../../plugins/domain.js'
import { documentRoutes } from '../../plugins/openapi.js'
import { operationRoutes } from '../../plugins/operation-routes.js'
import { excludedTransactionOperations } from '../../operations/excluded-transactions.js'

/**
 * Open-finance excluded transactions (docs/api.md#resources), behind the Bearer token: the routes
 * declared in src/operations/excluded-transactions.ts, each guarded by it and handing the request
 * to the exclusion service (src/domain/exclusions.ts), which owns the rules (a client only its own records).
 */
const exclusionsModule: FastifyPluginAsyncTypebox = async app => {
  app.addHook('onRoute', documentRoutes('openfinance-excluded-transactions'))
  await ensureDomain(app)
  operationRoutes(app, excludedTransactionOperations)
}

export default reusableModule(exclusionsModule, {
  name: 'bff-openfinance-excluded-transactions',
  fastify: '5.x',
  dependencies: ['bff-auth', 'bff-store'],
  decorators: { fastify: ['verifyJwt', 'store'] }
})
