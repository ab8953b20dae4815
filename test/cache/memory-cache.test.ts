import t from 'tap'
import { MemoryCache, type MemoryCacheOptions } from '../../src/cache/memory-cache.js'
import { NO_TELEMETRY, type CacheName, type Telemetry } from '../../src/observability/telemetry.js'
import { changeOf, fakeFeed } from '../fixtures/fake-feed.js'

/** Loads the test ends by hand: each answers what `settle` gives it, or fails with `fail`'s error. */
function loads<V> () {
  const started: Array<{ key: string, settle: (value: V) => void, fail: (error: Error) => void }> = []
  return {
    started,
    /** The loader of a lookup of `key`: started (counted) only when the cache asks it. */
    of: (key: string) => async (): Promise<V> => await new Promise<V>((resolve, reject) => {
      started.push({ key, settle: resolve, fail: reject })
    })
  }
}

/** A loader that answers at once, counting its calls. */
function counted<V> (answer: (call: number) => V) {
  let calls = 0
  return {
    get calls () { return calls },
    load: async (): Promise<V> => answer(++calls)
  }
}

function counting (): Telemetry & { lookups: Array<[CacheName, boolean]> } {
  const lookups: Array<[CacheName, boolean]> = []
  return { ...NO_TELEMETRY, lookups, cache: (cache, hit) => { lookups.push([cache, hit]) } }
}

const settled = async (): Promise<void> => { await new Promise(resolve => setImmediate(resolve)) }

function cache<V> (options: Partial<MemoryCacheOptions<V>> = {}): MemoryCache<V> {
  return new MemoryCache<V>({ name: 'quotes', maxEntries: 100, ttlMs: 60_000, ...options })
}

t.test('concurrent lookups of a key share one load; a failure is theirs and never kept', async t => {
  const memory = cache<string>()
  const { started, of } = loads<string>()
  const answers = Promise.all([memory.get('a', of('a')), memory.get('a', of('a')), memory.get('a', of('a'))])
  const other = memory.get('b', of('b'))
  await settled()
  t.same(started.map(load => load.key), ['a', 'b'], 'one load per key')
  started[0]?.settle('A')
  started[1]?.settle('B')
  t.same(await answers, ['A', 'A', 'A'])
  t.equal(await other, 'B')
  t.equal(await memory.get('a', of('a')), 'A', 'kept')
  t.equal(started.length, 2)

  const failing = Promise.allSettled([memory.get('c', of('c')), memory.get('c', of('c'))])
  await settled()
  started[2]?.fail(new Error('upstream down'))
  t.same((await failing).map(result => result.status), ['rejected', 'rejected'], 'both askers get the failure')
  t.notOk(memory.has('c'), 'nothing kept')
  const again = memory.get('c', of('c'))
  await settled()
  t.equal(started.length, 4, 'the next lookup loads anew')
  started[3]?.settle('C')
  t.equal(await again, 'C')
})

t.test('a value, undefined included, is kept for its time to live from when its load started', async t => {
  let now = 1_000
  const memory = cache<string | undefined>({ ttlMs: 100, now: () => now })
  const { started, of } = loads<string | undefined>()
  const first = memory.get('gone', of('gone'))
  await settled()
  now = 1_040
  started[0]?.settle(undefined)
  t.equal(await first, undefined)
  t.ok(memory.has('gone'), 'an answer of nothing is kept too')
  now = 1_100
  t.equal(await memory.get('gone', of('gone')), undefined)
  t.equal(started.length, 1, 'fresh at its time to live, counted from the load\'s start')
  now = 1_101
  const later = memory.get('gone', of('gone'))
  await settled()
  t.equal(started.length, 2, 'past it, loaded again')
  started[1]?.settle('back')
  t.equal(await later, 'back')

  const perValue = cache<number>({ ttlMs: (value, startedAt) => value - startedAt, now: () => now })
  const deadline = counted(() => now + 50)
  await perValue.get('k', deadline.load)
  now += 50
  await perValue.get('k', deadline.load)
  t.equal(deadline.calls, 1, 'kept until the time its value names')
  now += 1
  await perValue.get('k', deadline.load)
  t.equal(deadline.calls, 2)
  const past = counted(() => now - 1)
  await perValue.get('p', past.load)
  await perValue.get('p', past.load)
  t.equal(past.calls, 2, 'a value already past its time is answered, not kept')
  const due = counted(() => now)
  await perValue.get('d', due.load)
  await perValue.get('d', due.load)
  t.equal(due.calls, 2, 'nor one due now (to lru-cache, a time to live of 0 is none: kept for ever)')
})

