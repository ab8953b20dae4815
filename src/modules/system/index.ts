import fp from 'fastify-plugin'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ProviderConfigSchema } from './schemas.js'

/** Utility routes of spec §4.7. */
const systemModule: FastifyPluginAsyncTypebox = async app => {
  app.get('/provider-config', {
    schema: { summary: 'Provider hashes that tell users from clients', response: { 200: ProviderConfigSchema } }
  }, async () => app.providerConfig)
}

export default fp(systemModule, {
  name: 'bff-system',
  fastify: '5.x',
  dependencies: ['bff-auth'],
  decorators: { fastify: ['providerConfig'] },
  encapsulate: true
})
