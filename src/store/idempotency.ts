import type { Changes, Statement, StoreHandle } from './handle.js'

/** An execution's hold on a key, taken before its request runs. Timestamps are ISO 8601 UTC. */
export interface IdempotencyClaim {
  /** Whose key: the credential (see IdempotencyKeysTable). */
  scope: string
  key: string
  /** What was asked: the same key with another fingerprint is refused. */
  fingerprint: string
  /** A random id of this execution. */
  claim: string
  at: string
  /** While in flight, how long the execution may hold the key before it is taken for dead. */
  lockedUntil: string
  expiresAt: string
}

/** An answer kept for its key, sent again to a repeat as it was. */
export interface KeptAnswer {
  status: number
  /** The headers kept with it (content-type, etag). */
  headers: Record<string, string>
  /** The body as sent; null when there was none. */
  body: string | null
}

export type ClaimOutcome =
  | { outcome: 'claimed' }
  | { outcome: 'replay', answer: KeptAnswer }
  | { outcome: 'reused' }
  | { outcome: 'in-flight' }

interface KeyRow {
  fingerprint: string
  status_code: number | null
  headers: string | null
  body: string | null
  locked_until: string
  expires_at: string
}

const COLUMNS = 'scope, key, fingerprint, claim, status_code, headers, body, locked_until, expires_at, created_at'

/**
 * One statement takes a key: inserted in flight, or — when its row has expired, or was left in
 * flight past its lease by an instance that died — taken over. A row that is the caller's to
 * honour (in flight, or answered and unexpired) is left as it is, and nothing is returned.
 */
const CLAIM_SQL = `insert into idempotency_keys (${COLUMNS}) values (?, ?, ?, ?, null, null, null, ?, ?, ?)
  on conflict (scope, key) do update set fingerprint = excluded.fingerprint, claim = excluded.claim,
    status_code = null, headers = null, body = null, locked_until = excluded.locked_until,
    expires_at = excluded.expires_at, created_at = excluded.created_at
  where idempotency_keys.expires_at <= excluded.created_at
    or (idempotency_keys.status_code is null and idempotency_keys.locked_until <= excluded.created_at)
  returning claim`

const SELECT_SQL = 'select fingerprint, status_code, headers, body, locked_until, expires_at from idempotency_keys ' +
  'where scope = ? and key = ?'
const COMPLETE_SQL = 'update idempotency_keys set status_code = ?, headers = ?, body = ? ' +
  'where scope = ? and key = ? and claim = ?'
const RELEASE_SQL = 'delete from idempotency_keys where scope = ? and key = ? and claim = ?'
const SWEEP_SQL = 'delete from idempotency_keys where expires_at <= ?'
const COUNT_SQL = 'select cast(count(*) as integer) as n from idempotency_keys'

/** A row that vanished or lapsed between the claim and the look at it is claimed again, this many times at most. */
const CLAIM_TRIES = 3

/**
 * `Idempotency-Key`s and their answers, shared by every instance through the store: the primary
 * key (scope, key) lets one execution hold a key at a time, whichever instance it runs on, with
 * no lock in memory. Every query is a statement compiled once (docs/style.md#query-style): a keyed write
 * claims and completes its key besides its own work.
 */
export class IdempotencyRepository {
  private readonly insertClaim: Statement<{ claim: string }>
  private readonly select: Statement<KeyRow>
  private readonly update: Statement<unknown>
  private readonly remove: Statement<unknown>
  private readonly removeExpired: Changes
  private readonly selectCount: Statement<{ n: number | string }>

  constructor (handle: StoreHandle) {
    this.insertClaim = handle.statement(CLAIM_SQL)
    this.select = handle.statement(SELECT_SQL)
    this.update = handle.statement(COMPLETE_SQL)
    this.remove = handle.statement(RELEASE_SQL)
    this.removeExpired = handle.changes(SWEEP_SQL)
    this.selectCount = handle.statement(COUNT_SQL)
  }

  /**
   * Takes the key for this execution (one statement), or says why not: the kept answer of the
   * same request, another request under the key, or the key still in flight (a second statement).
   */
  async claim (claim: IdempotencyClaim): Promise<ClaimOutcome> {
    for (let tries = 0; tries < CLAIM_TRIES; tries++) {
      const { scope, key, fingerprint, lockedUntil, expiresAt, at } = claim
      const taken = await this.insertClaim([scope, key, fingerprint, claim.claim, lockedUntil, expiresAt, at])
      if (taken.length > 0) return { outcome: 'claimed' }
      const row = (await this.select([claim.scope, claim.key]))[0]
      // Released (a failed execution) or lapsed since: claim again.
      if (row === undefined || row.expires_at <= claim.at) continue
      if (row.fingerprint !== claim.fingerprint) return { outcome: 'reused' }
      if (row.status_code === null) {
        if (row.locked_until <= claim.at) continue
        return { outcome: 'in-flight' }
      }
      const headers = row.headers === null ? {} : JSON.parse(row.headers) as Record<string, string>
      return { outcome: 'replay', answer: { status: Number(row.status_code), headers, body: row.body } }
    }
    // Released and taken again by others each time: someone holds it.
    return { outcome: 'in-flight' }
  }

  /** Keeps the answer of the execution holding the key; nothing if it lost the key meanwhile. */
  async complete (claim: IdempotencyClaim, answer: KeptAnswer): Promise<void> {
    await this.update([answer.status, JSON.stringify(answer.headers), answer.body, claim.scope, claim.key, claim.claim])
  }

  /** Frees the key (the execution failed), so a retry runs anew. */
  async release (claim: IdempotencyClaim): Promise<void> {
    await this.remove([claim.scope, claim.key, claim.claim])
  }

  /** Deletes the keys expired at `at`; answers how many. */
  async sweep (at: string): Promise<number> {
    return await this.removeExpired([at])
  }

  async count (): Promise<number> {
    const [row] = await this.selectCount([])
    /* c8 ignore next -- a count without GROUP BY always yields one row */
    if (row === undefined) throw new Error('count returned no row')
    return Number(row.n)
  }
}
