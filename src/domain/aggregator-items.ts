import type { FastifyBaseLogger } from 'fastify'
import { untilItemDeleted, type ItemStatus, type ItemStatusFeed } from '../item-status.js'
import type { Access } from './access.js'

/** Who owns an aggregator item, asked of the aggregator (cached briefly): ForbiddenError unless `clientId`. */
export interface ItemOwners {
  assertOwner: (clientId: string, itemId: string, log: FastifyBaseLogger) => Promise<void>
}

/**
 * Aggregator items (docs/api.md#aggregator), behind the Bearer token: a `client` principal
 * reaches only the items whose `clientUserId` is its id (403 `FORBIDDEN` otherwise), a `user` any.
 */
export class AggregatorItemService {
  constructor (private readonly owners: ItemOwners, private readonly feed: Pick<ItemStatusFeed, 'subscribe'>) {}

  /**
   * The item's verified status each time a webhook about it arrives at any instance, until the
   * item is deleted: that last status (`status: null`, `event: 'item/deleted'`) ends the subscription.
   */
  async subscribe (access: Access, itemId: string, log: FastifyBaseLogger): Promise<AsyncIterableIterator<ItemStatus>> {
    const principal = await access.principal()
    if (principal.type === 'client') await this.owners.assertOwner(principal.id, itemId, log)
    return untilItemDeleted(this.feed.subscribe(itemId))
  }
}
