import t from 'tap'
import { Store } from '../../src/store/store.js'
import { IdempotencyRepository } from '../../src/store/idempotency.js'
import type { StoreHandle } from '../../src/store/handle.js'
import type { ClaimOutcome, IdempotencyClaim } from '../../src/store/idempotency.js'
import { forEachEngine, freshStore } from '../helper.js'

/** A time `seconds` after a fixed start: the repository takes its clock from the caller. */
const at = (seconds: number): string => new Date(Date.UTC(2026, 0, 1) + seconds * 1000).toISOString()

/** A claim made at `seconds`, in flight for 60 s, kept for 100 s. */
function claimAt (seconds: number, overrides: Partial<IdempotencyClaim> = {}): IdempotencyClaim {
  return {
    scope: 'apikey:digest',
    key: 'k-1',
    fingerprint: 'fp-1',
    claim: `c-${seconds}`,
    at: at(seconds),
    lockedUntil: at(seconds + 60),
    expiresAt: at(seconds + 100),
    ...overrides
  }
}

const answer = { status: 201, headers: { 'content-type': 'application/json; charset=utf-8' }, body: '{"id":"p-1"}' }

forEachEngine(t, 'a key is claimed once; then in flight, answered, or refused to others', async (t, engine) => {
  const store = await Store.open(...await freshStore(t, engine))
  t.teardown(() => store.close())
  const keys = store.idempotency
  const first = claimAt(0)
  t.same(await keys.claim(first), { outcome: 'claimed' })
  t.same(await keys.claim(claimAt(1)), { outcome: 'in-flight' }, 'the same request while the first runs')
  t.same(await keys.claim(claimAt(1, { fingerprint: 'fp-2' })), { outcome: 'reused' }, 'another request under the key')
  const otherCredential = await keys.claim(claimAt(1, { scope: 'user:42' }))
  t.same(otherCredential, { outcome: 'claimed' }, 'the same key of another credential is its own')

  await keys.complete(claimAt(2, { claim: 'someone-else' }), { ...answer, body: 'not mine' })
  t.same(await keys.claim(claimAt(3)), { outcome: 'in-flight' }, 'only the execution holding the key completes it')
  await keys.complete(first, answer)
  t.same(await keys.claim(claimAt(4)), { outcome: 'replay', answer })
  t.same(await keys.claim(claimAt(4, { fingerprint: 'fp-2' })), { outcome: 'reused' }, 'answered, it refuses others')
  t.same(await keys.claim(claimAt(99)), { outcome: 'replay', answer }, 'kept until it expires')
  t.equal(await keys.count(), 2)
})

forEachEngine(t, 'a released key runs again; one expired or past its lease is taken over', async (t, engine) => {
  const store = await Store.open(...await freshStore(t, engine))
  t.teardown(() => store.close())
  const keys = store.idempotency
  const first = claimAt(0)
  await keys.claim(first)
  await keys.release(claimAt(0, { claim: 'someone-else' }))
  t.same(await keys.claim(claimAt(1)), { outcome: 'in-flight' }, 'only the holder releases')
  await keys.release(first)
  const second = claimAt(2)
  t.same(await keys.claim(second), { outcome: 'claimed' }, 'released: the retry runs')

  // The second execution's instance died: nothing completes it. Its lease ends at 62.
  t.same(await keys.claim(claimAt(61)), { outcome: 'in-flight' })
  const third = claimAt(62, { fingerprint: 'fp-other' })
  t.same(await keys.claim(third), { outcome: 'claimed' }, 'past its lease the key is free, whatever is asked')
  await keys.complete(second, { ...answer, body: 'late' })
  await keys.complete(third, answer)
  const after = await keys.claim(claimAt(63, { fingerprint: 'fp-other' }))
  t.same(after, { outcome: 'replay', answer }, 'the dead execution completes nothing')

  // Kept until 162 (62 + 100).
  t.same(await keys.claim(claimAt(161)), { outcome: 'reused' })
  t.same(await keys.claim(claimAt(162)), { outcome: 'claimed' }, 'expired: a new request under the key runs')
})

forEachEngine(t, 'the sweep deletes the expired keys only', async (t, engine) => {
  const store = await Store.open(...await freshStore(t, engine))
  t.teardown(() => store.close())
  const keys = store.idempotency
  await keys.claim(claimAt(0, { key: 'old' }))
  await keys.claim(claimAt(50, { key: 'new' }))
  t.equal(await keys.sweep(at(99)), 0)
  t.equal(await keys.sweep(at(100)), 1)
  t.equal(await keys.count(), 1)
  t.same(await keys.claim(claimAt(101, { key: 'new' })), { outcome: 'in-flight' }, 'the unexpired key is still there')
})

forEachEngine(t, 'concurrent claims of one key: exactly one wins', async (t, engine) => {
  const store = await Store.open(...await freshStore(t, engine))
  t.teardown(() => store.close())
  const claim = async (index: number): Promise<ClaimOutcome> =>
    await store.idempotency.claim(claimAt(0, { claim: `c-${index}` }))
  const claims = Array.from({ length: 20 }, async (_, index) => await claim(index))
  const outcomes = await Promise.all(claims)
  t.equal(outcomes.filter(outcome => outcome.outcome === 'claimed').length, 1)
  t.equal(outcomes.filter(outcome => outcome.outcome === 'in-flight').length, 19)
})

t.test('a key that vanishes between each claim and look is reported in flight after three tries', async t => {
  let statements = 0
  // Every claim finds the key taken, every look finds it gone: released and retaken by others.
  const racing = {
    statement: () => async () => { statements++; return [] },
    changes: () => async () => 0
  } as unknown as StoreHandle
  t.same(await new IdempotencyRepository(racing).claim(claimAt(0)), { outcome: 'in-flight' })
  t.equal(statements, 6, 'three claims and three looks, then it stops')
})
