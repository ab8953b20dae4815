import fp from 'fastify-plugin'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { NotFoundFeminineError } from '../../errors.js'
import { requirePrincipal } from '../../plugins/auth.js'
import { errorSchemas } from '../../plugins/error-responses.js'
import { documentRoutes } from '../../plugins/openapi.js'
import { DeletedSchema, IdParamsSchema, pageOf } from '../../schemas/common.js'
import {
  CreateExclusionInputSchema,
  ExcludedTransactionRecordSchema,
  ExcludedTransactionSchema,
  assertOwnClient,
  createExclusionInput
} from '../../schemas/excluded-transaction.js'
import { ListExclusionsQuerySchema } from './schemas.js'

/** Open-finance excluded transactions (docs/api.md#resources), behind the Bearer token. */
const exclusionsModule: FastifyPluginAsyncTypebox = async app => {
  app.addHook('onRoute', documentRoutes('openfinance-excluded-transactions', 'bearerAuth'))
  app.addHook('onRequest', app.verifyJwt)
  const { exclusions } = app.store
  const errors = errorSchemas(400, 401, 403, 404)

  app.post('/', {
    // Idempotency-Key (src/plugins/idempotency.ts): a repeat gets the first answer, 201 included.
    config: { idempotent: true },
    schema: {
      operationId: 'excludeTransaction', summary: 'Exclude a transaction (idempotent per client and transaction)',
      body: CreateExclusionInputSchema,
      response: { 201: ExcludedTransactionRecordSchema, 200: ExcludedTransactionRecordSchema, ...errors }
    }
  }, async (request, reply) => {
    const input = createExclusionInput(request.body)
    assertOwnClient(requirePrincipal(request), input.client_id)
    const { record, created } = await exclusions.create(input)
    return reply.code(created ? 201 : 200).send(record)
  })

  app.get('/', {
    schema: { operationId: 'listExcludedTransactions', summary: 'Exclusions of one client', querystring: ListExclusionsQuerySchema, response: { 200: Type.Array(ExcludedTransactionSchema), ...errors } }
  }, async request => {
    const clientId = request.query.client_id.trim()
    assertOwnClient(requirePrincipal(request), clientId)
    return await exclusions.list(clientId, pageOf(request.query))
  })

  app.delete('/:id', {
    schema: { operationId: 'deleteExcludedTransaction', summary: 'Remove an exclusion', params: IdParamsSchema, response: { 200: DeletedSchema, ...errors } }
  }, async request => {
    const { id } = request.params
    const existing = await exclusions.get(id)
    if (existing === undefined) throw new NotFoundFeminineError('Exclusão')
    assertOwnClient(requirePrincipal(request), existing.client_id)
    if (!await exclusions.delete(id)) throw new NotFoundFeminineError('Exclusão')
    return { message: 'Exclusão removida com sucesso', id }
  })
}

export default fp(exclusionsModule, {
  name: 'bff-openfinance-excluded-transactions',
  fastify: '5.x',
  dependencies: ['bff-auth', 'bff-store'],
  decorators: { fastify: ['verifyJwt', 'store'] },
  encapsulate: true
})
