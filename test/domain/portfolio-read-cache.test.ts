import t from 'tap'
import { CachedPortfolioReads, type PortfolioReads } from '../../src/domain/portfolio-read-cache.js'
import { createDomain, type Access, type DomainAdapters } from '../../src/domain/index.js'
import { EVERY_PORTFOLIO } from '../../src/domain/access.js'
import { changeOf, fakeFeed } from '../fixtures/fake-feed.js'
import type { PortfolioAndAssets } from '../../src/domain/ports.js'
import { versionTag } from '../../src/http/entity-tag.js'
import { NO_TELEMETRY, type CacheName, type Telemetry } from '../../src/observability/telemetry.js'
import { capturedLog } from '../fixtures/captured-log.js'

/**
 * A store whose reads count, each answering the portfolio's current version (absent: no such
 * portfolio) with `assets` assets; `hold` makes the next reads wait until released.
 */
function fakeStore (assets = 0) {
  const versions = new Map<string, number>([['p1', 1], ['p2', 1]])
  let gate: Promise<void> | undefined
  let release = (): void => {}
  const asset = { id: 'a', name: 'A', symbol: 'A', type: 'STOCK', quantity: 1, price: 1, totalValue: 1 }
  const calls = { portfolioAndAssets: 0 }
  const store: PortfolioReads = {
    portfolioAndAssets: async id => {
      calls.portfolioAndAssets++
      const version = versions.get(id)
      await gate
      if (version === undefined) return undefined
      const portfolio = {
        id, name: `v${version}`, description: null, userId: 'u', totalValue: version, createdAt: 'now', updatedAt: 'now'
      }
      return { portfolio, assets: Array(assets).fill({ ...asset, portfolioId: id }), version } as PortfolioAndAssets
    }
  }
  return {
    store,
    calls,
    versions,
    hold: () => { gate = new Promise(resolve => { release = () => { gate = undefined; resolve() } }) },
    release: () => { release() }
  }
}

const version = async (reads: CachedPortfolioReads, id: string): Promise<number | undefined> =>
  (await reads.portfolioAndAssets(id))?.version

/** A domain over the fake store's reads (and nothing else of a store), with `changeFeed`. */
function domainOver (store: PortfolioReads, changeFeed: unknown, readCache?: Parameters<typeof createDomain>[2]) {
  const adapters: DomainAdapters = {
    store: { portfolios: store } as unknown as DomainAdapters['store'],
    quotes: undefined as unknown as DomainAdapters['quotes'],
    aggregator: undefined as unknown as DomainAdapters['aggregator'],
    changeFeed: changeFeed as DomainAdapters['changeFeed'],
    log: capturedLog().log
  }
  return createDomain(adapters, undefined, readCache)
}

const everyPortfolio = { portfolioScope: async () => EVERY_PORTFOLIO } as unknown as Access

t.test('reads are kept until their portfolio changes, each portfolio on its own', async t => {
  const { store, calls, versions } = fakeStore()
  const feed = fakeFeed()
  const reads = new CachedPortfolioReads(store, feed)
  t.equal(await version(reads, 'p1'), 1)
  t.equal(await version(reads, 'p1'), 1)
  t.equal(calls.portfolioAndAssets, 1, 'the second read is answered from memory')
  await reads.portfolioAndAssets('p2')
  t.equal(reads.size, 2)

  versions.set('p1', 2)
  feed.tell(changeOf('p1'))
  t.equal(reads.size, 1, 'p1 dropped, p2 kept')
  t.equal(await version(reads, 'p1'), 2)
  await reads.portfolioAndAssets('p2')
  t.equal(calls.portfolioAndAssets, 3, 'p2 still from memory')

  versions.set('p2', 2)
  feed.tell({ kind: 'all' })
  t.equal(reads.size, 0, 'everything dropped')
  t.equal(await version(reads, 'p2'), 2)

  reads.close()
  t.equal(feed.listeners(), 0, 'closed: no longer listening')
  t.equal(reads.size, 0)
})

