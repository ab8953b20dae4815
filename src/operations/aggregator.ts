import { Type } from '@sinclair/typebox'
import { ItemIdSchema } from '../schemas/common.js'
import { ItemStatusSchema } from '../schemas/item-status.js'
import { stream } from './operation.js'

/** Aggregator items (docs/api.md#aggregator): GraphQL's subscription (the aggregator module's routes are relays). */
export const aggregatorOperations = [
  stream({
    input: { args: Type.Object({ itemId: ItemIdSchema }) },
    output: ItemStatusSchema,
    scope: 'principal',
    run: async (domain, call, { args }) => await domain.aggregatorItems.subscribe(call.access, args.itemId, call.log),
    graphql: {
      subscription: 'aggregatorItem',
      args: { itemId: 'args.itemId' },
      credential: 'a client only its own items',
      description: 'The verified status of an aggregator item, each time a webhook about it arrives at any instance'
    }
  })
]
