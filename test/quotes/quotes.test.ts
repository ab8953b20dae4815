import t from 'tap'
import { NO_TELEMETRY } from '../../src/observability/telemetry.js'
import { OfflineQuotes } from '../../src/quotes/offline.js'
import { CachedQuotes, MAX_ENTRIES } from '../../src/quotes/cache.js'
import { rangeCovering } from '../../src/quotes/brapi-ranges.js'
import { monthKey, monthsBetween, quotesOf, type QuoteProvider } from '../../src/quotes/provider.js'
import { silentLog as log } from '../helper.js'

t.test('offline quotes are deterministic per symbol and say they are simulated', async t => {
  const now = () => new Date('2026-11-22T12:00:00Z')
  const a = new OfflineQuotes(now)
  const b = new OfflineQuotes(now)
  const monthly = { interval: '1mo', since: '2024-01-01' } as const
  t.same(
    await a.history('PETR4', monthly),
    await b.history('petr4', monthly),
    'the same symbol, the same series'
  )
  t.not((await a.quote('PETR4')).price, (await a.quote('VALE3')).price)
  const { currency, closes } = await a.history('XPTO3', { interval: '1mo', since: '2025-11-01' })
  t.equal(currency, 'BRL')
  t.same(closes.map(c => c.date), monthsBetween('2025-11', '2026-11').map(month => `${month}-01`))
  t.equal((await a.quote('XPTO3')).price, closes.at(-1)?.close, 'the quote is the current month\'s close')
  t.match(a.source, /offline/)
  t.ok(closes.every(c => c.close > 0 && Number.isFinite(c.close)))
  const later = new OfflineQuotes(() => new Date('2027-03-02T00:00:00Z'))
  t.same(
    (await later.history('PETR4', monthly)).closes.slice(0, 10),
    (await a.history('PETR4', monthly)).closes.slice(0, 10),
    'past months never change as time passes'
  )
})

t.test('months and brapi ranges', async t => {
  t.same(monthsBetween('2025-11', '2026-02'), ['2025-11', '2025-12', '2026-01', '2026-02'])
  t.same(monthsBetween('2026-02', '2026-01'), [])
  t.equal(monthKey(new Date('2026-01-31T23:59:59Z')), '2026-01')
  const now = new Date('2026-11-22T00:00:00Z')
  t.equal(rangeCovering('2026-01', now), '1y')
  t.equal(rangeCovering('2025-01', now), '2y')
  t.equal(rangeCovering('2022-01', now), '5y')
  t.equal(rangeCovering('2017-01', now), '10y')
  t.equal(rangeCovering('2001-01', now), 'max')
})

t.test('the cache shares one call among concurrent requests and keeps quotes for the TTL', async t => {
  let calls = 0
  let fail = false
  const slow: QuoteProvider = {
    source: 'test',
    quote: async symbol => {
      calls++
      await new Promise(resolve => setTimeout(resolve, 20))
      if (fail) throw new Error('down')
      return { symbol, price: calls, currency: 'BRL', lastUpdate: new Date(0).toISOString() }
    },
    history: async () => { calls++; return undefined }
  }
  const start = Date.parse('2026-11-20T12:00:00.000Z')
  let clock = start
  const cache = new CachedQuotes(slow, 1000, NO_TELEMETRY, () => clock)
  const answers = await Promise.all(Array.from({ length: 50 }, async () => await cache.quote('PETR4', log)))
  t.equal(calls, 1, 'one upstream call for 50 concurrent requests')
  t.ok(answers.every(a => a?.price === 1))
  clock = start + 1000
  await cache.quote('PETR4', log)
  t.equal(calls, 1, 'still fresh at its TTL')
  clock = start + 1001
  t.equal((await cache.quote('PETR4', log))?.price, 2, 'expired once older than the TTL')
  await cache.history('PETR4', { interval: '1mo', since: '2026-01-01' }, log)
  await cache.history('PETR4', { interval: '1mo', since: '2026-01-01' }, log)
  t.equal(calls, 3, 'histories are cached too')
  fail = true
  clock = start + 5000
  await t.rejects(cache.quote('PETR4', log))
  fail = false
  t.equal((await cache.quote('PETR4', log))?.price, 5, 'a failure is not cached')
  t.equal(cache.source, 'test')
})

t.test('the cache asks for the quotes it lacks in one batch, and single quotes then find them', async t => {
  const asked: string[][] = []
  let single = 0
  const provider: QuoteProvider = {
    source: 'test',
    quote: async symbol => {
      single++
      return { symbol, price: 1, currency: 'BRL', lastUpdate: new Date(0).toISOString() }
    },
    quoteMany: async symbols => {
      asked.push([...symbols])
      return new Map(
        symbols.map(symbol => [
          symbol,
          symbol === 'GONE3'
            ? undefined
            : { symbol, price: symbol.length, currency: 'BRL', lastUpdate: new Date(0).toISOString() }
        ])
      )
    },
    history: async () => undefined
  }
  const cache = new CachedQuotes(provider, 60_000, NO_TELEMETRY, () => 0)
  await cache.quote('PETR4', log)
  const [first, second] = await Promise.all([
    cache.quoteMany(['PETR4', 'VALE3', 'ITUB4', 'VALE3', 'GONE3'], log),
    cache.quoteMany(['VALE3', 'ITUB4'], log)
  ])
  t.same(asked, [['VALE3', 'ITUB4', 'GONE3']], 'one batch of the symbols not cached; the concurrent request shares it')
  t.equal(single, 1, 'the cached symbol was not asked again')
  t.same([...first.keys()], ['PETR4', 'VALE3', 'ITUB4', 'GONE3'], 'each symbol once')
  t.equal(first.get('GONE3'), undefined)
  t.equal(second.get('ITUB4')?.price, 5)
  t.equal((await cache.quote('VALE3', log))?.price, 5, 'a single quote finds the batch\'s answer')
  t.equal(single, 1)
  const unbatched = {
    source: 'x',
    quote: async (symbol: string) => ({ symbol, price: 2, currency: 'BRL', lastUpdate: '' }),
    history: async () => undefined
  }
  t.same(await quotesOf(unbatched, ['A', 'A', 'B'], log), new Map([
    ['A', { symbol: 'A', price: 2, currency: 'BRL', lastUpdate: '' }],
    ['B', { symbol: 'B', price: 2, currency: 'BRL', lastUpdate: '' }]
  ]), 'a provider without batches: one call per distinct symbol')
})

