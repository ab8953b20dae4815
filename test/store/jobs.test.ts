import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import type { Kysely } from 'kysely'
import { Store } from '../../src/store/store.js'
import { connect } from '../../src/store/connect.js'
import { migrate } from '../../src/store/migrate.js'
import { forEachEngine, freshDatabase, freshStore } from '../helper.js'

/** A fixed clock for the queue: minute `m` of one day. */
const at = (minute: number): string => new Date(Date.UTC(2030, 0, 1, 0, minute)).toISOString()

/** A job as first asked for at minute `minute`, due a minute later. */
const asked = (key: string, minute: number, fields: { kind?: string, expiresAt?: string | null } = {}) => ({
  kind: fields.kind ?? 'verify-item',
  key,
  payload: { event: 'item/updated' },
  attempts: 1,
  nextAttemptAt: at(minute + 1),
  expiresAt: fields.expiresAt === undefined ? at(minute + 60) : fields.expiresAt,
  lastError: 'boom',
  requestedAt: at(minute)
})

async function openStore (t: Parameters<Parameters<typeof forEachEngine>[2]>[0], engine: 'sqlite' | 'postgres') {
  const store = await Store.open(...await freshStore(t, engine))
  t.teardown(() => store.close())
  return store
}

forEachEngine(t, 'one job per kind and key: asked again, it keeps its row and takes what the request gives', async (
  t, engine
) => {
  const store = await openStore(t, engine)
  const first = await store.write(async work => await work.jobs.lockOrInsert(asked('i1', 0)))
  t.match(first, { inserted: true, job: { kind: 'verify-item', key: 'i1', state: 'queued', attempts: 1 } })
  const again = await store.write(async work => {
    const found = await work.jobs.lockOrInsert({ ...asked('i1', 5), attempts: 9, lastError: 'ignored' })
    await work.jobs.request('verify-item', 'i1', { requestedAt: at(5), payload: { event: 'item/created' } })
    return found
  })
  t.match(again, { inserted: false, job: { requestedAt: at(0), attempts: 1 } }, 'the row as it was, locked')
  t.same(await store.jobs.entry('verify-item', 'i1'), {
    kind: 'verify-item',
    key: 'i1',
    payload: { event: 'item/created' },
    state: 'queued',
    attempts: 1,
    nextAttemptAt: at(1),
    expiresAt: at(60),
    lastError: 'boom',
    requestedAt: at(5),
    leaseHolder: null,
    leaseUntil: null
  }, 'what the request gave changed; its attempts and schedule did not')
  await store.write(async work => { await work.jobs.lockOrInsert(asked('i1', 0, { kind: 'import' })) })
  t.equal(await store.jobs.count(), 2, 'another kind of the same key is another job')
  t.equal(await store.jobs.count('import'), 1)
})

