import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import type { ItemVerificationRepository, QueuedVerification } from '../../store/item-verifications.js'
import { verifyItem, type VerificationDeps } from './verify-item.js'

export interface VerificationRetryOptions {
  /** How often an instance looks for due verifications (ms). */
  pollMs: number
  /** The first retry's delay (ms); it doubles with each failure, up to {@link MAX_RETRY_DELAY_MS}. */
  retryMs: number
  /** How long after the latest event about it failed an item is retried before it is dropped (ms). */
  expiryMs: number
  /** How long a claim holds an entry: longer than one verification can take (ms). */
  leaseMs: number
}

const DEFAULT_VERIFICATION_RETRY: VerificationRetryOptions = {
  pollMs: 5000, retryMs: 5000, expiryMs: 24 * 60 * 60 * 1000, leaseMs: 60_000 + 4 * 10_000
}
/**
 * The longest wait between two attempts (unless `retryMs` is longer, or the aggregator asks for more).
 * @internal Test seam: a test checks the backoff is capped at it.
 */
export const MAX_RETRY_DELAY_MS = 10 * 60 * 1000
/** Entries one look at the queue works at most, so one instance does not hold on to a long queue. */
const ENTRIES_PER_SWEEP = 100

const isoAt = (ms: number): string => new Date(ms).toISOString()

export type QueueDeps = VerificationDeps & { queue: ItemVerificationRepository, log: FastifyBaseLogger }

/**
 * Webhook item verifications: each is tried at once after the event is stored, and one that
 * fails is queued in the store and retried with backoff until it succeeds, gets a definitive
 * answer or expires. The queue is shared: whichever instance claims an entry first works it.
 */
export class ItemVerifications {
  /** Names this instance's claims. */
  readonly worker = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`
  private readonly options: VerificationRetryOptions
  /** Verifications after a webhook still running: closing waits for them. */
  private readonly inFlight = new Set<Promise<void>>()
  private timer: NodeJS.Timeout | undefined
  private sweeping: Promise<void> | undefined
  private started = false
  private stopped = false

  constructor (
    private readonly deps: QueueDeps,
    options: Partial<VerificationRetryOptions> = {},
    private readonly random: () => number = Math.random
  ) {
    this.options = { ...DEFAULT_VERIFICATION_RETRY, ...options }
  }

  /** After a stored event naming an item: verified in the background, queued if that fails. */
  afterWebhook (itemId: string, event: string, log: FastifyBaseLogger): void {
    const verification = this.verifyNow(itemId, event, log)
    this.inFlight.add(verification)
    verification.finally(() => this.inFlight.delete(verification))
  }

  private async verifyNow (itemId: string, event: string, log: FastifyBaseLogger): Promise<void> {
    if (!this.deps.aggregator.configured) {
      log.warn({ itemId }, 'webhook item not verified: the aggregator has no credentials')
      return
    }
    const began = Date.now()
    const outcome = await verifyItem(this.deps, itemId, event, log)
    try {
      if (outcome.result !== 'failed') {
        // An entry of an earlier event is settled too: the item was just read.
        await this.deps.queue.settle(itemId, isoAt(began))
        return
      }
      const nextAttemptAt = this.nextAttemptAt(1, outcome.retryAfterMs)
      const expiresAt = isoAt(began + this.options.expiryMs)
      const { reason } = outcome
      const queuedAt = isoAt(began)
      await this.deps.queue.enqueue({ itemId, event, queuedAt, nextAttemptAt, expiresAt, lastError: reason })
      log.warn({ itemId, event, reason, nextAttemptAt, expiresAt }, 'webhook item verification failed: retried later')
    } catch (error) {
      log.error({ err: error, itemId, event }, 'webhook item verification failed and could not be queued for a retry')
    }
  }

  /** Backoff: `retryMs` doubled per failure, capped, with jitter (half to all of it), never sooner than asked. */
  nextAttemptAt (failures: number, retryAfterMs = 0): string {
    const cap = Math.max(MAX_RETRY_DELAY_MS, this.options.retryMs)
    const delay = Math.min(cap, this.options.retryMs * 2 ** Math.min(failures - 1, 52))
    const jittered = delay / 2 + this.random() * delay / 2
    return isoAt(Date.now() + Math.max(jittered, retryAfterMs))
  }

  /** Starts looking at the queue every `pollMs`; the timer never keeps the process alive. */
  start (): void {
    if (this.started || this.stopped || !this.deps.aggregator.configured) return
    this.started = true
    this.schedule()
  }

  private schedule (): void {
    if (this.stopped) return
    this.timer = setTimeout(() => {
      this.sweeping = this.sweep().finally(() => {
        this.sweeping = undefined
        this.schedule()
      })
    }, this.options.pollMs)
    this.timer.unref()
  }

  /** Stops the worker and waits for every verification in flight, queued or not. */
  async close (): Promise<void> {
    this.stopped = true
    clearTimeout(this.timer)
    await Promise.allSettled([this.sweeping, ...this.inFlight])
  }

  /** One look at the queue: drops what expired, then works due entries one at a time. */
  async sweep (): Promise<void> {
    const { queue, log } = this.deps
    try {
      for (const { itemId, event, attempts, lastError, expiresAt } of await queue.dropExpired(isoAt(Date.now()))) {
        log.warn({ itemId, event, attempts, lastError, expiresAt }, 'webhook item verification expired: dropped')
      }
      for (let worked = 0; worked < ENTRIES_PER_SWEEP && !this.stopped; worked++) {
        const now = Date.now()
        const claimed = await queue.claimNext(this.worker, isoAt(now), isoAt(now + this.options.leaseMs))
        if (claimed === undefined) return
        // The aggregator's budget is spent: the other entries wait for a later look.
        if (await this.retry(claimed) === 'rate-limited') return
      }
    } catch (error) {
      log.error({ err: error }, 'webhook verification queue: the store could not be read or written')
    }
  }

  private async retry (claimed: QueuedVerification): Promise<'done' | 'failed' | 'rate-limited'> {
    const { queue } = this.deps
    const { itemId, event } = claimed
    const log = this.deps.log.child({ verificationAttempt: claimed.attempts + 1 })
    const outcome = await verifyItem(this.deps, itemId, event, log)
    if (outcome.result !== 'failed') {
      await queue.complete(claimed, this.worker)
      return 'done'
    }
    const failures = claimed.attempts + 1
    const nextAttemptAt = this.nextAttemptAt(failures, outcome.retryAfterMs)
    await queue.reschedule(claimed, this.worker, nextAttemptAt, outcome.reason)
    log.warn({ itemId, event, reason: outcome.reason, attempts: failures, nextAttemptAt },
      'webhook item verification failed again: retried later')
    return outcome.retryAfterMs === undefined ? 'failed' : 'rate-limited'
  }
}

/** Verifications over the app's aggregator, store and item feed: at work once the app is ready, until it closes. */
export function itemVerifications (
  app: FastifyInstance, options: Partial<VerificationRetryOptions> = {}
): ItemVerifications {
  const verifications = new ItemVerifications({
    aggregator: app.aggregator,
    items: app.store.aggregatorEvents,
    queue: app.store.itemVerifications,
    changeFeed: app.changeFeed,
    log: app.log
  }, options)
  app.addHook('onReady', async () => { verifications.start() })
  app.addHook('onClose', async () => { await verifications.close() })
  return verifications
}
