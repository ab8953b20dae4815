import t from 'tap'
import { PerformanceCache } from '../../src/domain/performance-cache.js'
import { nextClose } from '../../src/quotes/provider.js'
import { changeOf, fakeFeed } from '../fixtures/fake-feed.js'
import type { PerformanceRange, PortfolioPerformance } from '../../src/schemas/performance.js'
import type { CacheName, Telemetry } from '../../src/observability/telemetry.js'
import { NO_TELEMETRY } from '../../src/observability/telemetry.js'
import { createDomain, type Access, type DomainAdapters } from '../../src/domain/index.js'
import { OfflineQuotes } from '../../src/quotes/offline.js'
import { capturedLog } from '../fixtures/captured-log.js'

/** Answers that say which computation made them. */
function computations () {
  let made = 0
  return {
    get made () { return made },
    compute: (portfolioId: string) => async (): Promise<PortfolioPerformance> => {
      made++
      return { portfolioId, twr: made } as unknown as PortfolioPerformance
    }
  }
}

function counting (): Telemetry & { lookups: Array<[CacheName, boolean]> } {
  const lookups: Array<[CacheName, boolean]> = []
  return { ...NO_TELEMETRY, lookups, cache: (cache, hit) => { lookups.push([cache, hit]) } }
}

const get = async (
  cache: PerformanceCache, id: string, range: PerformanceRange, compute: () => Promise<PortfolioPerformance>
): Promise<number> => (await cache.get(id, range, compute)).twr

t.test('kept per portfolio and range until the portfolio changes; `all` drops every one', async t => {
  const feed = fakeFeed()
  const telemetry = counting()
  const cache = new PerformanceCache(feed, { maxEntries: 100 }, telemetry)
  const { compute } = computations()
  t.equal(await get(cache, 'p1', '1y', compute('p1')), 1)
  t.equal(await get(cache, 'p1', '1y', compute('p1')), 1, 'answered from memory')
  t.equal(await get(cache, 'p1', '1m', compute('p1')), 2, 'each range its own')
  t.equal(await get(cache, 'p2', '1y', compute('p2')), 3)
  t.same(telemetry.lookups.map(([, hit]) => hit), [false, true, false, false])
  t.ok(telemetry.lookups.every(([name]) => name === 'performance'))
  feed.tell(changeOf('p1'))
  t.equal(await get(cache, 'p1', '1y', compute('p1')), 4, 'the change of p1 drops its ranges')
  t.equal(await get(cache, 'p1', '1m', compute('p1')), 5)
  t.equal(await get(cache, 'p2', '1y', compute('p2')), 3, 'p2 kept')
  feed.tell({ kind: 'all' })
  t.equal(await get(cache, 'p2', '1y', compute('p2')), 6)
  t.equal(cache.size, 1)
  cache.close()
  t.equal(feed.listeners(), 0)
  t.equal(cache.size, 0)
})

t.test('concurrent requests share one computation; one on its way when its portfolio changes is answered but ' +
  'not kept, and a request after the change starts anew', async t => {
  const feed = fakeFeed()
  const cache = new PerformanceCache(feed)
  let release = (): void => {}
  let made = 0
  const slow = async (): Promise<PortfolioPerformance> => {
    const number = ++made
    if (number === 1) await new Promise<void>(resolve => { release = resolve })
    return { twr: number } as unknown as PortfolioPerformance
  }
  const first = cache.get('p1', '1y', slow)
  const joined = cache.get('p1', '1y', slow)
  await new Promise(resolve => setImmediate(resolve))
  t.equal(made, 1, 'one computation for both')
  feed.tell(changeOf('p1'))
  const after = cache.get('p1', '1y', slow)
  release()
  t.same([(await first).twr, (await joined).twr, (await after).twr], [1, 1, 2])
  t.equal((await cache.get('p1', '1y', slow)).twr, 2, 'the one started after the change is kept')
  feed.tell({ kind: 'all' })
  t.equal(cache.size, 0)
})

t.test('a change of every portfolio marks the computations on their way too', async t => {
  const feed = fakeFeed()
  const cache = new PerformanceCache(feed)
  let release = (): void => {}
  const held = async (): Promise<PortfolioPerformance> => {
    await new Promise<void>(resolve => { release = resolve })
    return { twr: 1 } as unknown as PortfolioPerformance
  }
  const answer = cache.get('p1', '1y', held)
  await new Promise(resolve => setImmediate(resolve))
  feed.tell({ kind: 'all' })
  release()
  t.equal((await answer).twr, 1)
  t.equal(cache.size, 0, 'not kept')
})

