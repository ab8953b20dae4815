import { reusableModule } from '../../plugins/reusable-module.js'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ensureDomain } from '../../plugins/domain.js'
import { errorSchemas } from '../../plugins/error-responses.js'
import { documentRoutes } from '../../plugins/openapi.js'
import { DeletedSchema, IdParamsSchema, PageOf } from '../../schemas/common.js'
import {
  CreateExclusionInputSchema,
  ExcludedTransactionRecordSchema,
  ExcludedTransactionSchema,
  ListExclusionsQuerySchema
} from '../../schemas/excluded-transaction.js'

/**
 * Open-finance excluded transactions (docs/api.md#resources), behind the Bearer token: the
 * onRequest guard verifies it, and each handler hands the request to the exclusion service
 * (src/domain/exclusions.ts), which owns the rules (a client only its own records).
 */
const exclusionsModule: FastifyPluginAsyncTypebox = async app => {
  app.addHook('onRoute', documentRoutes('openfinance-excluded-transactions', 'bearerAuth'))
  app.addHook('onRequest', app.verifyJwt)
  await ensureDomain(app)
  const { exclusions } = app.domain
  const errors = errorSchemas(400, 401, 403, 404)

  app.post('/', {
    // Idempotency-Key (src/plugins/idempotency.ts): a repeat gets the first answer, 201 included.
    config: { idempotent: true },
    schema: {
      operationId: 'excludeTransaction',
      summary: 'Exclude a transaction (idempotent per client and transaction)',
      description: 'Records that a client excluded an open-finance transaction (201). The same client and ' +
        'transaction again answer the stored record with 200. A client token may only exclude its own ' +
        'transactions, a user token any client\'s (docs/api.md#resources).',
      body: CreateExclusionInputSchema,
      response: { 201: ExcludedTransactionRecordSchema, 200: ExcludedTransactionRecordSchema, ...errors }
    }
  }, async (request, reply) => {
    const { record, created } = await exclusions.create(request.access, request.body)
    return reply.code(created ? 201 : 200).send(record)
  })

  app.get('/', {
    schema: {
      operationId: 'listExcludedTransactions',
      summary: 'Exclusions of one client',
      description: 'A page of one client\'s excluded transactions (client_id required). A client token sees only ' +
        'its own (403 otherwise), a user token any client\'s (docs/api.md#resources).',
      querystring: ListExclusionsQuerySchema,
      response: { 200: PageOf(ExcludedTransactionSchema), ...errors }
    }
  }, async request => await exclusions.list(request.access, request.query.client_id, request.query))

  app.delete('/:id', {
    schema: {
      operationId: 'deleteExcludedTransaction',
      summary: 'Remove an exclusion',
      description: 'Removes an exclusion. A client token may only remove its own (403 otherwise) ' +
        '(docs/api.md#resources).',
      params: IdParamsSchema,
      response: { 200: DeletedSchema, ...errors }
    }
  }, async request => {
    await exclusions.delete(request.access, request.params.id)
    return { message: 'Exclusão removida com sucesso', id: request.params.id }
  })
}

export default reusableModule(exclusionsModule, {
  name: 'bff-openfinance-excluded-transactions',
  fastify: '5.x',
  dependencies: ['bff-auth', 'bff-store'],
  decorators: { fastify: ['verifyJwt', 'store'] }
})
