import t from 'tap'
import { LiveValuations } from '../../src/domain/live-valuations.js'
import { QuoteRefresher } from '../../src/domain/quote-refresher.js'
import { EVERY_PORTFOLIO, type Access } from '../../src/domain/access.js'
import type { ProviderQuote, QuoteProvider } from '../../src/quotes/provider.js'
import type { PortfolioRepository } from '../../src/store/portfolios.js'
import { Listeners, type PortfolioChange } from '../../src/change-feed/change-events.js'
import type { Asset } from '../../src/schemas/asset.js'
import { capturedLog } from '../fixtures/captured-log.js'
import { until } from '../fixtures/until.js'
import { RECORDED_BY_HAND } from '../fixtures/portfolios.js'

const access: Access = {
  apiKey: async () => {},
  principal: async () => { throw new Error('no') },
  portfolioScope: async () => EVERY_PORTFOLIO,
  caller: () => 'k'
}

/** A provider whose prices a test sets; it records each request's tickers, and fails when told. */
function provider (withRefresh: boolean) {
  const prices = new Map<string, number>()
  const requests: string[][] = []
  let failing = false
  const answer = async (symbols: readonly string[]): Promise<Map<string, ProviderQuote | undefined>> => {
    requests.push([...symbols])
    if (failing) throw new Error('provider down')
    return new Map(symbols.map(symbol => {
      const price = prices.get(symbol)
      const lastUpdate = '2026-01-01T00:00:00.000Z'
      return [symbol, price === undefined ? undefined : { symbol, price, currency: 'BRL', lastUpdate }]
    }))
  }
  const quotes: QuoteProvider = {
    source: 'test',
    quote: async (symbol: string) => (await answer([symbol])).get(symbol),
    quoteMany: answer,
    ...(withRefresh ? { refresh: answer } : {}),
    history: async () => undefined
  }
  return { prices, requests, quotes, fail: (value: boolean) => { failing = value } }
}

const asset = (symbol: string, quantity = 1): Asset => ({
  id: symbol,
  name: symbol,
  symbol,
  type: 'STOCK',
  quantity,
  price: 10,
  totalValue: quantity * 10,
  portfolioId: 'p1',
  eventsUnapplied: false,
  eventsAsOf: null,
  createdAt: '',
  updatedAt: '',
  ...RECORDED_BY_HAND
})

t.test('the refresher: one request for the symbols new to it, one per refresh for all; moves told; ' +
  'a failed refresh leaves them unquoted; the last release stops it', async t => {
  for (const withRefresh of [true, false]) {
    const { prices, requests, quotes, fail } = provider(withRefresh)
    prices.set('AAAA3', 10)
    prices.set('BBBB3', 20)
    const { log, lines } = capturedLog()
    const refresher = new QuoteRefresher(quotes, 60_000, log)
    const moves: string[][] = []
    refresher.onMove(tickers => { moves.push([...tickers].sort()) })
    await Promise.all([refresher.acquire(['AAAA3', 'BBBB3']), refresher.acquire(['AAAA3'])])
    t.same(requests, [['AAAA3', 'BBBB3']], 'one request for the new symbols; one holding them already asks nothing')
    t.equal(refresher.get('AAAA3')?.price, 10)
    await refresher.refresh()
    t.same(moves, [], 'nothing moved')
    prices.set('BBBB3', 21)
    await refresher.refresh()
    t.same(requests.at(-1), ['AAAA3', 'BBBB3'], 'every watched symbol in one request')
    t.same(moves, [['BBBB3']])
    fail(true)
    await refresher.refresh()
    t.same(moves.at(-1), ['AAAA3', 'BBBB3'], 'a failed refresh: every symbol unquoted')
    t.equal(refresher.get('AAAA3'), undefined)
    t.match(lines, [{ msg: 'quote refresh failed: watched symbols unquoted' }])
    fail(false)
    refresher.release(['AAAA3'])
    t.equal(refresher.size, 2, 'still held once')
    refresher.release(['AAAA3', 'BBBB3'])
    t.equal(refresher.size, 0)
    const asked = requests.length
    await refresher.refresh()
    t.equal(requests.length, asked, 'nothing watched, nothing asked')
  }
})

