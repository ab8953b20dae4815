import fp from 'fastify-plugin'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errorSchemas } from '../../plugins/error-responses.js'
import { ProviderConfigSchema, ResetSchema, StatsSchema } from './schemas.js'

export interface SystemModuleOptions {
  /** Registers `POST /reset` (development only, CONTRACT §2). */
  devRoutes: boolean
}

/** Utility routes of spec §4.7. */
const systemModule: FastifyPluginAsyncTypebox<SystemModuleOptions> = async (app, options) => {
  app.get('/provider-config', {
    schema: { summary: 'Provider hashes that tell users from clients', response: { 200: ProviderConfigSchema } }
  }, async () => app.providerConfig)

  app.get('/stats', {
    schema: { summary: 'Counts and total value of the store', response: { 200: StatsSchema, ...errorSchemas(401) } },
    onRequest: [app.verifyApiKey]
  }, async () => await app.store.stats())

  if (!options.devRoutes) return

  app.post('/reset', {
    schema: { summary: 'Reload the demo portfolios (development only)', response: { 200: ResetSchema, ...errorSchemas(401) } },
    onRequest: [app.verifyApiKey]
  }, async () => {
    await app.store.resetToDemoData()
    return { message: 'Dados resetados com sucesso' }
  })
}

export default fp(systemModule, {
  name: 'bff-system',
  fastify: '5.x',
  dependencies: ['bff-auth', 'bff-store'],
  decorators: { fastify: ['providerConfig', 'verifyApiKey', 'store'] },
  encapsulate: true
})
