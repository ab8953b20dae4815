import { Type } from '@sinclair/typebox'
import { createTransactionInput } from '../domain/transactions.js'
import { DeletedSchema, IdParamsSchema, IdSchema, PageOf, PageQuerySchema } from '../schemas/common.js'
import { AssetTransactionSchema, CreateTransactionInputSchema } from '../schemas/transaction.js'
import { operation } from './operation.js'

/*
 * An asset's dated buys and sales (docs/api.md#transactions): the portfolio-assets module's routes
 * after the asset's own (./portfolio-assets.ts), and GraphQL's mutations. GraphQL's
 * `PortfolioAsset.transactions` is a batch, declared with the asset's fields (./asset-fields.ts).
 */

const positionErrors = [400, 401, 404, 422] as const

export const assetTransactionOperations = [
  operation({
    input: { params: IdParamsSchema, query: PageQuerySchema },
    output: PageOf(AssetTransactionSchema),
    scope: 'portfolio',
    run: async (domain, call, { params, query }) => await domain.transactions.list(call.access, params.id, query),
    rest: {
      method: 'GET',
      url: '/:id/transactions',
      operationId: 'listAssetTransactions',
      summary: 'The buys and sales of one asset',
      description: 'In the order they count: by date, then as recorded. See docs/api.md#transactions.',
      errors: [400, 401, 404]
    }
  }),

  operation({
    input: { params: IdParamsSchema, body: CreateTransactionInputSchema },
    output: AssetTransactionSchema,
    scope: 'portfolio',
    run: async (domain, call, { params, body }) => await domain.transactions.add(call.access, params.id, body),
    rest: {
      method: 'POST',
      url: '/:id/transactions',
      operationId: 'addAssetTransaction',
      summary: 'Record a dated buy or sale of an asset',
      description: 'The asset\'s quantity, price (its average price) and totalValue, and its portfolio\'s ' +
        'totalValue, follow. A SELL of more than is held at its date (transactions may be back-dated) is 422 ' +
        'INSUFFICIENT_QUANTITY and records nothing. See docs/api.md#transactions.',
      errors: positionErrors,
      status: 201,
      idempotent: true
    },
    graphql: {
      mutation: 'addTransaction',
      args: { assetId: 'params.id', input: 'body' },
      check: ({ body }) => createTransactionInput(body),
      description: 'Record a dated buy or sale of an asset; its quantity, price (average price) and totalValue ' +
        'follow; a sale of more than is held at its date is refused with INSUFFICIENT_QUANTITY'
    }
  }),

  operation({
    input: { params: Type.Object({ id: IdSchema, transactionId: IdSchema }) },
    output: DeletedSchema,
    scope: 'portfolio',
    run: async (domain, call, { params }) => {
      await domain.transactions.remove(call.access, params.id, params.transactionId)
      return { message: 'Transação removida com sucesso', id: params.transactionId }
    },
    rest: {
      method: 'DELETE',
      url: '/:id/transactions/:transactionId',
      operationId: 'removeAssetTransaction',
      summary: 'Undo a buy or sale of an asset',
      description: 'The asset\'s quantity, price (its average price) and totalValue follow. A removal that would ' +
        'leave less than nothing held at some date (a BUY that a later SELL needs) is 422 INSUFFICIENT_QUANTITY ' +
        'and removes nothing. See docs/api.md#transactions.',
      errors: positionErrors
    },
    graphql: {
      mutation: 'removeTransaction',
      args: { assetId: 'params.id', id: 'params.transactionId' },
      description: 'Undo a buy or sale of an asset; false when there is no such asset or transaction; refused ' +
        'with INSUFFICIENT_QUANTITY when that would leave less than nothing held at some date'
    }
  })
]
