import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'
import type { Job, JobStore } from './background-ports.js'
import type { Log } from './ports.js'

/*
 * The one mechanism for work done in the background (docs/deploy.md#background-work): jobs queued in the store,
 * which outlive restarts, each run by one instance at a time under a lease that instance renews while it runs; a
 * failed run retried with backoff; every instance looking at the queue, and stopping when it closes. A job's kind
 * says who runs it (a JobKind): the webhook item verifications (src/domain/item-verifications.ts) and the
 * investment imports (src/domain/imports.ts).
 */

/** How a run ended. */
export type JobOutcome =
  /** Its work is done (or there was none left): the job goes. */
  | { result: 'done' }
  /**
   * Worth another attempt, not before `retryAfterMs` when the aggregator (or its budget) said so. `counted: false`:
   * not a failure of the work (a budget spent), so it does not count against the kind's attempts.
   */
  | { result: 'failed', reason: string, retryAfterMs?: number, counted?: boolean }
  /** No attempt would do better (an item that is gone, or not the portfolio owner's): the job goes. */
  | { result: 'abandoned', reason: string }

/** Who runs the jobs of one kind, and how their failures are retried. */
export interface JobKind {
  /** The first retry's delay (ms); it doubles with each failure, up to {@link MAX_RETRY_DELAY_MS}. */
  readonly retryMs: number
  /** Failed attempts after which a job is given up; without it, a job is retried until it expires. */
  readonly attempts?: number
  /** One attempt; `signal` aborts once the instance closes or another took the job: it stops where it can. */
  run: (job: Job, signal: AbortSignal, log: Log) => Promise<JobOutcome>
  /** After a run that did not end the work: `next` is when it is tried again, undefined when it will not be. */
  failed: (job: Job, reason: string, next: string | undefined, log: Log) => Promise<void>
  /** Says that a job of the kind expired before its work was done (it was dropped). */
  expired?: (job: Job, log: Log) => void
}

export interface JobRunnerOptions {
  /** How often an instance looks for due jobs (ms). */
  pollMs: number
  /** How long a claim holds a job (ms); renewed every third of it while the job runs. */
  leaseMs: number
}

export const JOB_RUNNER_DEFAULTS: JobRunnerOptions = { pollMs: 5000, leaseMs: 60_000 }

/**
 * The longest wait between two attempts (unless a kind's first delay is longer, or the aggregator asks for more).
 * @internal Test seam: a test checks the backoff is capped at it.
 */
export const MAX_RETRY_DELAY_MS = 10 * 60 * 1000

/**
 * Jobs one instance runs at once. Each spends the aggregator's budget, which every instance shares; a few at once
 * keep one long import from holding up every verification behind it, and SQLite writes one at a time anyway.
 */
const JOBS_AT_ONCE = 4

const isoAt = (ms: number): string => new Date(ms).toISOString()

/** The wait before attempt `failures + 1`: `retryMs` doubled per failure, capped, with jitter (half to all of it). */
export function backoffMs (retryMs: number, failures: number, random: () => number = Math.random): number {
  const cap = Math.max(MAX_RETRY_DELAY_MS, retryMs)
  const delay = Math.min(cap, retryMs * 2 ** Math.min(failures - 1, 52))
  return delay / 2 + random() * delay / 2
}

/** A run under way: what stops it, and its end. */
interface Running {
  stop: AbortController
  done: Promise<void>
}

/**
 * Runs the queue's jobs on this instance: a look at the queue every `pollMs` (and at once when asked: {@link wake}),
 * claiming due jobs of the kinds it knows while fewer than {@link JOBS_AT_ONCE} run. A run's lease is renewed while
 * it runs; a run that loses it (another instance took the job after a stall) is aborted. Closing aborts the runs:
 * each is given back to the queue, due at once, for the next instance.
 */
