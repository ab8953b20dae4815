import type { Page } from '../schemas/common.js'
import type { InvestmentImport, SkippedInvestment } from '../schemas/import.js'

/*
 * The ports of the background work (docs/deploy.md#background-work): the queue of jobs, the imports and the items
 * the verifications keep — beside src/domain/ports.ts, which the store's other ports are in and which uses these.
 */

/** A job of the queue of background work (docs/deploy.md#background-work): what work, about what, where it stands. */
export interface Job {
  /** What the work is, which decides who does it (src/domain/jobs.ts). */
  kind: string
  /** What it is about: one job per kind and key. */
  key: string
  payload: Record<string, string>
  state: 'queued' | 'running'
  /** Failed attempts so far. */
  attempts: number
  nextAttemptAt: string
  /** When it is dropped if still not done; null: never. */
  expiresAt: string | null
  lastError: string | null
  /** When it was last asked for: asked again while it runs, it is queued again when the run ends. */
  requestedAt: string
  leaseHolder: string | null
  leaseUntil: string | null
}

/** The queue as the runner works it (src/domain/jobs.ts): claims under a lease, and each run's end. */
export interface JobStore {
  /** Takes the job due first of `kinds` for `worker` until `until`; undefined when none is due and free. */
  claimNext: (kinds: readonly string[], worker: string, at: string, until: string) => Promise<Job | undefined>
  /** Extends `worker`'s lease; false when it no longer holds the job. */
  renew: (job: Job, worker: string, until: string) => Promise<boolean>
  /** Ends a run: the job goes, unless asked for again meanwhile (then queued for that, attempts from 0); true: gone. */
  finish: (job: Job, worker: string) => Promise<boolean>
  /** Queues a failed run for another attempt; false, changing nothing, when it was asked for again meanwhile. */
  retryLater: (job: Job, worker: string, retry: Pick<Job, 'attempts' | 'nextAttemptAt'> & { lastError: string }) =>
  Promise<boolean>
  /** Gives back a run stopped before its end: queued, due at `at`, its attempts as they were. */
  release: (job: Job, worker: string, at: string) => Promise<void>
  /** The work was done outside the queue: its job goes, unless asked for after `requestedUpTo`. */
  settle: (kind: string, key: string, requestedUpTo: string) => Promise<void>
  /** Removes the jobs expired at `at`, and answers them. */
  dropExpired: (at: string) => Promise<Job[]>
}

/** An import not ended yet, with the investments it wrote: an attempt after a failure goes on after them. */
export interface PendingImport {
  record: InvestmentImport
  written: string[]
}

/** Investment imports (docs/api.md#imports): their reads, and their runs' changes of status. */
export interface ImportStore {
  get: (id: string) => Promise<InvestmentImport | undefined>
  /** A page of a portfolio's imports, the latest first. */
  ofPortfolio: (portfolioId: string, page: Page) => Promise<InvestmentImport[]>
  /** The item's first import not ended: queued, or running (an attempt stopped before its end). */
  pendingOf: (itemId: string) => Promise<PendingImport | undefined>
  /** The item's queued import: the next to run, or one waiting to be tried again. */
  queuedOf: (itemId: string) => Promise<InvestmentImport | undefined>
  /** The portfolio the item's latest import went into. */
  linkedPortfolio: (itemId: string) => Promise<string | undefined>
  /** An attempt begins: running, since `at` unless it began before, the last error cleared. */
  start: (id: string, at: string) => Promise<void>
  counted: (id: string, investments: number) => Promise<void>
  /** Queued again after a failed attempt, with its error. */
  retrying: (id: string, error: string) => Promise<void>
  finish: (id: string, status: 'done' | 'failed', at: string, error: string | null) =>
  Promise<InvestmentImport | undefined>
}

/** What an item's verification keeps of it (docs/aggregator.md): only what the aggregator itself reported. */
export interface ItemStore {
  saveVerifiedItem: (item: { itemId: string, status: string, clientUserId: string | null, lastEvent: string }) =>
  Promise<{ updatedAt: string }>
  markItemDeleted: (itemId: string, lastEvent: string) => Promise<{ updatedAt: string }>
}

/** A job as first asked for. */
type NewJob = Pick<Job, 'kind' | 'key' | 'payload' | 'attempts' | 'nextAttemptAt' | 'expiresAt' | 'lastError' |
'requestedAt'>

/** Jobs inside a write: the domain decides, on the job's row read under its lock, what asking for it does. */
export interface JobRows {
  /** The job, locked; `job` inserted first (queued) when there is none, and `inserted` says so. */
  lockOrInsert: (job: NewJob) => Promise<{ job: Job, inserted: boolean }>
  /** Asks for it again: `requestedAt`, and each field given. */
  request: (kind: string, key: string,
    request: Partial<Pick<Job, 'payload' | 'nextAttemptAt' | 'expiresAt' | 'lastError'>> & { requestedAt: string }
  ) => Promise<void>
}

/** What one investment's write adds to its import. */
interface InvestmentWritten {
  investmentId: string
  assetsCreated: number
  assetsUpdated: number
  transactionsRecorded: number
  skipped: readonly SkippedInvestment[]
}

/** Imports inside a write: asked for, replaced, and what each investment's write adds to its import. */
export interface ImportRows {
  /** A new import, queued. */
  insert: (portfolioId: string, itemId: string) => Promise<InvestmentImport>
  queuedOf: (itemId: string) => Promise<InvestmentImport | undefined>
  /** Ends a queued import another replaces: failed, with why. */
  fail: (id: string, error: string) => Promise<void>
  wrote: (id: string, written: InvestmentWritten) => Promise<void>
}