t.test('one read of a portfolio makes its detail, its tag, its value, the portfolio alone and the valuations\' ' +
  'inputs', async t => {
  const { store, calls, versions } = fakeStore(2)
  const feed = fakeFeed()
  const domain = domainOver(store, feed)
  t.teardown(() => { domain.close() })
  const detail = await domain.portfolios.taggedDetail(everyPortfolio, 'p1')
  t.match(detail, { value: { id: 'p1', name: 'v1', totalValue: 1, assets: [{ symbol: 'A' }, { symbol: 'A' }] } })
  t.equal(detail.etag, versionTag('p1', 1), 'the tag of the read\'s version')
  t.same(await domain.portfolios.value(everyPortfolio, 'p1'),
    { portfolioId: 'p1', totalValue: 1, currency: 'BRL', lastUpdate: 'now' })
  t.equal((await domain.portfolios.portfolioOnly(everyPortfolio, 'p1')).name, 'v1')
  t.equal((await domain.portfolios.portfolioAndAssets(everyPortfolio, 'p1')).assets.length, 2)
  t.equal(calls.portfolioAndAssets, 1, 'one statement for all four')
  versions.set('p1', 2)
  feed.tell(changeOf('p1'))
  t.equal((await domain.portfolios.taggedDetail(everyPortfolio, 'p1')).etag, versionTag('p1', 2))
  t.equal((await domain.portfolios.value(everyPortfolio, 'p1')).totalValue, 2)
  t.equal(calls.portfolioAndAssets, 2)
})

t.test('concurrent reads of a portfolio share one statement; its lookups are counted as portfolio_reads', async t => {
  const { store, calls, hold, release } = fakeStore()
  const lookups: Array<[CacheName, boolean]> = []
  const telemetry: Telemetry = { ...NO_TELEMETRY, cache: (cache, hit) => { lookups.push([cache, hit]) } }
  const reads = new CachedPortfolioReads(store, fakeFeed(), undefined, telemetry)
  hold()
  const both = Promise.all([version(reads, 'p1'), version(reads, 'p1')])
  release()
  t.same(await both, [1, 1])
  await reads.portfolioAndAssets('p1')
  t.equal(calls.portfolioAndAssets, 1)
  t.same(lookups, [['portfolio_reads', false], ['portfolio_reads', false], ['portfolio_reads', true]])
})

t.test('a portfolio that does not exist is never kept: its creation tells nothing', async t => {
  const { store, calls, versions } = fakeStore()
  const reads = new CachedPortfolioReads(store, fakeFeed())
  t.equal(await reads.portfolioAndAssets('p3'), undefined)
  versions.set('p3', 1)
  t.equal(await version(reads, 'p3'), 1, 'created meanwhile: read from the store')
  t.equal(calls.portfolioAndAssets, 2)
})

t.test('a read on its way when its portfolio changes is answered but not kept', async t => {
  const { store, calls, versions, hold, release } = fakeStore()
  const feed = fakeFeed()
  const reads = new CachedPortfolioReads(store, feed)
  hold()
  const before = version(reads, 'p1')
  const other = version(reads, 'p2')
  versions.set('p1', 2)
  feed.tell(changeOf('p1'))
  release()
  t.equal(await before, 1, 'the read answers what it read')
  await other
  t.equal(await version(reads, 'p1'), 2, 'the next read goes to the store')
  t.equal(calls.portfolioAndAssets, 3)
  await reads.portfolioAndAssets('p2')
  t.equal(calls.portfolioAndAssets, 3, 'a read of another portfolio was kept')

  feed.tell(changeOf('p2'))
  hold()
  const duringAll = reads.portfolioAndAssets('p2')
  feed.tell({ kind: 'all' })
  release()
  await duringAll
  await reads.portfolioAndAssets('p2')
  t.equal(calls.portfolioAndAssets, 5, 'a read on its way when everything changed is not kept either')
})

t.test('while the feed\'s link is down nothing is kept nor answered from memory; back up, it keeps again', async t => {
  const { store, calls, versions, hold, release } = fakeStore()
  const feed = fakeFeed()
  const reads = new CachedPortfolioReads(store, feed)
  await reads.portfolioAndAssets('p1')
  feed.up = false
  versions.set('p1', 2)
  t.equal(await version(reads, 'p1'), 2, 'a change no one was told of is read from the store')
  t.equal(reads.size, 0, 'what was kept is dropped')
  await reads.portfolioAndAssets('p1')
  t.equal(calls.portfolioAndAssets, 3, 'nothing kept while down')

  feed.up = true
  hold()
  const dropping = reads.portfolioAndAssets('p1')
  feed.up = false
  release()
  await dropping
  feed.up = true
  t.equal(reads.size, 0, 'a read that ended with the link down is not kept')
  await reads.portfolioAndAssets('p1')
  await reads.portfolioAndAssets('p1')
  t.equal(calls.portfolioAndAssets, 5, 'kept again once proven')
})

