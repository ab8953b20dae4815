import { Type, type Static } from '@sinclair/typebox'
import { ItemIdSchema, NonBlankString } from '../../schemas/common.js'

export const AGGREGATOR_METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'] as const

/** `{endpoint, method, ...rest}`: rest becomes the query of a GET, the JSON body otherwise (docs/api.md#aggregator). */
export const AggregatorRelayBodySchema = Type.Object({
  endpoint: Type.String({ minLength: 1, maxLength: 2048 }),
  method: Type.Unsafe<typeof AGGREGATOR_METHODS[number]>({ type: 'string', enum: [...AGGREGATOR_METHODS] })
}, {
  title: 'AggregatorRelayInput',
  examples: [{ endpoint: '/accounts', method: 'GET', itemId: 'f7d9e3f4-8a3b-4c43-9d5e-1f2b3c4d5e6f' }],
  additionalProperties: true,
  maxProperties: 100
})

/** Only `itemId` is read; options a caller sends (a webhookUrl…) are dropped (docs/api.md#aggregator). */
export const ConnectTokenBodySchema = Type.Object({
  itemId: Type.Optional(ItemIdSchema)
}, { title: 'ConnectTokenInput', examples: [{ itemId: 'f7d9e3f4-8a3b-4c43-9d5e-1f2b3c4d5e6f' }] })

export const ConnectTokenSchema = Type.Object({
  accessToken: Type.String({ description: 'Pluggy\'s connect token, as Pluggy made it' }),
  expiresIn: Type.Integer({ minimum: 1800, maximum: 1800, description: 'Seconds the token lives: 30 minutes' }),
  itemId: Type.Union([ItemIdSchema, Type.Null()], {
    description: 'The item the token updates, as asked; null for a new one'
  })
}, { title: 'ConnectToken' })

/**
 * Both webhook shapes (docs/api.md#aggregator): `{event: 'item.updated', data: {itemId, status}}` and
 * the aggregator's flat `{event: 'item/updated', eventId, itemId, …}`. Everything is kept as sent.
 */
export const WebhookBodySchema = Type.Object({
  event: NonBlankString(200),
  eventId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  itemId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  data: Type.Optional(Type.Object({
    itemId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    status: Type.Optional(Type.String({ minLength: 1, maxLength: 100 }))
  }, { additionalProperties: true }))
}, {
  title: 'AggregatorWebhookEvent',
  examples: [{ event: 'item/updated', eventId: 'evt-1', itemId: 'f7d9e3f4-8a3b-4c43-9d5e-1f2b3c4d5e6f' }],
  additionalProperties: true
})
export type WebhookBody = Static<typeof WebhookBodySchema>

export const WebhookAckSchema = Type.Object({ received: Type.Literal(true) }, { title: 'WebhookAck' })