t.test('offline: a dollar share in USD, the dollar\'s simulated rate and its history, no other currency', async t => {
  const offline = new OfflineQuotes(() => new Date('2026-11-22T12:00:00Z'))
  const apple = await offline.quote('aapl')
  t.match(apple, { symbol: 'AAPL', currency: 'USD' })
  t.equal((await offline.history('AAPL', { interval: '1mo', since: '2026-10-01' })).currency, 'USD')
  const rates = await offline.rates(['USD', 'EUR'])
  t.match(rates.get('USD'), { currency: 'USD', rate: /^\d\.\d{1,4}$/, lastUpdate: '2026-11-22T12:00:00.000Z' })
  t.equal(rates.get('EUR'), undefined)
  const history = await offline.rateHistory('USD', { interval: '1mo', since: '2026-09-01' })
  t.same(history?.map(observation => observation.date), ['2026-09-30', '2026-10-31', '2026-11-22'],
    'one rate a month, on its last day; today\'s for this month')
  t.equal(history?.at(-1)?.rate, rates.get('USD')?.rate, 'today\'s rate ends the history')
  t.equal(await offline.rateHistory('EUR', { interval: '1mo', since: '2026-09-01' }), undefined)
})

t.test('the cache keeps at most MAX_ENTRIES quotes, the least recently used dropped first', async t => {
  const asked: string[] = []
  const provider: QuoteProvider = {
    source: 'test',
    quote: async symbol => {
      asked.push(symbol)
      return { symbol, price: 1, currency: 'BRL', lastUpdate: new Date(0).toISOString() }
    },
    history: async () => undefined
  }
  const cache = new CachedQuotes(provider, 60_000)
  for (let i = 0; i < MAX_ENTRIES; i++) await cache.quote(`K${i}`, log)
  await cache.quote('K0', log)
  t.equal(asked.length, MAX_ENTRIES, 'all kept')
  await cache.quote('NEW', log)
  await cache.quote('K0', log)
  t.equal(asked.length, MAX_ENTRIES + 1, 'a recently used one is still kept')
  await cache.quote('K1', log)
  t.same(asked.slice(-2), ['NEW', 'K1'], 'the least recently used was dropped')
})

t.test('a TTL of 0 (QUOTES_TTL=0) turns the cache off: every request asks the provider', async t => {
  let calls = 0
  const provider: QuoteProvider = {
    source: 'test',
    quote: async symbol => {
      calls++
      return { symbol, price: calls, currency: 'BRL', lastUpdate: new Date(0).toISOString() }
    },
    history: async () => undefined
  }
  const cache = new CachedQuotes(provider, 0)
  t.equal((await cache.quote('PETR4', log))?.price, 1)
  t.equal((await cache.quote('PETR4', log))?.price, 2, 'asked again')
  t.equal((await cache.quoteMany(['PETR4', 'VALE3'], log)).get('VALE3')?.price, 4, 'and again')
})

t.test('symbols that become coins are asked again: their quote and every history, one on its way included',
  async t => {
    const asked: string[] = []
    let release = (): void => {}
    const provider: QuoteProvider = {
      source: 'test',
      quote: async symbol => {
        asked.push(`quote ${symbol}`)
        return { symbol, price: 1, currency: 'BRL', lastUpdate: new Date(0).toISOString() }
      },
      history: async (symbol, query) => {
        asked.push(`history ${symbol} ${query.interval}`)
        if (query.interval === '1d') await new Promise<void>(resolve => { release = resolve })
        return undefined
      },
      knowCoins: symbols => symbols.filter(symbol => symbol === 'BTC')
    }
    const cache = new CachedQuotes(provider, 60_000)
    await cache.quote('BTC', log)
    await cache.history('BTC', { interval: '1mo', since: '2026-01-01' }, log)
    await cache.quote('PETR4', log)
    const onItsWay = cache.history('BTC', { interval: '1d', since: '2026-01-01' }, log)
    await new Promise(resolve => setImmediate(resolve))
    t.same(cache.knowCoins(['BTC', 'PETR4']), ['BTC'])
    release()
    await onItsWay
    asked.length = 0
    await cache.quote('BTC', log)
    await cache.history('BTC', { interval: '1mo', since: '2026-01-01' }, log)
    const daily = cache.history('BTC', { interval: '1d', since: '2026-01-01' }, log)
    await new Promise(resolve => setImmediate(resolve))
    release()
    await daily
    await cache.quote('PETR4', log)
    t.same(asked, ['quote BTC', 'history BTC 1mo', 'history BTC 1d'], 'BTC asked again, PETR4 kept')
  })
