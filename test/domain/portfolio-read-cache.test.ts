import t from 'tap'
import { CachedPortfolioReads, type PortfolioReads } from '../../src/domain/portfolio-read-cache.js'
import { createDomain, type Access, type DomainAdapters } from '../../src/domain/index.js'
import { EVERY_PORTFOLIO } from '../../src/domain/access.js'
import { changeOf, fakeFeed } from '../fixtures/fake-feed.js'
import type { Versioned } from '../../src/http/entity-tag.js'
import type { PortfolioDetail } from '../../src/schemas/portfolio.js'
import { capturedLog } from '../fixtures/captured-log.js'

/**
 * A store whose reads count, each answering the portfolio's current version (absent: no such
 * portfolio); `hold` makes the next reads wait until released.
 */
function fakeStore () {
  const versions = new Map<string, number>([['p1', 1], ['p2', 1]])
  let gate: Promise<void> | undefined
  let release = (): void => {}
  const detailOf = (id: string, version: number): Versioned<PortfolioDetail> => ({
    value: { id, name: `v${version}`, description: null, userId: 'u', totalValue: version, assets: [] },
    version
  })
  const calls = { versionedDetail: 0, portfolioOnly: 0, portfolioAndAssets: 0 }
  async function current (id: string): Promise<number | undefined> {
    const version = versions.get(id)
    await gate
    return version
  }
  const store: PortfolioReads = {
    versionedDetail: async id => {
      calls.versionedDetail++
      const version = await current(id)
      return version === undefined ? undefined : detailOf(id, version)
    },
    portfolioOnly: async id => {
      calls.portfolioOnly++
      const version = await current(id)
      if (version === undefined) return undefined
      const { assets: _assets, ...portfolio } = detailOf(id, version).value
      return { ...portfolio, createdAt: 'now', updatedAt: 'now' }
    },
    portfolioAndAssets: async id => {
      calls.portfolioAndAssets++
      const version = await current(id)
      if (version === undefined) return undefined
      const portfolio = { ...detailOf(id, version).value, createdAt: 'now', updatedAt: 'now' }
      return { portfolio, assets: [] }
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

t.test('reads are kept until their portfolio changes; each portfolio and kind on its own', async t => {
  const { store, calls, versions } = fakeStore()
  const feed = fakeFeed()
  const reads = new CachedPortfolioReads(store, feed)
  t.equal((await reads.versionedDetail('p1'))?.version, 1)
  t.equal((await reads.versionedDetail('p1'))?.version, 1)
  t.equal(calls.versionedDetail, 1, 'the second read is answered from memory')
  t.equal((await reads.portfolioOnly('p1'))?.totalValue, 1)
  t.equal((await reads.portfolioAndAssets('p1'))?.portfolio.name, 'v1')
  await reads.portfolioOnly('p1')
  await reads.portfolioAndAssets('p1')
  t.same(calls, { versionedDetail: 1, portfolioOnly: 1, portfolioAndAssets: 1 })
  await reads.versionedDetail('p2')
  t.equal(reads.size, 4)

  versions.set('p1', 2)
  feed.tell(changeOf('p1'))
  t.equal(reads.size, 1, 'every read of p1 dropped, p2 kept')
  t.equal((await reads.versionedDetail('p1'))?.version, 2)
  t.equal((await reads.portfolioOnly('p1'))?.totalValue, 2)
  t.equal((await reads.portfolioAndAssets('p1'))?.portfolio.name, 'v2')
  await reads.versionedDetail('p2')
  t.equal(calls.versionedDetail, 3, 'p2 still from memory')

  versions.set('p2', 2)
  feed.tell({ kind: 'all' })
  t.equal(reads.size, 0, 'everything dropped')
  t.equal((await reads.versionedDetail('p2'))?.version, 2)

  reads.close()
  t.equal(feed.listeners(), 0, 'closed: no longer listening')
  t.equal(reads.size, 0)
})

t.test('a portfolio that does not exist is never kept: its creation tells nothing', async t => {
  const { store, calls, versions } = fakeStore()
  const reads = new CachedPortfolioReads(store, fakeFeed())
  t.equal(await reads.versionedDetail('p3'), undefined)
  versions.set('p3', 1)
  t.equal((await reads.versionedDetail('p3'))?.version, 1, 'created meanwhile: read from the store')
  t.equal(calls.versionedDetail, 2)
})

t.test('a read on its way when its portfolio changes is answered but not kept', async t => {
  const { store, calls, versions, hold, release } = fakeStore()
  const feed = fakeFeed()
  const reads = new CachedPortfolioReads(store, feed)
  hold()
  const before = reads.versionedDetail('p1')
  const other = reads.versionedDetail('p2')
  const all = reads.portfolioOnly('p2')
  versions.set('p1', 2)
  feed.tell(changeOf('p1'))
  release()
  t.equal((await before)?.version, 1, 'the read answers what it read')
  await other
  await all
  t.equal((await reads.versionedDetail('p1'))?.version, 2, 'the next read goes to the store')
  t.equal(calls.versionedDetail, 3)
  await reads.versionedDetail('p2')
  t.equal(calls.versionedDetail, 3, 'a read of another portfolio was kept')

  hold()
  const duringAll = reads.portfolioAndAssets('p2')
  feed.tell({ kind: 'all' })
  release()
  await duringAll
  await reads.portfolioAndAssets('p2')
  t.equal(calls.portfolioAndAssets, 2, 'a read on its way when everything changed is not kept either')
})

t.test('while the feed\'s link is down nothing is kept nor answered from memory; back up, it keeps again', async t => {
  const { store, calls, versions, hold, release } = fakeStore()
  const feed = fakeFeed()
  const reads = new CachedPortfolioReads(store, feed)
  await reads.versionedDetail('p1')
  feed.up = false
  versions.set('p1', 2)
  t.equal((await reads.versionedDetail('p1'))?.version, 2, 'a change no one was told of is read from the store')
  t.equal(reads.size, 0, 'what was kept is dropped')
  await reads.versionedDetail('p1')
  t.equal(calls.versionedDetail, 3, 'nothing kept while down')

  feed.up = true
  hold()
  const dropping = reads.versionedDetail('p1')
  feed.up = false
  release()
  await dropping
  feed.up = true
  t.equal(reads.size, 0, 'a read that ended with the link down is not kept')
  await reads.versionedDetail('p1')
  await reads.versionedDetail('p1')
  t.equal(calls.versionedDetail, 5, 'kept again once proven')
})

t.test('reads kept weigh at most the configured weight: one each, plus one per asset held', async t => {
  const { store, calls } = fakeStore()
  const asset = { id: 'a', name: 'A', symbol: 'A', quantity: 1, price: 1 }
  const big: PortfolioReads = {
    ...store,
    versionedDetail: async id => {
      const read = await store.versionedDetail(id)
      return read === undefined ? undefined : { ...read, value: { ...read.value, assets: Array(8).fill(asset) } }
    }
  }
  const reads = new CachedPortfolioReads(big, fakeFeed(), { maxEntries: 10, maxWeight: 11, ttlMs: 60_000 })
  await reads.versionedDetail('p1')
  await reads.portfolioOnly('p1')
  await reads.portfolioAndAssets('p1')
  t.equal(reads.size, 3, '9 + 1 + 1')
  await reads.portfolioOnly('p2')
  t.equal(reads.size, 3, 'the least recently used dropped to make room')
  await reads.portfolioOnly('p1')
  t.equal(calls.portfolioOnly, 2, 'a light read still kept')
  await reads.versionedDetail('p1')
  t.equal(calls.versionedDetail, 2, 'the heavy one, least recently used, was dropped')
})

t.test('a kept read is answered at most for the configured time, whatever the feed says', async t => {
  const { store, calls } = fakeStore()
  const reads = new CachedPortfolioReads(store, fakeFeed(), { maxEntries: 10, maxWeight: 100, ttlMs: 1 })
  await reads.versionedDetail('p1')
  for (let attempt = 0; attempt < 400 && calls.versionedDetail === 1; attempt++) {
    await new Promise(resolve => setTimeout(resolve, 5))
    await reads.versionedDetail('p1')
  }
  t.equal(calls.versionedDetail, 2, 'read again once too old, without any change told')
})

t.test('the domain reads through the cache only with a change feed, and not when it is turned off', async t => {
  const { store, calls } = fakeStore()
  const feed = fakeFeed()
  const adapters = (changeFeed: unknown): DomainAdapters => ({
    store: { portfolios: store } as unknown as DomainAdapters['store'],
    quotes: undefined as unknown as DomainAdapters['quotes'],
    aggregator: undefined as unknown as DomainAdapters['aggregator'],
    changeFeed: changeFeed as DomainAdapters['changeFeed'],
    log: capturedLog().log
  })
  const access = { portfolioScope: async () => EVERY_PORTFOLIO } as unknown as Access
  const cached = createDomain(adapters(feed))
  await cached.portfolios.taggedDetail(access, 'p1')
  await cached.portfolios.value(access, 'p1')
  await cached.portfolios.taggedDetail(access, 'p1')
  t.equal(calls.versionedDetail, 1)
  t.equal(feed.listeners(), 1)
  cached.close()
  t.equal(feed.listeners(), 0, 'closed with the domain')

  const uncached = createDomain(adapters(undefined))
  await uncached.portfolios.taggedDetail(access, 'p1')
  await uncached.portfolios.taggedDetail(access, 'p1')
  t.equal(calls.versionedDetail, 3, 'no feed: every read goes to the store')
  const off = createDomain(adapters(feed), undefined, { maxEntries: 0, maxWeight: 100, ttlMs: 1000 })
  await off.portfolios.portfolioAndAssets(access, 'p1')
  await off.portfolios.portfolioAndAssets(access, 'p1')
  t.equal(calls.portfolioAndAssets, 2, 'turned off')
  const noTime = createDomain(adapters(feed), undefined, { maxEntries: 10, maxWeight: 100, ttlMs: 0 })
  await noTime.portfolios.portfolioAndAssets(access, 'p1')
  await noTime.portfolios.portfolioAndAssets(access, 'p1')
  t.equal(calls.portfolioAndAssets, 4, 'no time to live: turned off too')
  t.equal(feed.listeners(), 0)
})

t.test('a value under a user\'s token is checked against the kept read\'s owner: no statement of its own', async t => {
  const { store, calls } = fakeStore()
  const feed = fakeFeed()
  // No `ownersOf`: a check of the owner on the store would throw.
  const domain = createDomain({
    store: { portfolios: store } as unknown as DomainAdapters['store'],
    quotes: undefined as unknown as DomainAdapters['quotes'],
    aggregator: undefined as unknown as DomainAdapters['aggregator'],
    changeFeed: feed as unknown as DomainAdapters['changeFeed'],
    log: capturedLog().log
  })
  t.teardown(() => { domain.close() })
  const tokenOf = (userId: string): Access =>
    ({ portfolioScope: async () => ({ kind: 'owner', userId, endsAt: Date.now() + 60_000 }) }) as unknown as Access
  t.same(await domain.portfolios.value(tokenOf('u'), 'p1'),
    { portfolioId: 'p1', totalValue: 1, currency: 'BRL', lastUpdate: 'now' })
  t.equal((await domain.portfolios.value(tokenOf('u'), 'p1')).totalValue, 1)
  t.equal(calls.portfolioOnly, 1, 'the second answered from memory')
  await t.rejects(domain.portfolios.value(tokenOf('someone-else'), 'p1'), { code: 'BFF_NOT_FOUND' },
    'another user\'s is not found')
  t.equal(calls.portfolioOnly, 1)
})
