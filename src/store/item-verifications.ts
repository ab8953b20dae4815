import type { ExpressionBuilder, Selectable } from 'kysely'
import type { AggregatorItemVerificationsTable, Database } from './database.js'
import type { StoreHandle } from './handle.js'

/** A failed webhook item verification waiting for its next attempt. Timestamps are ISO 8601 UTC. */
export interface QueuedVerification {
  itemId: string
  event: string
  queuedAt: string
  /** Failed attempts so far. */
  attempts: number
  nextAttemptAt: string
  expiresAt: string
  lastError: string | null
  /** The instance holding the entry, until `claimedUntil`. */
  claimedBy: string | null
  claimedUntil: string | null
}

export interface FailedVerification {
  itemId: string
  event: string
  /** When the failed verification began: one that began later settles the entry. */
  queuedAt: string
  nextAttemptAt: string
  expiresAt: string
  lastError: string
}

type Row = Selectable<AggregatorItemVerificationsTable>
type Builder = ExpressionBuilder<Database, 'aggregator_item_verifications'>

function entry (row: Row): QueuedVerification {
  return {
    itemId: row.item_id,
    event: row.event,
    queuedAt: row.queued_at,
    attempts: Number(row.attempts),
    nextAttemptAt: row.next_attempt_at,
    expiresAt: row.expires_at,
    lastError: row.last_error,
    claimedBy: row.claimed_by,
    claimedUntil: row.claimed_until
  }
}

/** Due at `at`, not expired, and held by no lease that is still running. */
function claimable (at: string) {
  return (eb: Builder) => eb.and([
    eb('next_attempt_at', '<=', at),
    eb('expires_at', '>', at),
    eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', at)])
  ])
}

/** Losing the race for a candidate to another instance this many times in a row ends a claim. */
const CLAIM_TRIES = 5

/**
 * The queue of webhook item verifications to retry, shared by every instance through the store:
 * one entry per item, and one instance works an entry at a time, holding it under a lease that
 * one atomic UPDATE takes only where no other lease still runs (so no lock lives in memory, and
 * an instance that dies mid-verification lets go when its lease ends).
 */
export class ItemVerificationRepository {
  constructor (private readonly handle: StoreHandle) {}

  /**
   * Queues a failed verification. An item already queued keeps its one entry, its attempts and
   * its schedule; it takes the newer event, its expiry and its error.
   */
  async enqueue (failed: FailedVerification): Promise<void> {
    await this.handle.db.insertInto('aggregator_item_verifications').values({
      item_id: failed.itemId,
      event: failed.event,
      queued_at: failed.queuedAt,
      attempts: 1,
      next_attempt_at: failed.nextAttemptAt,
      expires_at: failed.expiresAt,
      last_error: failed.lastError,
      claimed_by: null,
      claimed_until: null
    }).onConflict(oc => oc.column('item_id').doUpdateSet(eb => ({
      event: eb.ref('excluded.event'),
      queued_at: eb.ref('excluded.queued_at'),
      expires_at: eb.ref('excluded.expires_at'),
      last_error: eb.ref('excluded.last_error')
    }))).execute()
  }

  /** Takes the entry due first for `worker` until `until`; undefined when none is due and free. */
  async claimNext (worker: string, at: string, until: string): Promise<QueuedVerification | undefined> {
    const { db } = this.handle
    for (let tries = 0; tries < CLAIM_TRIES; tries++) {
      const candidate = await db.selectFrom('aggregator_item_verifications').select('item_id')
        .where(claimable(at)).orderBy('next_attempt_at').limit(1).executeTakeFirst()
      if (candidate === undefined) return undefined
      // The conditions again, in the one statement that takes it: only one instance can win.
      const claimed = await db.updateTable('aggregator_item_verifications')
        .set({ claimed_by: worker, claimed_until: until })
        .where('item_id', '=', candidate.item_id).where(claimable(at))
        .returningAll().executeTakeFirst()
      if (claimed !== undefined) return entry(claimed)
    }
    return undefined
  }

  /**
   * Removes an entry `worker` verified (or got a definitive answer for). If a newer event was
   * queued meanwhile the entry stays, released and due, to be verified for that event; answers
   * whether it was removed.
   */
  async complete (claimed: QueuedVerification, worker: string): Promise<boolean> {
    const deleted = await this.handle.db.deleteFrom('aggregator_item_verifications')
      .where('item_id', '=', claimed.itemId).where('claimed_by', '=', worker)
      .where('queued_at', '=', claimed.queuedAt).executeTakeFirst()
    if (Number(deleted.numDeletedRows) > 0) return true
    await this.handle.db.updateTable('aggregator_item_verifications').set({ claimed_by: null, claimed_until: null })
      .where('item_id', '=', claimed.itemId).where('claimed_by', '=', worker).execute()
    return false
  }

  /** Releases an entry `worker` failed to verify again, with one more attempt counted. */
  async reschedule (
    claimed: QueuedVerification, worker: string, nextAttemptAt: string, lastError: string
  ): Promise<void> {
    await this.handle.db.updateTable('aggregator_item_verifications')
      .set(eb => ({
        attempts: eb('attempts', '+', 1),
        next_attempt_at: nextAttemptAt,
        last_error: lastError,
        claimed_by: null,
        claimed_until: null
      }))
      .where('item_id', '=', claimed.itemId).where('claimed_by', '=', worker).execute()
  }

  /** The item was verified outside the queue: its entry goes, unless an event came after `verifiedFrom`. */
  async settle (itemId: string, verifiedFrom: string): Promise<void> {
    await this.handle.db.deleteFrom('aggregator_item_verifications')
      .where('item_id', '=', itemId).where('queued_at', '<=', verifiedFrom).execute()
  }

  /** Removes the entries expired at `at` and answers them (each to one caller only). */
  async dropExpired (at: string): Promise<QueuedVerification[]> {
    const rows = await this.handle.db.deleteFrom('aggregator_item_verifications')
      .where('expires_at', '<=', at).returningAll().execute()
    return rows.map(entry)
  }

  async entry (itemId: string): Promise<QueuedVerification | undefined> {
    const row = await this.handle.db.selectFrom('aggregator_item_verifications').selectAll()
      .where('item_id', '=', itemId).executeTakeFirst()
    return row === undefined ? undefined : entry(row)
  }

  async count (): Promise<number> {
    const row = await this.handle.db.selectFrom('aggregator_item_verifications')
      .select(eb => eb.cast<number>(eb.fn.countAll(), 'integer').as('n')).executeTakeFirstOrThrow()
    return Number(row.n)
  }
}
