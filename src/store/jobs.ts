import type { ExpressionBuilder, Selectable, Transaction } from 'kysely'
import type { Database, JobsTable, JobState } from './database.js'
import type { StoreEngine } from './connect.js'
import type { StoreHandle } from './handle.js'

/** A job as read: what work (its kind), about what (its key), and where it stands. Timestamps are ISO 8601 UTC. */
interface Job {
  kind: string
  key: string
  payload: Record<string, string>
  state: JobState
  attempts: number
  nextAttemptAt: string
  expiresAt: string | null
  lastError: string | null
  requestedAt: string
  leaseHolder: string | null
  leaseUntil: string | null
}

/** A job as first asked for: queued, held by no one. */
type NewJob = Pick<Job, 'kind' | 'key' | 'payload' | 'attempts' | 'nextAttemptAt' | 'expiresAt' | 'lastError' |
'requestedAt'>

/** What asking again for a job changes of it: when it was asked, and each field given. */
type JobRequest = Partial<Pick<Job, 'payload' | 'nextAttemptAt' | 'expiresAt' | 'lastError'>> & { requestedAt: string }

type Row = Selectable<JobsTable>
type Builder = ExpressionBuilder<Database, 'jobs'>

/** A payload as stored: a JSON object of strings (anything else in it is left out). */
function payloadOf (text: string): Record<string, string> {
  const parsed: unknown = JSON.parse(text)
  const payload: Record<string, string> = {}
  if (typeof parsed !== 'object' || parsed === null) return payload
  for (const [name, value] of Object.entries(parsed)) if (typeof value === 'string') payload[name] = value
  return payload
}

function jobOf (row: Row): Job {
  return {
    kind: row.kind,
    key: row.key,
    payload: payloadOf(row.payload),
    state: row.state,
    attempts: Number(row.attempts),
    nextAttemptAt: row.next_attempt_at,
    expiresAt: row.expires_at,
    lastError: row.last_error,
    requestedAt: row.requested_at,
    leaseHolder: row.lease_holder,
    leaseUntil: row.lease_until
  }
}

/**
 * Claimable at `at`, of one of `kinds`: queued and due, or running under a lease that ended (its instance died or
 * stopped renewing it); never expired.
 */
function claimable (at: string, kinds: readonly string[]) {
  return (eb: Builder) => eb.and([
    eb('kind', 'in', kinds),
    eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', at)]),
    eb.or([
      eb.and([eb('state', '=', 'queued'), eb('next_attempt_at', '<=', at)]),
      eb.and([eb('state', '=', 'running'), eb('lease_until', '<', at)])
    ])
  ])
}

/** The job `kind`/`key` while `worker` holds it. */
function heldBy (job: Pick<Job, 'kind' | 'key'>, worker: string) {
  return (eb: Builder) => eb.and([eb('kind', '=', job.kind), eb('key', '=', job.key), eb('lease_holder', '=', worker)])
}

/**
 * The queue of background work every instance shares (docs/deploy.md#background-work): one row per kind and key.
 * One instance runs a job at a time: a claim is one statement that takes the job due first for a lease (on
 * PostgreSQL `for update skip locked`, so instances claiming at once take different jobs without waiting for each
 * other; SQLite runs one statement at a time), and only the lease's holder ends its run. An instance that dies lets
 * go when its lease ends. What a job's end does (removed, retried, queued again) is the runner's to say
 * (src/domain/jobs.ts); the rows a write decides on are {@link JobRows}. Built with Kysely (docs/style.md#query-style).
 */
export class JobRepository {
  constructor (private readonly handle: StoreHandle) {}

  /**
   * Takes the job due first of `kinds` for `worker` until `until`; undefined when none is due and free. The job is
   * chosen in a materialized common table expression, evaluated once: PostgreSQL ran an `in (select … limit 1 for
   * update skip locked)` again for each row it scanned, and so claimed every due job at once.
   */
  async claimNext (kinds: readonly string[], worker: string, at: string, until: string): Promise<Job | undefined> {
    if (kinds.length === 0) return undefined
    const { db, engine } = this.handle
    const row = await db
      .with(cte => cte('due').materialized(), query => {
        const due = query.selectFrom('jobs').select(['kind', 'key']).where(claimable(at, kinds))
          .orderBy('next_attempt_at').limit(1)
        return engine === 'postgres' ? due.forUpdate().skipLocked() : due
      })
      .updateTable('jobs').from('due')
      .set({ state: 'running', lease_holder: worker, lease_until: until })
      .whereRef('jobs.kind', '=', 'due.kind').whereRef('jobs.key', '=', 'due.key')
      .returningAll().executeTakeFirst()
    return row === undefined ? undefined : jobOf(row)
  }

  /** Extends the lease `worker` holds on a running job; false when it no longer holds it. */
  async renew (job: Job, worker: string, until: string): Promise<boolean> {
    const renewed = await this.handle.db.updateTable('jobs').set({ lease_until: until })
      .where(heldBy(job, worker)).where('state', '=', 'running').executeTakeFirst()
    return Number(renewed.numUpdatedRows) > 0
  }

  /**
   * Ends `worker`'s run of `job`: the job goes, unless it was asked for again while it ran — then it is queued
   * again for that request (due when it said, its attempts from nothing). Answers whether it went.
   */
  async finish (job: Job, worker: string): Promise<boolean> {
    const { db } = this.handle
    const deleted = await db.deleteFrom('jobs').where(heldBy(job, worker))
      .where('requested_at', '=', job.requestedAt).executeTakeFirst()
    if (Number(deleted.numDeletedRows) > 0) return true
    await db.updateTable('jobs')
      .set({ state: 'queued', attempts: 0, last_error: null, lease_holder: null, lease_until: null })
      .where(heldBy(job, worker)).execute()
    return false
  }

