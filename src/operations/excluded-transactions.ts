import { DeletedSchema, IdParamsSchema, PageOf } from '../schemas/common.js'
import {
  CreateExclusionInputSchema,
  ExcludedTransactionRecordSchema,
  ExcludedTransactionSchema,
  ListExclusionsQuerySchema
} from '../schemas/excluded-transaction.js'
import { Answer, operation } from './operation.js'

/*
 * Open-finance excluded transactions (docs/api.md#resources), behind the Bearer token (a client
 * only its own records): the openfinance-excluded-transactions module's routes, in its order, and
 * GraphQL's fields.
 */

const errors = [400, 401, 403, 404] as const

export const excludedTransactionOperations = [
  operation({
    input: { body: CreateExclusionInputSchema },
    output: ExcludedTransactionRecordSchema,
    scope: 'principal',
    run: async (domain, call, { body }) => {
      const { record, created } = await domain.exclusions.create(call.access, body)
      // Idempotency-Key (src/plugins/idempotency.ts): a repeat gets the first answer, 201 included.
      return new Answer(record, undefined, created ? 201 : 200)
    },
    rest: {
      method: 'POST',
      url: '/',
      operationId: 'excludeTransaction',
      summary: 'Exclude a transaction (idempotent per client and transaction)',
      description: 'Records that a client excluded an open-finance transaction (201). The same client and ' +
        'transaction again answer the stored record with 200. A client token may only exclude its own ' +
        'transactions, a user token any client\'s (docs/api.md#resources).',
      errors,
      status: [201, 200],
      idempotent: true
    },
    graphql: {
      mutation: 'excludeTransaction',
      args: { input: 'body' },
      output: ExcludedTransactionSchema,
      description: 'Exclude a transaction (idempotent per client and transaction; a client principal only its own)'
    }
  }),

  operation({
    input: { query: ListExclusionsQuerySchema },
    output: PageOf(ExcludedTransactionSchema),
    scope: 'principal',
    run: async (domain, call, { query }) => await domain.exclusions.list(call.access, query.client_id, query),
    rest: {
      method: 'GET',
      url: '/',
      operationId: 'listExcludedTransactions',
      summary: 'Exclusions of one client',
      description: 'A page of one client\'s excluded transactions (client_id required). A client token sees only ' +
        'its own (403 otherwise), a user token any client\'s (docs/api.md#resources).',
      errors
    },
    graphql: {
      query: 'excludedTransactions',
      args: { clientId: 'query.client_id' },
      paged: true,
      description: 'Excluded transactions of one client; a client principal sees only its own'
    }
  }),

  operation({
    input: { params: IdParamsSchema },
    output: DeletedSchema,
    scope: 'principal',
    run: async (domain, call, { params }) => {
      await domain.exclusions.delete(call.access, params.id)
      return { message: 'Exclusão removida com sucesso', id: params.id }
    },
    rest: {
      method: 'DELETE',
      url: '/:id',
      operationId: 'deleteExcludedTransaction',
      summary: 'Remove an exclusion',
      description: 'Removes an exclusion. A client token may only remove its own (403 otherwise) ' +
        '(docs/api.md#resources).',
      errors
    },
    graphql: {
      mutation: 'deleteExcludedTransaction',
      args: { id: 'params.id' },
      description: 'Remove an exclusion; false when none has this id (a client principal only its own)'
    }
  })
]
