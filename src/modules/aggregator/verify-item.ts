import type { FastifyBaseLogger } from 'fastify'
import { isDeletionEvent, isItemStatusValue, type ItemStatus } from '../../schemas/item-status.js'
import type { ChangeFeed } from '../../change-feed/change-feed-core.js'
import type { AggregatorEventRepository } from '../../store/aggregator-events.js'
import type { AggregatorApi } from '../../upstream/aggregator.js'
import { jsonObject, retryAfterSecondsOf } from '../../upstream/client.js'

/** What a verification needs: the aggregator, where items are kept, and who hears of them. */
export interface VerificationDeps {
  aggregator: AggregatorApi
  items: AggregatorEventRepository
  changeFeed: Pick<ChangeFeed, 'publishItemStatus'>
}

export type VerificationOutcome =
  /** The item was read, saved and published. */
  | { result: 'verified' }
  /** The aggregator answered for good (an item it does not know, an unusable answer): no item changed. */
  | { result: 'settled' }
  /** Worth another try (the aggregator down, slow or busy, the budget spent, the store unreachable). */
  | { result: 'failed', reason: string, retryAfterMs?: number }

/** Answers the aggregator gives when it will answer differently later. */
const TRANSIENT_STATUSES = new Set([408, 425, 429])
const REASON_CHARACTERS = 200

/** A wait in seconds, as milliseconds; `undefined` when there is none. */
function retryAfterMs (seconds: unknown): number | undefined {
  return typeof seconds === 'number' && Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined
}

function failed (reason: string, wait: number | undefined): VerificationOutcome {
  const outcome: VerificationOutcome = { result: 'failed', reason: reason.slice(0, REASON_CHARACTERS) }
  return wait === undefined ? outcome : { ...outcome, retryAfterMs: wait }
}

type ThrownError = { code?: unknown, message?: unknown, retryAfterSeconds?: unknown } | undefined

function failure (error: unknown): VerificationOutcome {
  const { code, message, retryAfterSeconds } = (error ?? {}) as NonNullable<ThrownError>
  const reason = [code, message].filter(part => typeof part === 'string').join(': ') || String(error)
  return failed(reason, retryAfterMs(retryAfterSeconds))
}

/** Subscribers at every instance hear of it (GraphQL `aggregatorItem`); the item is saved either way. */
async function publish (deps: VerificationDeps, status: ItemStatus, log: FastifyBaseLogger): Promise<void> {
  await deps.changeFeed.publishItemStatus(status).catch((error: unknown) => {
    const message = 'webhook item verified and saved, but its status did not reach the other instances\' subscribers'
    log.warn({ err: error, itemId: status.itemId, event: status.event }, message)
  })
}

/**
 * A webhook is a notice, not a fact (OWASP API10): whoever holds the secret could claim any
 * status. The item is read from the aggregator (`GET /items/{id}`, with the cached key) and
 * its own status and `clientUserId` are kept; an item the aggregator does not know changes
 * nothing — unless the event said it was deleted: the 404 confirms it, the item is marked
 * deleted and its subscribers hear a last status (`null`). One attempt: the caller decides
 * what a failure leads to.
 */
export async function verifyItem (
  deps: VerificationDeps, itemId: string, event: string, log: FastifyBaseLogger
): Promise<VerificationOutcome> {
  try {
    const response = await deps.aggregator.call({ method: 'GET', path: `items/${encodeURIComponent(itemId)}`, log })
    const item = jsonObject(response.body)
    if (response.status === 404 && isDeletionEvent(event)) {
      const { updatedAt } = await deps.items.markItemDeleted(itemId, event)
      log.info({ itemId, event }, 'webhook item deletion verified')
      await publish(deps, { itemId, status: null, event, updatedAt }, log)
      return { result: 'verified' }
    }
    if (response.status === 404) {
      log.warn({ itemId, event }, 'webhook about an item the aggregator does not know: no item changed')
      return { result: 'settled' }
    }
    if (TRANSIENT_STATUSES.has(response.status)) {
      const wait = retryAfterMs(retryAfterSecondsOf(response.rateLimitHeaders))
      return failed(`aggregator answered ${response.status}`, wait)
    }
    // A status outside the aggregator's documented set is not one the service can tell subscribers.
    if (response.status !== 200 || !isItemStatusValue(item?.status)) {
      log.warn({ itemId, event, status: response.status }, 'aggregator item answer unusable: no item changed')
      return { result: 'settled' }
    }
    const clientUserId = typeof item.clientUserId === 'string' ? item.clientUserId : null
    const status = item?.status
    const { updatedAt } = await deps.items.saveVerifiedItem({ itemId, status, clientUserId, lastEvent: event })
    log.info({ itemId, event, itemStatus: status }, 'webhook item verified')
    await publish(deps, { itemId, status, event, updatedAt }, log)
    return { result: 'verified' }
  } catch (error) {
    return failure(error)
  }
}
