import t from 'tap'
import { Store } from '../../src/store/store.js'
import { forEachEngine, freshStore } from '../helper.js'

/** A fixed clock for the queue: minute `m` of one day. */
const at = (minute: number): string => new Date(Date.UTC(2030, 0, 1, 0, minute)).toISOString()

const failed = (itemId: string, event: string, minute: number) => ({
  itemId, event, queuedAt: at(minute), nextAttemptAt: at(minute + 1), expiresAt: at(minute + 60), lastError: 'boom'
})

forEachEngine(t, 'one entry per item; the newer event replaces the older', async (t, engine) => {
  const store = await Store.open(...await freshStore(t, engine))
  t.teardown(() => store.close())
  const queue = store.itemVerifications
  await queue.enqueue(failed('i1', 'item/created', 0))
  await queue.enqueue({ ...failed('i1', 'item/updated', 5), nextAttemptAt: at(30), lastError: 'later' })
  t.equal(await queue.count(), 1)
  t.same(await queue.entry('i1'), {
    itemId: 'i1',
    event: 'item/updated',
    queuedAt: at(5),
    attempts: 1,
    nextAttemptAt: at(1),
    expiresAt: at(65),
    lastError: 'later',
    claimedBy: null,
    claimedUntil: null
  }, 'the schedule and attempts stay; the event, its start, expiry and error are the newer ones')
})

forEachEngine(t, 'a claim is a lease: one holder until it ends; due entries only', async (t, engine) => {
  const store = await Store.open(...await freshStore(t, engine))
  t.teardown(() => store.close())
  const queue = store.itemVerifications
  await queue.enqueue(failed('i1', 'item/updated', 0))
  t.equal(await queue.claimNext('a', at(0), at(3)), undefined, 'not due before its next attempt')
  const claimed = await queue.claimNext('a', at(1), at(3))
  t.match(claimed, { itemId: 'i1', claimedBy: 'a', claimedUntil: at(3) })
  t.equal(await queue.claimNext('b', at(2), at(4)), undefined, 'held by a')
  t.match(await queue.claimNext('b', at(4), at(6)), { itemId: 'i1', claimedBy: 'b' }, 'a\'s lease ended: b takes it')

  if (claimed === undefined) throw new Error('unreachable')
  t.equal(await queue.complete(claimed, 'a'), false, 'a no longer holds it: nothing removed')
  await queue.reschedule(claimed, 'a', at(50), 'late')
  t.match(await queue.entry('i1'), { attempts: 1, claimedBy: 'b' }, 'nor rescheduled by a')

  const held = await queue.entry('i1')
  if (held === undefined) throw new Error('unreachable')
  await queue.reschedule(held, 'b', at(20), 'again')
  t.match(await queue.entry('i1'), {
    attempts: 2, nextAttemptAt: at(20), lastError: 'again', claimedBy: null, claimedUntil: null
  })
  t.equal(await queue.claimNext('c', at(10), at(12)), undefined, 'rescheduled: not due')
  t.equal(await queue.claimNext('c', at(60), at(62)), undefined, 'expired entries are never claimed')
})

forEachEngine(t, 'completing removes the entry, unless a newer event was queued meanwhile', async (t, engine) => {
  const store = await Store.open(...await freshStore(t, engine))
  t.teardown(() => store.close())
  const queue = store.itemVerifications
  await queue.enqueue(failed('i1', 'item/created', 0))
  const first = await queue.claimNext('a', at(1), at(3))
  if (first === undefined) throw new Error('not claimed')
  await queue.enqueue(failed('i1', 'item/updated', 2))
  t.equal(await queue.complete(first, 'a'), false)
  t.match(await queue.entry('i1'), { event: 'item/updated', claimedBy: null }, 'released for the newer event')
  const second = await queue.claimNext('a', at(2), at(4))
  if (second === undefined) throw new Error('not claimed again')
  t.equal(await queue.complete(second, 'a'), true)
  t.equal(await queue.count(), 0)
})

forEachEngine(t, 'settled outside the queue; expired entries dropped once', async (t, engine) => {
  const store = await Store.open(...await freshStore(t, engine))
  t.teardown(() => store.close())
  const queue = store.itemVerifications
  await queue.enqueue(failed('i1', 'item/updated', 10))
  await queue.settle('i1', at(9))
  t.equal(await queue.count(), 1, 'a verification that began before the event does not settle it')
  await queue.settle('i1', at(10))
  t.equal(await queue.count(), 0)

  await queue.enqueue(failed('old', 'item/updated', 0))
  await queue.enqueue(failed('new', 'item/updated', 30))
  t.same(await queue.dropExpired(at(59)), [])
  t.match(await queue.dropExpired(at(60)), [{ itemId: 'old', event: 'item/updated', attempts: 1 }])
  t.same(await queue.dropExpired(at(60)), [], 'each expired entry is answered once')
  t.equal(await queue.count(), 1)
})
