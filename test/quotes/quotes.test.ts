import t from 'tap'
import { NO_TELEMETRY } from '../../src/telemetry.js'
import { OfflineQuotes } from '../../src/quotes/offline.js'
import { CachedQuotes } from '../../src/quotes/cache.js'
import { rangeCovering } from '../../src/quotes/brapi.js'
import { monthKey, monthsBetween, type QuoteProvider } from '../../src/quotes/provider.js'
import { silentLog as log } from '../helper.js'

t.test('offline quotes are deterministic per symbol and say they are simulated', async t => {
  const now = () => new Date('2026-11-22T12:00:00Z')
  const a = new OfflineQuotes(now)
  const b = new OfflineQuotes(now)
  t.same(await a.monthlyCloses('PETR4', '2024-01'), await b.monthlyCloses('petr4', '2024-01'), 'the same symbol, the same series')
  t.not((await a.quote('PETR4')).price, (await a.quote('VALE3')).price)
  const closes = await a.monthlyCloses('XPTO3', '2025-11')
  t.same(closes.map(c => c.month), monthsBetween('2025-11', '2026-11'))
  t.equal((await a.quote('XPTO3')).price, closes.at(-1)?.close, 'the quote is the current month\'s close')
  t.match(a.source, /offline/)
  t.ok(closes.every(c => c.close > 0 && Number.isFinite(c.close)))
  const later = new OfflineQuotes(() => new Date('2027-03-02T00:00:00Z'))
  t.same((await later.monthlyCloses('PETR4', '2024-01')).slice(0, 10), (await a.monthlyCloses('PETR4', '2024-01')).slice(0, 10), 'past months never change as time passes')
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
    monthlyCloses: async () => { calls++; return [] }
  }
  let clock = 0
  const cache = new CachedQuotes(slow, 1000, NO_TELEMETRY, () => clock)
  const answers = await Promise.all(Array.from({ length: 50 }, async () => await cache.quote('PETR4', log)))
  t.equal(calls, 1, 'one upstream call for 50 concurrent requests')
  t.ok(answers.every(a => a?.price === 1))
  clock = 999
  await cache.quote('PETR4', log)
  t.equal(calls, 1, 'still fresh')
  clock = 1000
  t.equal((await cache.quote('PETR4', log))?.price, 2, 'expired after the TTL')
  await cache.monthlyCloses('PETR4', '2026-01', log)
  await cache.monthlyCloses('PETR4', '2026-01', log)
  t.equal(calls, 3, 'histories are cached too')
  fail = true
  clock = 5000
  await t.rejects(cache.quote('PETR4', log))
  fail = false
  t.equal((await cache.quote('PETR4', log))?.price, 5, 'a failure is not cached')
  t.equal(cache.source, 'test')
})