export class JobRunner {
  /** Names this instance's claims. */
  readonly worker = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`
  private readonly running = new Map<string, Running>()
  /** Work begun outside the queue (a verification right after its webhook): closing waits for it too. */
  private readonly background = new Set<Promise<unknown>>()
  private timer: NodeJS.Timeout | undefined
  private looking: Promise<void> | undefined
  private lookAgain = false
  /** No claim before this (ms): the aggregator asked to wait. */
  private pausedUntil = 0
  private started = false
  private stopped = false

  constructor (
    private readonly store: JobStore,
    private readonly kinds: ReadonlyMap<string, JobKind>,
    private readonly log: Log,
    private readonly options: JobRunnerOptions = JOB_RUNNER_DEFAULTS,
    private readonly random: () => number = Math.random
  ) {}

  /** When a failed run of `kind` is tried again, after `failures` failures, never sooner than `retryAfterMs`. */
  nextAttemptAt (kind: JobKind, failures: number, retryAfterMs = 0): string {
    return isoAt(Date.now() + Math.max(backoffMs(kind.retryMs, failures, this.random), retryAfterMs))
  }

  /** Starts looking at the queue; the timers never keep the process alive. */
  start (): void {
    if (this.started || this.stopped) return
    this.started = true
    this.schedule()
  }

  /** A job is due now: look at once rather than at the next poll (a look under way looks again after). */
  wake (): void {
    if (!this.started || this.stopped) return
    if (this.looking !== undefined) {
      this.lookAgain = true
      return
    }
    setImmediate(() => { this.look() })
  }

  /** Keeps `work`, begun outside the queue, until it settles: closing waits for it. */
  track (work: Promise<unknown>): void {
    this.background.add(work)
    work.finally(() => this.background.delete(work)).catch(() => {})
  }

  /** Stops looking, aborts the runs (each given back to the queue) and waits for them and the work tracked. */
  async close (): Promise<void> {
    this.stopped = true
    clearTimeout(this.timer)
    for (const { stop } of this.running.values()) stop.abort()
    while (this.looking !== undefined || this.running.size > 0 || this.background.size > 0) {
      await Promise.allSettled([this.looking, ...this.background, ...[...this.running.values()].map(run => run.done)])
    }
  }

  private schedule (): void {
    if (this.stopped) return
    this.timer = setTimeout(() => {
      this.look()
      this.schedule()
    }, this.options.pollMs)
    this.timer.unref()
  }

  /** One look: drops the expired jobs, then claims due ones while there is room; never two looks at once. */
  private look (): void {
    if (this.looking !== undefined) {
      this.lookAgain = true
      return
    }
    this.looking = this.claim().finally(() => {
      this.looking = undefined
      if (this.lookAgain) {
        this.lookAgain = false
        this.look()
      }
    })
  }

  private async claim (): Promise<void> {
    try {
      const now = Date.now()
      for (const job of await this.store.dropExpired(isoAt(now))) {
        const { kind, key, attempts, lastError, expiresAt } = job
        const expired = this.kinds.get(kind)?.expired
        if (expired !== undefined) expired(job, this.log)
        else this.log.warn({ job: kind, key, attempts, lastError, expiresAt }, 'job expired: dropped')
      }
      const kinds = [...this.kinds.keys()]
      while (!this.stopped && this.running.size < JOBS_AT_ONCE && Date.now() >= this.pausedUntil) {
        const at = Date.now()
        const job = await this.store.claimNext(kinds, this.worker, isoAt(at), isoAt(at + this.options.leaseMs))
        if (job === undefined) return
        this.begin(job)
      }
    } catch (error) {
      this.log.error({ err: error }, 'job queue: the store could not be read or written')
    }
  }

  /** Runs a claimed job in the background, its lease renewed until it ends. */
  private begin (job: Job): void {
    const id = `${job.kind}:${job.key}`
    // Its lease lapsed while it still runs here (the renewals did not reach the store): the claim renewed it.
    if (this.running.has(id)) return
    const stop = new AbortController()
    const renewal = setInterval(() => {
      const until = isoAt(Date.now() + this.options.leaseMs)
      this.store.renew(job, this.worker, until).then(held => {
        if (!held) stop.abort()
      }, (error: unknown) => { this.log.warn({ err: error, job: job.kind, key: job.key }, 'job lease not renewed') })
    }, this.options.leaseMs / 3)
    renewal.unref()
    const done = this.runOnce(job, stop.signal).finally(() => {
      clearInterval(renewal)
      this.running.delete(id)
      // A slot is free: another due job may take it now.
      if (!this.stopped) this.look()
    })
    this.running.set(id, { stop, done })
  }

  private async runOnce (job: Job, signal: AbortSignal): Promise<void> {
    const kind = this.kinds.get(job.kind) as JobKind
    const log = this.log.child({ job: job.kind, key: job.key })
    try {
      const outcome = await kind.run(job, signal, log).catch((error: unknown): JobOutcome =>
        ({ result: 'failed', reason: reasonOf(error) }))
      // Done even though stopped (its last step ended after the instance began closing): it goes all the same.
      if (outcome.result === 'done') {
        await this.store.finish(job, this.worker)
        return
      }
      if (signal.aborted) {
        // Closing (given back, due at once), or another instance holds it now (nothing to give back).
        await this.store.release(job, this.worker, isoAt(Date.now()))
        return
      }
      await this.ended(kind, job, outcome, log)
    } catch (error) {
      log.error({ err: error }, 'job queue: the end of a run could not be written (its lease lets another take it)')
    }
  }

  /** A run that did not do the work: tried again with backoff, or given up. */
  private async ended (
    kind: JobKind, job: Job, outcome: Exclude<JobOutcome, { result: 'done' }>, log: Log
  ): Promise<void> {
    const counted = outcome.result === 'abandoned' || outcome.counted !== false
    const attempts = job.attempts + (counted ? 1 : 0)
    const retryAfterMs = outcome.result === 'failed' ? outcome.retryAfterMs : undefined
    // The aggregator asked this instance to wait: no claim before then.
    if (retryAfterMs !== undefined) this.pausedUntil = Math.max(this.pausedUntil, Date.now() + retryAfterMs)
    const spent = kind.attempts !== undefined && attempts >= kind.attempts
    if (outcome.result === 'failed' && !spent) {
      const nextAttemptAt = this.nextAttemptAt(kind, Math.max(attempts, 1), retryAfterMs)
      const retry = { attempts, nextAttemptAt, lastError: outcome.reason }
      if (await this.store.retryLater(job, this.worker, retry)) {
        await kind.failed(job, outcome.reason, nextAttemptAt, log)
        return
      }
    }
    // Given up, abandoned, or asked for again while it ran (that request is queued in its place).
    await this.store.finish(job, this.worker)
    await kind.failed(job, outcome.reason, undefined, log)
  }
}

/** What an error says, for an operator: its code and message (the coded errors'), else its text; 200 characters. */
export function reasonOf (error: unknown): string {
  const { code, message } = (error ?? {}) as { code?: unknown, message?: unknown }
  const reason = [code, message].filter(part => typeof part === 'string').join(': ') || String(error)
  return reason.slice(0, 200)
}