t.test('a key forgotten while its load is on its way is answered but not kept; the next lookup loads anew',
  async t => {
    const memory = cache<string>()
    const { started, of } = loads<string>()
    const before = memory.get('a', of('a'))
    const joined = memory.get('a', of('a'))
    await settled()
    memory.forget('a')
    const after = memory.get('a', of('a'))
    await settled()
    t.equal(started.length, 2, 'a lookup after the change does not join the load before it')
    started[1]?.settle('new')
    started[0]?.settle('old')
    t.same([await before, await joined, await after], ['old', 'old', 'new'])
    t.equal(await memory.get('a', of('a')), 'new', 'the load that ended first, but began before the change, ' +
      'did not replace the one after it')
  })

t.test('following the feed: a portfolio\'s change drops its keys, `all` every one; closed, it stops', async t => {
  const feed = fakeFeed()
  const memory = cache<string>({ follows: { feed, keysOf: id => [`${id} x`, `${id} y`] } })
  for (const key of ['p1 x', 'p1 y', 'p2 x']) await memory.get(key, async () => key)
  const { started, of } = loads<string>()
  const onItsWay = memory.get('p2 y', of('p2 y'))
  await settled()
  feed.tell(changeOf('p1'))
  t.same([memory.has('p1 x'), memory.has('p1 y'), memory.has('p2 x')], [false, false, true])
  feed.tell(changeOf('p2'))
  started[0]?.settle('read before the change')
  t.equal(await onItsWay, 'read before the change')
  t.equal(memory.size, 0, 'neither p2 x nor the read on its way kept')
  await memory.get('p1 x', async () => 'x')
  const everything = memory.get('p3 x', of('p3 x'))
  await settled()
  feed.tell({ kind: 'all' })
  t.equal(memory.size, 0, '`all` drops every key')
  started[1]?.settle('read before everything changed')
  t.equal(await everything, 'read before everything changed')
  t.equal(memory.size, 0, 'a load on its way when everything changed is not kept')
  memory.close()
  t.equal(feed.listeners(), 0)
})

t.test('while the feed is unproven nothing is kept nor answered from memory', async t => {
  const feed = fakeFeed()
  const telemetry = counting()
  const memory = cache<number>({ follows: { feed, keysOf: id => [id] }, telemetry })
  const reads = counted(call => call)
  t.equal(await memory.get('p1', reads.load), 1)
  feed.up = false
  t.equal(await memory.get('p1', reads.load), 2, 'not answered from memory')
  t.equal(memory.size, 0, 'what was kept is dropped at the first lookup')
  t.equal(await memory.get('p1', reads.load), 3, 'nor kept')
  t.equal(memory.lookup('p1'), undefined)
  t.equal(memory.peek('p1'), undefined)
  memory.keep('p1', 9)
  t.notOk(memory.has('p1'), 'a value the caller kept is not kept either')

  feed.up = true
  const { started, of } = loads<number>()
  const ending = memory.get('p1', of('p1'))
  await settled()
  feed.up = false
  started[0]?.settle(4)
  t.equal(await ending, 4)
  feed.up = true
  t.equal(memory.size, 0, 'a load that ended while unproven is not kept')
  t.equal(await memory.get('p1', reads.load), 4)
  t.equal(await memory.get('p1', reads.load), 4, 'proven again, kept again')
  t.same(telemetry.lookups.map(([, hit]) => hit), [false, false, false, false, false, false, true],
    'a lookup while unproven is a miss')
})

t.test('what a load answers is kept only when `keeps` says so, and is still answered to every asker', async t => {
  const memory = cache<string | undefined>({ keeps: value => value !== undefined })
  const { started, of } = loads<string | undefined>()
  const both = Promise.all([memory.get('none', of('none')), memory.get('none', of('none'))])
  await settled()
  started[0]?.settle(undefined)
  t.same(await both, [undefined, undefined])
  t.notOk(memory.has('none'))
  memory.keep('none', undefined)
  t.notOk(memory.has('none'), 'nor when kept by the caller')
})

