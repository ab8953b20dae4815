import { mock } from 'node:test'
import t from 'tap'
import { callAt, formatDuration, LONGEST_TIMER_MS } from '../../src/domain/time.js'

t.test('callAt waits for a moment further off than one timer holds, in steps, and can be called off', async t => {
  let now = 1_800_000_000_000
  const when = now + 2 * LONGEST_TIMER_MS + 5
  const calls: number[] = []
  mock.timers.enable({ apis: ['setTimeout'] })
  t.teardown(() => { mock.timers.reset() })
  callAt(when, () => { calls.push(now) }, () => now)
  for (const step of [LONGEST_TIMER_MS, LONGEST_TIMER_MS]) {
    now += step
    mock.timers.tick(step)
    t.same(calls, [], 'not yet: a timer of more than 2³¹ − 1 ms would have fired at once')
  }
  now += 5
  mock.timers.tick(5)
  t.same(calls, [when], 'called once the moment came')

  const cancelled: number[] = []
  const cancel = callAt(now + 10, () => { cancelled.push(now) }, () => now)
  cancel()
  now += 10
  mock.timers.tick(10)
  t.same(cancelled, [], 'called off: never called')
})

t.test('callAt calls at once for a moment already past', async t => {
  const called = await new Promise<boolean>(resolve => { callAt(Date.now() - 1000, () => { resolve(true) }) })
  t.ok(called)
})

t.test('formatDuration', async t => {
  t.equal(formatDuration(3725), '1h 2m 5s')
  t.equal(formatDuration(59), '59s')
  t.equal(formatDuration(-3), '0s')
})
