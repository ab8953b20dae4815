import { isDeletionEvent, type ItemStatus } from '../schemas/item-status.js'
import type { ChangeFeed } from '../change-feed/change-feed-core.js'
import type { JsonValue, QueryValue } from '../upstream/client.js'
import type { Access, Principal } from './access.js'
import type { ItemOwnership } from './item-ownership.js'
import type { Log } from './ports.js'

/**
 * Aggregator items (docs/api.md#aggregator), behind the Bearer token: a `client` principal
 * reaches only the items whose `clientUserId` is its id (403 `FORBIDDEN` otherwise), a `user` any.
 * The relay and the connect token (REST) and the `aggregatorItem` subscription (GraphQL) all ask here.
 */
export class AggregatorItemService {
  constructor (private readonly owners: ItemOwnership, private readonly feed: Pick<ChangeFeed, 'itemStatuses'>) {}

  /**
   * The caller's principal, once it may reach the aggregator `path` with these fields: every
   * item the call names must be a client's own (reference data is everyone's).
   */
  async mayReach (
    access: Access, path: string, fields: Record<string, QueryValue | JsonValue>, log: Log
  ): Promise<Principal> {
    const principal = await access.principal()
    if (principal.type === 'client') await this.owners.assertMayReach(principal.id, path, fields, log)
    return principal
  }

  /** The caller's principal, once it may act on `itemId` (any item when none is named). */
  async mayUse (access: Access, itemId: string | undefined, log: Log): Promise<Principal> {
    const principal = await access.principal()
    if (itemId !== undefined && principal.type === 'client') await this.owners.assertOwner(principal.id, itemId, log)
    return principal
  }

  /**
   * The item's verified status each time a webhook about it arrives at any instance, until the
   * item is deleted: that last status (`status: null`, `event: 'item/deleted'`) ends the subscription.
   */
  async subscribe (access: Access, itemId: string, log: Log): Promise<AsyncIterableIterator<ItemStatus>> {
    await this.mayUse(access, itemId, log)
    return untilItemDeleted(this.feed.itemStatuses(itemId))
  }
}

/** The last status of an item: its deletion, confirmed by the aggregator (`status: null`). */
function isFinalStatus (status: ItemStatus): boolean {
  return status.status === null && isDeletionEvent(status.event)
}

/**
 * A subscription that ends with the item: the final status is delivered, then the iterator is
 * done and its listener freed at once (a GraphQL subscription then completes).
 */
function untilItemDeleted (statuses: AsyncIterableIterator<ItemStatus>): AsyncIterableIterator<ItemStatus> {
  let ended = false
  const end = async (): Promise<IteratorResult<ItemStatus>> => {
    ended = true
    await statuses.return?.()
    return { done: true, value: undefined }
  }
  const iterator: AsyncIterableIterator<ItemStatus> = {
    next: async () => {
      if (ended) return { done: true, value: undefined }
      const result = await statuses.next()
      if (result.done !== true && isFinalStatus(result.value)) await end()
      return result
    },
    return: end,
    [Symbol.asyncIterator]: () => iterator
  }
  return iterator
}
