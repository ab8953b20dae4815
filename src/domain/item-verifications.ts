import { isDeletionEvent, isItemStatusValue, type ItemStatus } from '../schemas/item-status.js'
import type { ChangeFeed } from '../change-feed/change-feed-core.js'
import type { AggregatorApi } from '../upstream/aggregator.js'
import { jsonObject, retryAfterSecondsOf } from '../upstream/client.js'
import { backoffMs, reasonOf, type JobKind, type JobOutcome, type JobRunner } from './jobs.js'
import type { Job } from './background-ports.js'
import type { DataStore, Log } from './ports.js'

/** The queue's kind of a webhook item verification to retry, keyed by its item. */
export const VERIFY_ITEM = 'verify-item'

export interface VerificationOptions {
  /** The first retry's delay (ms); it doubles with each failure, up to MAX_RETRY_DELAY_MS (src/domain/jobs.ts). */
  retryMs: number
  /** How long after the latest event about it failed an item is retried before it is dropped (ms). */
  expiryMs: number
}

export const VERIFICATION_DEFAULTS: VerificationOptions = { retryMs: 5000, expiryMs: 24 * 60 * 60 * 1000 }

/** What a verification needs: the aggregator, where items are kept and queued, who hears of them, and the runner. */
export interface VerificationDeps {
  aggregator: Pick<AggregatorApi, 'call' | 'configured'>
  store: Pick<DataStore, 'aggregatorEvents' | 'jobs' | 'write'>
  changeFeed: Pick<ChangeFeed, 'publishItemStatus'>
  /** The runner the failed verifications are queued for, which closing waits for. */
  runner: () => JobRunner
  /** Told of each `item/updated` verified: its item's investments are imported again (src/domain/imports.ts). */
  afterUpdate: (itemId: string, log: Log) => Promise<void>
}

type VerificationOutcome =
  /** The item was read, saved and published. */
  | { result: 'verified' }
  /** The aggregator answered for good (an item it does not know, an unusable answer): no item changed. */
  | { result: 'settled' }
  /** Worth another try (the aggregator down, slow or busy, the budget spent, the store unreachable). */
  | { result: 'failed', reason: string, retryAfterMs?: number }

/** Answers the aggregator gives when it will answer differently later. */
const TRANSIENT_STATUSES = new Set([408, 425, 429])

/** The events that say an item's data was updated: Pluggy's `item/updated`, and the dotted `item.updated`. */
const UPDATE_EVENTS = new Set(['item/updated', 'item.updated'])

/** A wait in seconds, as milliseconds; `undefined` when there is none. */
function retryAfterMs (seconds: unknown): number | undefined {
  return typeof seconds === 'number' && Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined
}

function failed (reason: string, wait: number | undefined): VerificationOutcome {
  const outcome: VerificationOutcome = { result: 'failed', reason: reason.slice(0, 200) }
  return wait === undefined ? outcome : { ...outcome, retryAfterMs: wait }
}

/** Subscribers at every instance hear of it (GraphQL `aggregatorItem`); the item is saved either way. */
async function publish (deps: VerificationDeps, status: ItemStatus, log: Log): Promise<void> {
  await deps.changeFeed.publishItemStatus(status).catch((error: unknown) => {
    const message = 'webhook item verified and saved, but its status did not reach the other instances\' subscribers'
    log.warn({ err: error, itemId: status.itemId, event: status.event }, message)
  })
}

/**
 * A webhook is a notice, not a fact (OWASP API10): whoever holds the secret could claim any status. The item is
 * read from the aggregator (`GET /items/{id}`, with the cached key) and its own status and `clientUserId` are kept;
 * an item the aggregator does not know changes nothing — unless the event said it was deleted: the 404 confirms it,
 * the item is marked deleted and its subscribers hear a last status (`null`). One attempt: the caller decides what
 * a failure leads to.
 */