  /**
   * Queues `worker`'s failed run of `job` for another attempt; false, changing nothing, when the job was asked for
   * again while it ran (or another instance holds it now).
   */
  async retryLater (
    job: Job, worker: string, retry: Pick<Job, 'attempts' | 'nextAttemptAt'> & { lastError: string }
  ): Promise<boolean> {
    const updated = await this.handle.db.updateTable('jobs').set({
      state: 'queued',
      attempts: retry.attempts,
      next_attempt_at: retry.nextAttemptAt,
      last_error: retry.lastError,
      lease_holder: null,
      lease_until: null
    }).where(heldBy(job, worker)).where('requested_at', '=', job.requestedAt).executeTakeFirst()
    return Number(updated.numUpdatedRows) > 0
  }

  /** Gives back a run `worker` stopped before its end (the instance closes): queued, due at `at`, attempts kept. */
  async release (job: Job, worker: string, at: string): Promise<void> {
    await this.handle.db.updateTable('jobs')
      .set({ state: 'queued', next_attempt_at: at, lease_holder: null, lease_until: null })
      .where(heldBy(job, worker)).execute()
  }

  /** The work was done outside the queue: its job goes, unless it was asked for after `requestedUpTo`. */
  async settle (kind: string, key: string, requestedUpTo: string): Promise<void> {
    await this.handle.db.deleteFrom('jobs').where('kind', '=', kind).where('key', '=', key)
      .where('requested_at', '<=', requestedUpTo).execute()
  }

  /** Removes the jobs expired at `at` and answers them (each to one caller only). */
  async dropExpired (at: string): Promise<Job[]> {
    const rows = await this.handle.db.deleteFrom('jobs').where('expires_at', '<=', at).returningAll().execute()
    return rows.map(jobOf)
  }

  async entry (kind: string, key: string): Promise<Job | undefined> {
    const row = await this.handle.db.selectFrom('jobs').selectAll().where('kind', '=', kind).where('key', '=', key)
      .executeTakeFirst()
    return row === undefined ? undefined : jobOf(row)
  }

  /** How many jobs are queued or running, of `kind` when given. */
  async count (kind?: string): Promise<number> {
    let query = this.handle.db.selectFrom('jobs').select(eb => eb.cast<number>(eb.fn.countAll(), 'integer').as('n'))
    if (kind !== undefined) query = query.where('kind', '=', kind)
    return Number((await query.executeTakeFirstOrThrow()).n)
  }

  /** The jobs' rows of the write `trx`. */
  rowsIn (trx: Transaction<Database>): JobRows {
    return new JobRows(trx, this.handle.engine)
  }
}

/** Tries before giving up on a job that is deleted each time between a conflicting insert and its read. */
const LOCK_TRIES = 5

/**
 * Jobs' rows inside a write of the domain (the `jobs` of its unit of work): the job read under its lock (PostgreSQL's
 * row lock; SQLite runs one write at a time), so that what the domain decides on it — queue it, ask for it again,
 * leave it — holds until the write commits, whichever instance asks at the same time.
 */
export class JobRows {
  constructor (private readonly trx: Transaction<Database>, private readonly engine: StoreEngine) {}

  /** The job `job.kind`/`job.key`, locked; `job` inserted first (queued) when there is none, and `inserted` says so. */
  async lockOrInsert (job: NewJob): Promise<{ job: Job, inserted: boolean }> {
    for (let tries = 0; tries < LOCK_TRIES; tries++) {
      const inserted = await this.trx.insertInto('jobs').values({
        kind: job.kind,
        key: job.key,
        payload: JSON.stringify(job.payload),
        state: 'queued',
        attempts: job.attempts,
        next_attempt_at: job.nextAttemptAt,
        expires_at: job.expiresAt,
        last_error: job.lastError,
        requested_at: job.requestedAt,
        lease_holder: null,
        lease_until: null
      }).onConflict(oc => oc.columns(['kind', 'key']).doNothing()).returningAll().executeTakeFirst()
      if (inserted !== undefined) return { job: jobOf(inserted), inserted: true }
      const query = this.trx.selectFrom('jobs').selectAll().where('kind', '=', job.kind).where('key', '=', job.key)
      const row = await (this.engine === 'postgres' ? query.forUpdate() : query).executeTakeFirst()
      if (row !== undefined) return { job: jobOf(row), inserted: false }
    }
    /* c8 ignore next -- the job would have to be deleted five times between an insert and a read */
    throw new Error(`job ${job.kind}:${job.key} neither inserted nor found`)
  }

  /** Asks for the job again: `requestedAt`, and each field `request` gives. */
  async request (kind: string, key: string, request: JobRequest): Promise<void> {
    const { payload, nextAttemptAt, expiresAt, lastError, requestedAt } = request
    await this.trx.updateTable('jobs').set({
      requested_at: requestedAt,
      ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
      ...(nextAttemptAt === undefined ? {} : { next_attempt_at: nextAttemptAt }),
      ...(expiresAt === undefined ? {} : { expires_at: expiresAt }),
      ...(lastError === undefined ? {} : { last_error: lastError })
    }).where('kind', '=', kind).where('key', '=', key).execute()
  }
}