t.test('live valuations: a first read that fails refuses the stream and leaves nothing; a later read that ' +
  'fails is logged and the stream stays; every portfolio read again on `all`; a closed instance refuses', async t => {
  const { quotes } = provider(true)
  let reads = 0
  let failing = true
  const repository = {
    portfolioAndAssets: async () => {
      reads++
      if (failing) throw new Error('store down')
      return { portfolio: {}, assets: [asset('AAAA3', reads)] }
    }
  } as unknown as PortfolioRepository
  const changes = new Listeners<PortfolioChange>()
  const feed = {
    onPortfolioChange: (listener: (change: PortfolioChange) => void) => changes.add(listener),
    proven: () => true
  }
  const { log, lines } = capturedLog()
  const options = { minIntervalMs: 0, streamsPerCaller: 5, refreshIntervalMs: 1 }
  const live = new LiveValuations(repository, quotes, feed, log, options)
  await t.rejects(live.open(access, 'p1'), /store down/)
  t.same(live.watched, { portfolios: 0, symbols: 0 })
  t.equal(changes.size, 0, 'no listener left on the feed')

  failing = false
  const stream = await live.open(access, 'p1')
  t.match((await stream.next()).value, { valuation: { bookValue: 20 } })
  failing = true
  changes.emit({ kind: 'portfolio', portfolioId: 'p1', deleted: false })
  const logged = (): boolean => lines.some(line => line.msg === 'valuation not refreshed after a change')
  await until('the failed read logged', logged, () => lines)
  t.match(lines, [{ msg: 'valuation not refreshed after a change', portfolioId: 'p1' }])
  failing = false
  changes.emit({ kind: 'all' })
  t.match((await stream.next()).value, { valuation: { bookValue: 40 } }, 'read again on `all`')
  live.close()
  t.same(await stream.next(), { done: true, value: undefined }, 'closing ends the streams')
  await t.rejects(live.open(access, 'p1'), /Instância em desligamento/)
  await t.rejects(live.open(access, 'x'.repeat(65)), /Portfolio não encontrado/, 'an id no portfolio can have')
})

t.test('while the change feed is unproven each watched portfolio is read again at the bounded interval; ' +
  'proven, only the feed\'s changes read it', async t => {
  let reads = 0
  let quantity = 1
  const repository = {
    portfolioAndAssets: async () => {
      reads++
      return { portfolio: { id: 'p1' }, assets: [asset('AAAA3', quantity)] }
    }
  } as unknown as PortfolioRepository
  const changes = new Listeners<PortfolioChange>()
  let proven = false
  /** How often the rereads' timer asked the feed: nothing else here asks it. */
  let asked = 0
  const feed = {
    onPortfolioChange: (listener: (change: PortfolioChange) => void) => changes.add(listener),
    proven: () => { asked++; return proven }
  }
  // The rereads' timer does not hold the process open (an app's server does): this does here.
  const alive = setInterval(() => {}, 1000)
  t.teardown(() => { clearInterval(alive) })
  const options = { minIntervalMs: 0, streamsPerCaller: 5, refreshIntervalMs: 60_000, unprovenRereadMs: 20 }
  const live = new LiveValuations(repository, provider(true).quotes, feed, capturedLog().log, options)
  t.teardown(() => { live.close() })
  const stream = await live.open(access, 'p1')
  t.match((await stream.next()).value, { kind: 'valuation', valuation: { bookValue: 10 } })
  quantity = 3
  const next = await stream.next()
  t.match(next.value, { kind: 'valuation', valuation: { bookValue: 30 } }, 'moved without any change told')
  proven = true
  // A read the timer started is counted as it starts and done within its tick (nothing here waits
  // on I/O): once the timer has asked the proven feed, the reads are settled.
  const ticks = async (count: number): Promise<void> => {
    const from = asked
    await until(`${count} ticks of the rereads' timer`, () => asked >= from + count, () => ({ asked, from, reads }))
  }
  await ticks(1)
  const settled = reads
  await ticks(3)
  t.equal(reads, settled, 'proven: three ticks of the timer read nothing')
  await stream.return?.()
  t.same(live.watched, { portfolios: 0, symbols: 0 })
})

t.test('live valuations in reais: a dollar symbol converted with its rate, moved by the rate too; a CRYPTO ' +
  'asset told to the provider as a coin', async t => {
  const requests: string[] = []
  let rate = '5'
  const coins: string[] = []
  const quotes: QuoteProvider = {
    source: 'test',
    quote: async symbol => ({ symbol, price: 10, currency: 'USD', lastUpdate: '2026-01-01T00:00:00.000Z' }),
    history: async () => undefined,
    rates: async currencies => {
      requests.push(`rates ${currencies.join()}`)
      return new Map(currencies.map(currency => [currency, { currency, rate, lastUpdate: '2026-01-01T00:00:00.000Z' }]))
    },
    knowCoins: symbols => { coins.push(...symbols); return [] }
  }
  const repository = {
    portfolioAndAssets: async () =>
      ({ portfolio: {}, assets: [asset('AAPL', 2), { ...asset('SOL', 1), type: 'CRYPTO' }] })
  } as unknown as PortfolioRepository
  const feed = { onPortfolioChange: () => () => {}, proven: () => true }
  const live = new LiveValuations(repository, quotes, feed, capturedLog().log, {
    minIntervalMs: 0, streamsPerCaller: 5, refreshIntervalMs: 1
  })
  t.teardown(() => { live.close() })
  const stream = await live.open(access, 'p1')
  t.match((await stream.next()).value, { valuation: { bookValue: 30, marketValue: 150, unquotedSymbols: [] } },
    '2 × US$ 10 × 5 + 1 × US$ 10 × 5')
  t.same(coins, ['SOL'])
  rate = '5.5'
  // The refresher's timer is unref'd: something must keep the process up while the next refresh comes.
  const awake = setInterval(() => {}, 100)
  t.teardown(() => { clearInterval(awake) })
  t.match((await stream.next()).value, { valuation: { marketValue: 165 } }, 'the dollar moved: the valuation did')
  t.ok(requests.length >= 2 && requests.every(request => request === 'rates USD'), 'one rate request per refresh')
})