t.test('a failure is the caller\'s and never kept', async t => {
  const cache = new PerformanceCache(fakeFeed())
  await t.rejects(cache.get('p1', '1y', async () => { throw new Error('provider down') }), /provider down/)
  t.equal((await cache.get('p1', '1y', async () => ({ twr: 7 }) as unknown as PortfolioPerformance)).twr, 7)
})

t.test('while the feed does not hear the other instances nothing is kept nor answered from memory', async t => {
  const feed = fakeFeed()
  const cache = new PerformanceCache(feed)
  const { compute } = computations()
  t.equal(await get(cache, 'p1', '1y', compute('p1')), 1)
  feed.up = false
  t.equal(await get(cache, 'p1', '1y', compute('p1')), 2)
  t.equal(await get(cache, 'p1', '1y', compute('p1')), 3)
  t.equal(cache.size, 0)
  feed.up = true
  t.equal(await get(cache, 'p1', '1y', compute('p1')), 4)
  t.equal(await get(cache, 'p1', '1y', compute('p1')), 4)
})

t.test('kept until the next close (21:00 UTC) or an hour, whichever comes first', async t => {
  let now = Date.parse('2026-11-20T20:30:00.000Z')
  const cache = new PerformanceCache(fakeFeed(), { maxEntries: 10 }, NO_TELEMETRY, () => now)
  const { compute } = computations()
  t.equal(await get(cache, 'p1', '1y', compute('p1')), 1)
  now = Date.parse('2026-11-20T20:59:59.000Z')
  t.equal(await get(cache, 'p1', '1y', compute('p1')), 1)
  now = Date.parse('2026-11-20T21:00:01.000Z')
  t.equal(await get(cache, 'p1', '1y', compute('p1')), 2, 'the close is in')
  now = Date.parse('2026-11-20T22:00:00.000Z')
  t.equal(await get(cache, 'p1', '1y', compute('p1')), 2)
  now = Date.parse('2026-11-20T22:00:02.000Z')
  t.equal(await get(cache, 'p1', '1y', compute('p1')), 3, 'an hour at most')
  t.equal(nextClose(Date.parse('2026-11-20T21:00:00.000Z')), Date.parse('2026-11-21T21:00:00.000Z'))
  t.equal(nextClose(Date.parse('2026-11-20T03:00:00.000Z')), Date.parse('2026-11-20T21:00:00.000Z'))
})

t.test('the domain keeps performances only with a change feed, and not when turned off; its credential first',
  async t => {
    const feed = fakeFeed()
    let computed = 0
    const holdings = async (): Promise<Map<string, never[]>> => { computed++; return new Map([['p1', []]]) }
    const adapters = (changeFeed: unknown): DomainAdapters => ({
      store: {
        portfolios: {
          portfolioAndAssets: async (id: string) =>
            (id === 'p1' ? { portfolio: { id, userId: '1' }, assets: [] } : undefined)
        },
        assets: { holdingsOfPortfolios: holdings }
      } as unknown as DomainAdapters['store'],
      quotes: new OfflineQuotes(),
      aggregator: undefined as unknown as DomainAdapters['aggregator'],
      changeFeed: changeFeed as DomainAdapters['changeFeed'],
      log: capturedLog().log
    })
    const access = { portfolioScope: async () => ({ kind: 'every' }) } as unknown as Access
    const refused = { portfolioScope: async () => { throw new Error('API_KEY_INVALID') } } as unknown as Access
    const another = { portfolioScope: async () => ({ kind: 'owner', userId: '2' }) } as unknown as Access
    const kept = createDomain(adapters(feed))
    await t.rejects(kept.performances.performance(refused, 'p1', '1y', capturedLog().log), /API_KEY_INVALID/)
    t.equal(computed, 0, 'nothing read without the credential')
    await t.rejects(kept.performances.performance(another, 'p1', '1y', capturedLog().log), { code: 'NOT_FOUND' },
      'another user\'s portfolio is an unknown one')
    t.equal(computed, 0, 'nothing computed for another user')
    await kept.performances.performance(access, 'p1', '1y', capturedLog().log)
    await kept.performances.performance(access, 'p1', '1y', capturedLog().log)
    t.equal(computed, 1, 'kept')
    await t.rejects(kept.performances.performance(access, 'nope', '1y', capturedLog().log), { code: 'NOT_FOUND' })
    kept.close()
    t.equal(feed.listeners(), 0, 'closed with the domain')
    const off = createDomain(adapters(feed), undefined, undefined, { maxEntries: 0 })
    const uncached = [createDomain(adapters(undefined)), off]
    for (const domain of uncached) {
      await domain.performances.performance(access, 'p1', '1m', capturedLog().log)
      await domain.performances.performance(access, 'p1', '1m', capturedLog().log)
    }
    t.equal(computed, 5, 'no feed, or turned off: computed each time')
  })