async function verifyItem (
  deps: VerificationDeps, itemId: string, event: string, log: Log
): Promise<VerificationOutcome> {
  try {
    const response = await deps.aggregator.call({ method: 'GET', path: `items/${encodeURIComponent(itemId)}`, log })
    const item = jsonObject(response.body)
    if (response.status === 404 && isDeletionEvent(event)) {
      const { updatedAt } = await deps.store.aggregatorEvents.markItemDeleted(itemId, event)
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
    const saved = await deps.store.aggregatorEvents.saveVerifiedItem({ itemId, status, clientUserId, lastEvent: event })
    log.info({ itemId, event, itemStatus: status }, 'webhook item verified')
    await publish(deps, { itemId, status, event, updatedAt: saved.updatedAt }, log)
    // Its investments are imported again when an import linked it to a portfolio; queued failing, it is tried again.
    if (UPDATE_EVENTS.has(event)) await deps.afterUpdate(itemId, log)
    return { result: 'verified' }
  } catch (error) {
    const { retryAfterSeconds } = (error ?? {}) as { retryAfterSeconds?: unknown }
    return failed(reasonOf(error), retryAfterMs(retryAfterSeconds))
  }
}

const isoAt = (ms: number): string => new Date(ms).toISOString()

/**
 * Webhook item verifications (docs/aggregator.md): each is tried at once after its event is stored, and one that
 * fails is queued (src/domain/jobs.ts, kind `verify-item`, one job per item) and retried with backoff until it
 * succeeds, gets a definitive answer or expires. Whichever instance claims the job first works it.
 */
export class ItemVerificationService {
  /** How the queue runs a verification again. */
  readonly kind: JobKind

  constructor (private readonly deps: VerificationDeps, private readonly options = VERIFICATION_DEFAULTS) {
    this.kind = {
      retryMs: options.retryMs,
      run: async (job, _signal, log) => await this.retry(job, log),
      failed: async (job, reason, next, log) => {
        const attempts = job.attempts + 1
        const { event } = job.payload
        if (next === undefined) {
          log.info({ itemId: job.key, event, reason, attempts }, 'webhook item verification failed; a newer follows')
          return
        }
        log.warn({ itemId: job.key, event, reason, attempts, nextAttemptAt: next },
          'webhook item verification failed again: retried later')
      },
      expired: (job, log) => {
        const { key: itemId, attempts, lastError, expiresAt } = job
        log.warn({ itemId, event: job.payload.event, attempts, lastError, expiresAt },
          'webhook item verification expired: dropped')
      }
    }
  }

  /** After a stored event naming an item: verified in the background, queued if that fails. */
  afterWebhook (itemId: string, event: string, log: Log): void {
    if (!this.deps.aggregator.configured) {
      log.warn({ itemId }, 'webhook item not verified: the aggregator has no credentials')
      return
    }
    this.deps.runner().track(this.verifyNow(itemId, event, log))
  }

  private async verifyNow (itemId: string, event: string, log: Log): Promise<void> {
    const began = Date.now()
    const outcome = await verifyItem(this.deps, itemId, event, log)
    const { jobs } = this.deps.store
    try {
      if (outcome.result !== 'failed') {
        // A job of an earlier event is settled too: the item was just read.
        await jobs.settle(VERIFY_ITEM, itemId, isoAt(began))
        return
      }
      const { reason } = outcome
      const wait = Math.max(backoffMs(this.options.retryMs, 1), outcome.retryAfterMs ?? 0)
      const nextAttemptAt = isoAt(Date.now() + wait)
      const expiresAt = isoAt(began + this.options.expiryMs)
      const requestedAt = isoAt(began)
      // One job per item: an item already queued keeps its attempts and schedule, and takes this event, its expiry
      // and its error.
      await this.deps.store.write(async work => {
        const payload = { event }
        const { inserted } = await work.jobs.lockOrInsert({
          kind: VERIFY_ITEM, key: itemId, payload, attempts: 1, nextAttemptAt, expiresAt, lastError: reason, requestedAt
        })
        const again = { requestedAt, payload, expiresAt, lastError: reason }
        if (!inserted) await work.jobs.request(VERIFY_ITEM, itemId, again)
      })
      log.warn({ itemId, event, reason, nextAttemptAt, expiresAt }, 'webhook item verification failed: retried later')
    } catch (error) {
      log.error({ err: error, itemId, event }, 'webhook item verification failed and could not be queued for a retry')
    }
  }

  private async retry (job: Job, log: Log): Promise<JobOutcome> {
    const event = job.payload.event ?? 'item/updated'
    const outcome = await verifyItem(this.deps, job.key, event, log.child({ verificationAttempt: job.attempts + 1 }))
    return outcome.result === 'failed' ? outcome : { result: 'done' }
  }
}