t.test('bounded: the least recently used dropped first, by count and by weight', async t => {
  const byCount = cache<string>({ maxEntries: 2 })
  const loaded = counted(call => `v${call}`)
  await byCount.get('a', loaded.load)
  await byCount.get('b', loaded.load)
  await byCount.get('a', loaded.load)
  await byCount.get('c', loaded.load)
  t.same([byCount.has('a'), byCount.has('b'), byCount.has('c')], [true, false, true])

  const byWeight = cache<number[]>({ maxWeight: 10, weigh: value => 1 + value.length })
  await byWeight.get('heavy', async () => Array(6).fill(0))
  await byWeight.get('light', async () => [])
  await byWeight.get('other', async () => [0])
  t.equal(byWeight.size, 3, '7 + 1 + 2')
  await byWeight.get('light', async () => [])
  await byWeight.get('more', async () => [])
  t.same([byWeight.has('heavy'), byWeight.has('light'), byWeight.has('other'), byWeight.has('more')],
    [false, true, true, true], 'the heavy one, least recently used, made room')
  await byWeight.get('huge', async () => Array(20).fill(0))
  t.notOk(byWeight.has('huge'), 'a value heavier than the whole bound is answered, not kept')
})

t.test('telemetry: each lookup a hit or a miss under the cache\'s name; a load joined is a miss', async t => {
  const telemetry = counting()
  const memory = cache<string>({ name: 'portfolio_reads', telemetry })
  const { started, of } = loads<string>()
  const first = memory.get('a', of('a'))
  const joined = memory.get('a', of('a'))
  await settled()
  started[0]?.settle('A')
  await Promise.all([first, joined])
  await memory.get('a', of('a'))
  memory.keep('t', 'T')
  memory.lookup('t')
  memory.lookup('u')
  memory.peek('a')
  t.same(telemetry.lookups, [
    ['portfolio_reads', false], ['portfolio_reads', false], ['portfolio_reads', true],
    ['portfolio_reads', true], ['portfolio_reads', false]
  ], 'peek counts nothing')
})

t.test('turned off (no entries, or no time to live): every lookup loads, each its own', async t => {
  for (const options of [{ maxEntries: 0 }, { ttlMs: 0 }]) {
    const telemetry = counting()
    const memory = cache<number>({ ...options, telemetry })
    const loaded = counted(call => call)
    t.same(await Promise.all([memory.get('a', loaded.load), memory.get('a', loaded.load)]), [1, 2])
    memory.keep('a', 3)
    t.equal(memory.lookup('a'), undefined)
    t.notOk(memory.has('a'))
    t.same(telemetry.lookups.map(([, hit]) => hit), [false, false, false])
  }
})

t.test('what the caller keeps, peeks at and forgets by a test, loads on their way included', async t => {
  const memory = cache<string>()
  memory.keep('BTC', 'as a ticker')
  t.equal(memory.peek('BTC'), 'as a ticker')
  t.equal(memory.lookup('BTC'), 'as a ticker')
  const { started, of } = loads<string>()
  const history = memory.get('BTC 1d 2026-01-01', of('BTC 1d 2026-01-01'))
  await settled()
  t.ok(memory.has('BTC 1d 2026-01-01'), 'a load on its way is had')
  memory.keep('PETR4', 'kept')
  memory.forgetWhere(key => key === 'BTC' || key.startsWith('BTC '))
  started[0]?.settle('asked as a ticker')
  t.equal(await history, 'asked as a ticker')
  t.same([memory.has('BTC'), memory.has('BTC 1d 2026-01-01'), memory.has('PETR4')], [false, false, true])

  const replaced = memory.get('VALE3', of('VALE3'))
  await settled()
  memory.keep('VALE3', 'refreshed')
  started[1]?.settle('asked before')
  t.equal(await replaced, 'asked before', 'a load replaced on its way answers its askers')
  t.equal(memory.peek('VALE3'), 'refreshed', 'and the value kept stays')
})