t.test('reads kept weigh at most the configured weight: one each, plus one per asset held', async t => {
  const { store: light } = fakeStore()
  const { store: heavy } = fakeStore(8)
  const store: PortfolioReads = {
    portfolioAndAssets: async id => await (id === 'p1' ? heavy : light).portfolioAndAssets(id)
  }
  const calls = { p1: 0, p2: 0 }
  const counted: PortfolioReads = {
    portfolioAndAssets: async id => { calls[id as 'p1' | 'p2']++; return await store.portfolioAndAssets(id) }
  }
  const reads = new CachedPortfolioReads(counted, fakeFeed(), { maxEntries: 10, maxWeight: 11, ttlMs: 60_000 })
  await reads.portfolioAndAssets('p1')
  await reads.portfolioAndAssets('p2')
  t.equal(reads.size, 2, '9 + 1')
  await reads.portfolioAndAssets('p2')
  t.equal(calls.p2, 1, 'a light read kept')
  const more: PortfolioReads = { portfolioAndAssets: async () => await heavy.portfolioAndAssets('p1') }
  const crowded = new CachedPortfolioReads(more, fakeFeed(), { maxEntries: 10, maxWeight: 11, ttlMs: 60_000 })
  await crowded.portfolioAndAssets('a')
  await crowded.portfolioAndAssets('b')
  t.equal(crowded.size, 1, 'two of 9 do not fit in 11: the least recently used made room')
})

t.test('a kept read is answered at most for the configured time, whatever the feed says', async t => {
  const { store, calls } = fakeStore()
  const reads = new CachedPortfolioReads(store, fakeFeed(), { maxEntries: 10, maxWeight: 100, ttlMs: 1 })
  await reads.portfolioAndAssets('p1')
  for (let attempt = 0; attempt < 400 && calls.portfolioAndAssets === 1; attempt++) {
    await new Promise(resolve => setTimeout(resolve, 5))
    await reads.portfolioAndAssets('p1')
  }
  t.equal(calls.portfolioAndAssets, 2, 'read again once too old, without any change told')
})

t.test('the domain reads through the cache only with a change feed, and not when it is turned off', async t => {
  const { store, calls } = fakeStore()
  const feed = fakeFeed()
  const cached = domainOver(store, feed)
  await cached.portfolios.taggedDetail(everyPortfolio, 'p1')
  await cached.portfolios.value(everyPortfolio, 'p1')
  await cached.portfolios.taggedDetail(everyPortfolio, 'p1')
  t.equal(calls.portfolioAndAssets, 1)
  t.equal(feed.listeners(), 1)
  cached.close()
  t.equal(feed.listeners(), 0, 'closed with the domain')

  const uncached = domainOver(store, undefined)
  await uncached.portfolios.taggedDetail(everyPortfolio, 'p1')
  await uncached.portfolios.taggedDetail(everyPortfolio, 'p1')
  t.equal(calls.portfolioAndAssets, 3, 'no feed: every read goes to the store')
  const off = domainOver(store, feed, { maxEntries: 0, maxWeight: 100, ttlMs: 1000 })
  await off.portfolios.portfolioAndAssets(everyPortfolio, 'p1')
  await off.portfolios.portfolioAndAssets(everyPortfolio, 'p1')
  t.equal(calls.portfolioAndAssets, 5, 'turned off')
  const noTime = domainOver(store, feed, { maxEntries: 10, maxWeight: 100, ttlMs: 0 })
  await noTime.portfolios.portfolioAndAssets(everyPortfolio, 'p1')
  await noTime.portfolios.portfolioAndAssets(everyPortfolio, 'p1')
  t.equal(calls.portfolioAndAssets, 7, 'no time to live: turned off too')
  t.equal(feed.listeners(), 0)
})

t.test('a value under a user\'s token is checked against the kept read\'s owner: no statement of its own', async t => {
  const { store, calls } = fakeStore()
  // No `ownersOf`: a check of the owner on the store would throw.
  const domain = domainOver(store, fakeFeed())
  t.teardown(() => { domain.close() })
  const tokenOf = (userId: string): Access =>
    ({ portfolioScope: async () => ({ kind: 'owner', userId, endsAt: Date.now() + 60_000 }) }) as unknown as Access
  t.same(await domain.portfolios.value(tokenOf('u'), 'p1'),
    { portfolioId: 'p1', totalValue: 1, currency: 'BRL', lastUpdate: 'now' })
  t.equal((await domain.portfolios.value(tokenOf('u'), 'p1')).totalValue, 1)
  t.equal(calls.portfolioAndAssets, 1, 'the second answered from memory')
  await t.rejects(domain.portfolios.value(tokenOf('someone-else'), 'p1'), { code: 'BFF_NOT_FOUND' },
    'another user\'s is not found')
  t.equal(calls.portfolioAndAssets, 1)
})