forEachEngine(t, 'a claim is a lease: one holder until it ends; due jobs of asked kinds only', async (t, engine) => {
  const store = await openStore(t, engine)
  const { jobs } = store
  await store.write(async work => { await work.jobs.lockOrInsert(asked('i1', 0)) })
  t.equal(await jobs.claimNext(['verify-item'], 'a', at(0), at(3)), undefined, 'not due before its next attempt')
  t.equal(await jobs.claimNext(['import'], 'a', at(1), at(3)), undefined, 'not of a kind asked for')
  t.equal(await jobs.claimNext([], 'a', at(1), at(3)), undefined, 'no kinds, no claim')
  const claimed = await jobs.claimNext(['import', 'verify-item'], 'a', at(1), at(3))
  t.match(claimed, { key: 'i1', state: 'running', leaseHolder: 'a', leaseUntil: at(3) })
  if (claimed === undefined) throw new Error('not claimed')
  t.equal(await jobs.claimNext(['verify-item'], 'b', at(2), at(4)), undefined, 'held by a')
  t.equal(await jobs.renew(claimed, 'a', at(5)), true, 'a renews its lease')
  t.equal(await jobs.claimNext(['verify-item'], 'b', at(4), at(6)), undefined, 'still held, renewed')
  const taken = await jobs.claimNext(['verify-item'], 'b', at(6), at(8))
  t.match(taken, { key: 'i1', leaseHolder: 'b' }, 'a\'s lease ended: b takes the running job')
  t.equal(await jobs.renew(claimed, 'a', at(9)), false, 'a no longer holds it')
  t.equal(await jobs.finish(claimed, 'a'), false, 'nor ends it')
  t.equal(await jobs.retryLater(claimed, 'a', { attempts: 5, nextAttemptAt: at(50), lastError: 'late' }), false)
  await jobs.release(claimed, 'a', at(6))
  t.match(await jobs.entry('verify-item', 'i1'), { attempts: 1, leaseHolder: 'b', state: 'running' }, 'untouched by a')

  if (taken === undefined) throw new Error('not taken')
  t.equal(await jobs.retryLater(taken, 'b', { attempts: 2, nextAttemptAt: at(20), lastError: 'again' }), true)
  t.match(await jobs.entry('verify-item', 'i1'), {
    state: 'queued', attempts: 2, nextAttemptAt: at(20), lastError: 'again', leaseHolder: null, leaseUntil: null
  })
  t.equal(await jobs.claimNext(['verify-item'], 'c', at(10), at(12)), undefined, 'retried later: not due')
  t.equal(await jobs.claimNext(['verify-item'], 'c', at(60), at(62)), undefined, 'expired jobs are never claimed')
  const stopped = await jobs.claimNext(['verify-item'], 'c', at(20), at(22))
  if (stopped === undefined) throw new Error('not claimed again')
  await jobs.release(stopped, 'c', at(21))
  t.match(await jobs.entry('verify-item', 'i1'),
    { state: 'queued', attempts: 2, nextAttemptAt: at(21), leaseHolder: null },
    'given back unfinished: due at once, its attempts kept')
})

forEachEngine(t, 'a run\'s end removes its job, unless it was asked for again meanwhile', async (t, engine) => {
  const store = await openStore(t, engine)
  const { jobs } = store
  await store.write(async work => { await work.jobs.lockOrInsert(asked('i1', 0)) })
  const first = await jobs.claimNext(['verify-item'], 'a', at(1), at(3))
  if (first === undefined) throw new Error('not claimed')
  await store.write(async work => {
    await work.jobs.request('verify-item', 'i1', { requestedAt: at(2), nextAttemptAt: at(30), lastError: 'newer' })
  })
  t.equal(await jobs.retryLater(first, 'a', { attempts: 2, nextAttemptAt: at(9), lastError: 'x' }), false,
    'a retry is refused: the newer request stands')
  t.equal(await jobs.finish(first, 'a'), false)
  t.match(await jobs.entry('verify-item', 'i1'), {
    state: 'queued', attempts: 0, nextAttemptAt: at(30), lastError: null, leaseHolder: null, requestedAt: at(2)
  }, 'queued for the newer request, when it said, its attempts from nothing')
  const second = await jobs.claimNext(['verify-item'], 'a', at(30), at(32))
  if (second === undefined) throw new Error('not claimed again')
  t.equal(await jobs.finish(second, 'a'), true)
  t.equal(await jobs.count(), 0)
})

forEachEngine(t, 'settled outside the queue; expired jobs dropped once; jobs that never expire stay', async (
  t, engine
) => {
  const store = await openStore(t, engine)
  const { jobs } = store
  await store.write(async work => { await work.jobs.lockOrInsert(asked('i1', 10)) })
  await jobs.settle('verify-item', 'i1', at(9))
  t.equal(await jobs.count(), 1, 'work done before the request does not settle it')
  await jobs.settle('verify-item', 'i1', at(10))
  t.equal(await jobs.count(), 0)

  await store.write(async work => {
    await work.jobs.lockOrInsert(asked('old', 0))
    await work.jobs.lockOrInsert(asked('new', 30))
    await work.jobs.lockOrInsert(asked('never', 0, { kind: 'import', expiresAt: null }))
  })
  t.same(await jobs.dropExpired(at(59)), [])
  t.match(await jobs.dropExpired(at(60)), [{ key: 'old', payload: { event: 'item/updated' }, attempts: 1 }])
  t.same(await jobs.dropExpired(at(60)), [], 'each expired job is answered once')
  const later = await jobs.entry('verify-item', 'new')
  t.same(await jobs.dropExpired(at(100_000)), [later], 'the later one in its turn')
  t.match(await jobs.entry('import', 'never'), { key: 'never', expiresAt: null })
})

