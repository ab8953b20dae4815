import t from 'tap'
import Fastify from 'fastify'
import { Store } from '../../src/store/store.js'
import { JobRunner, type JobKind, type JobOutcome } from '../../src/domain/jobs.js'
import type { Job } from '../../src/domain/background-ports.js'
import { forEachEngine, freshStore } from '../helper.js'
import { until } from '../fixtures/until.js'

/*
 * The queue's runner on a real store (both engines): what closing does to a run under way, and an instance that stops
 * renewing its lease (frozen, or killed) losing its job to another once the lease ends. Leases and polls are set short
 * by the test; every wait is a bounded poll on the store or on a counter.
 */

const log = Fastify({ logger: false }).log
const FAST = { pollMs: 10, leaseMs: 300 }

/** A kind whose runs wait until the test ends them: each run is counted, and answers what it is given. */
function heldKind () {
  const runs: Array<{ job: Job, signal: AbortSignal, end: (outcome: JobOutcome) => void }> = []
  const kind: JobKind = {
    retryMs: 10,
    run: async (job, signal) => await new Promise<JobOutcome>(resolve => { runs.push({ job, signal, end: resolve }) }),
    failed: async () => {}
  }
  return { kind, runs }
}

async function queued (store: Store, key: string): Promise<void> {
  const now = new Date().toISOString()
  await store.write(async work => {
    await work.jobs.lockOrInsert({
      kind: 'test',
      key,
      payload: {},
      attempts: 0,
      nextAttemptAt: now,
      expiresAt: null,
      lastError: null,
      requestedAt: now
    })
  })
}

forEachEngine(t, 'closing: a run that stops is given back due at once; one that ends done goes', async (t, engine) => {
  const store = await Store.open(...await freshStore(t, engine))
  t.teardown(() => store.close())
  const { kind, runs } = heldKind()
  const runner = new JobRunner(store.jobs, new Map([['test', kind]]), log, FAST)
  runner.start()
  await queued(store, 'stops')
  await queued(store, 'ends')
  await until('both running', () => runs.length === 2, () => runs.length)
  const closing = runner.close()
  t.ok(runs.every(run => run.signal.aborted), 'closing stops every run')
  for (const run of runs) run.end(run.job.key === 'ends' ? { result: 'done' } : { result: 'failed', reason: 'stopped' })
  await closing
  t.equal(await store.jobs.entry('test', 'ends'), undefined, 'its work done as the instance closed: gone')
  t.match(await store.jobs.entry('test', 'stops'), { state: 'queued', attempts: 0, leaseHolder: null },
    'stopped: given back for another instance, its attempts as they were')
})

forEachEngine(t, 'an instance that stops renewing loses its job once the lease ends; another finishes it', async (
  t, engine
) => {
  const store = await Store.open(...await freshStore(t, engine))
  t.teardown(() => store.close())
  // Once it runs the job, the first instance reaches the store no more (no renewal, no claim): as if it froze or was
  // killed mid-run.
  let frozen = false
  const jobs = store.jobs
  const first = heldKind()
  const stalling: Store['jobs'] = Object.create(jobs)
  stalling.claimNext = async (...args) => frozen ? undefined : await jobs.claimNext(...args)
  stalling.renew = async (...args) => frozen || await jobs.renew(...args)
  const second = heldKind()
  const a = new JobRunner(stalling, new Map([['test', first.kind]]), log, FAST)
  const b = new JobRunner(store.jobs, new Map([['test', second.kind]]), log, FAST)
  t.teardown(async () => { await Promise.all([a.close(), b.close()]) })
  a.start()
  await queued(store, 'k')
  await until('the first instance running it', () => first.runs.length === 1)
  frozen = true
  b.start()
  await until('the second instance taking it after the lease', () => second.runs.length === 1, () => second.runs.length)
  t.match(await store.jobs.entry('test', 'k'), { leaseHolder: b.worker, state: 'running' })
  second.runs[0]?.end({ result: 'done' })
  await until('the job gone', async () => await store.jobs.entry('test', 'k') === undefined)
  // The first instance wakes and ends its run: it no longer holds the job, so nothing of its end is written.
  first.runs[0]?.end({ result: 'failed', reason: 'late' })
  await a.close()
  t.equal(await store.jobs.count('test'), 0, 'the late end queued nothing again')
  t.equal(first.runs.length + second.runs.length, 2, 'one run each')
})

forEachEngine(t, 'a lease that lapsed while the job still runs here is claimed again, not run twice', async (
  t, engine
) => {
  const store = await Store.open(...await freshStore(t, engine))
  t.teardown(() => store.close())
  // The renewals do not reach the store (a slow or failing connection), the instance's looks at the queue do.
  const jobs = store.jobs
  const failingRenewals: Store['jobs'] = Object.create(jobs)
  failingRenewals.renew = async () => true
  const { kind, runs } = heldKind()
  const runner = new JobRunner(failingRenewals, new Map([['test', kind]]), log, FAST)
  runner.start()
  await queued(store, 'k')
  await until('running', () => runs.length === 1)
  const claimed = (await jobs.entry('test', 'k'))?.leaseUntil ?? ''
  await until('its lease lapsed and claimed again by the same instance', async () =>
    ((await jobs.entry('test', 'k'))?.leaseUntil ?? '') > claimed)
  t.equal(runs.length, 1, 'still the one run')
  runs[0]?.end({ result: 'done' })
  await until('the job gone', async () => await jobs.entry('test', 'k') === undefined)
  await runner.close()
})