forEachEngine(t, 'instances claiming at once take each due job once', async (t, engine) => {
  const store = await openStore(t, engine)
  const keys = Array.from({ length: 12 }, (_, index) => `item-${index}`)
  await store.write(async work => {
    for (const key of keys) await work.jobs.lockOrInsert(asked(key, 0))
  })
  // Twelve claimers at once (on PostgreSQL, over the pool's connections: `for update skip locked`).
  const claims = await Promise.all(keys.map(async (_, index) =>
    await store.jobs.claimNext(['verify-item'], `worker-${index}`, at(1), at(5))))
  const claimed = claims.filter(job => job !== undefined).map(job => job.key).sort()
  const again = await store.jobs.claimNext(['verify-item'], 'late', at(1), at(5))
  const all = again === undefined ? claimed : [...claimed, again.key].sort()
  t.same(new Set(all).size, all.length, 'no job claimed twice')
  // A claimer that found every row locked by the others finds nothing; each job is held by the one that took it.
  for (const job of claims) {
    if (job === undefined) continue
    t.equal((await store.jobs.entry('verify-item', job.key))?.leaseHolder, job.leaseHolder)
  }
  let rest = await store.jobs.claimNext(['verify-item'], 'sweeper', at(1), at(5))
  while (rest !== undefined) {
    all.push(rest.key)
    rest = await store.jobs.claimNext(['verify-item'], 'sweeper', at(1), at(5))
  }
  t.same(all.sort(), keys.sort(), 'every job claimed, once')
})

forEachEngine(t, 'migration 0011 carries the queued webhook verifications over as jobs', async (t, engine) => {
  const url = engine === 'postgres'
    ? (await freshDatabase(t, engine)).searchPathUrl
    : `sqlite:${join(mkdtempSync(join(tmpdir(), 'bff-jobs-')), 'bff.sqlite')}`
  const { db, engine: opened, release } = await connect(url)
  t.teardown(async () => {
    await db.destroy()
    await release?.()
  })
  await migrate(db, opened, { upTo: '0010-asset-transactions' })
  const old = db as unknown as Kysely<{ aggregator_item_verifications: Record<string, unknown> }>
  await old.insertInto('aggregator_item_verifications').values([
    {
      item_id: 'i1',
      event: 'item/login_succeeded',
      queued_at: at(0),
      attempts: 3,
      next_attempt_at: at(7),
      expires_at: at(60),
      last_error: 'BFF_UPSTREAM_UNAVAILABLE',
      claimed_by: 'gone-instance',
      claimed_until: at(2)
    },
    {
      item_id: 'i2',
      event: 'item/updated',
      queued_at: at(1),
      attempts: 1,
      next_attempt_at: at(2),
      expires_at: at(61),
      last_error: null,
      claimed_by: null,
      claimed_until: null
    }
  ]).execute()
  await migrate(db, opened)
  const store = await Store.open(url)
  t.teardown(() => store.close())
  t.same(await store.jobs.entry('verify-item', 'i1'), {
    kind: 'verify-item',
    key: 'i1',
    payload: { event: 'item/login_succeeded' },
    state: 'queued',
    attempts: 3,
    nextAttemptAt: at(7),
    expiresAt: at(60),
    lastError: 'BFF_UPSTREAM_UNAVAILABLE',
    requestedAt: at(0),
    leaseHolder: null,
    leaseUntil: null
  }, 'its event, attempts, schedule, expiry and error; its lease dropped')
  t.match(await store.jobs.entry('verify-item', 'i2'), { payload: { event: 'item/updated' }, lastError: null })
  t.equal(await store.jobs.count(), 2)
})
