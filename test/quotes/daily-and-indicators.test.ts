import t from 'tap'
import { BrapiQuotes } from '../../src/quotes/brapi.js'
import { dayRangeCovering } from '../../src/quotes/brapi-ranges.js'
import { closesOf } from '../../src/quotes/brapi-parse.js'
import { dayKey } from '../../src/schemas/calendar.js'
import { CachedQuotes, HISTORY_TTL_MS } from '../../src/quotes/cache.js'
import { OfflineQuotes } from '../../src/quotes/offline.js'
import { UpstreamClient } from '../../src/upstream/client.js'
import { startFakeBrapi, type FakeBrapi } from '../fixtures/fake-brapi.js'
import { sendJson } from '../fixtures/fake-server.js'
import { capturedLog } from '../fixtures/captured-log.js'
import { silentLog as log } from '../helper.js'
import { weekdays } from '../fixtures/performance-example.js'

/*
 * What a performance asks of the providers (docs/api.md#performance): daily histories on the range
 * that covers the day asked (shorter when the plan refuses it), brapi's SELIC and IPCA (none on a
 * plan without them), the offline provider's simulated daily closes, rates and indicators.
 */

function brapiOn (brapi: FakeBrapi): { quotes: BrapiQuotes, advance: (ms: number) => void } {
  let offset = 0
  const client = new UpstreamClient({ name: 'brapi', baseUrl: brapi.url, timeoutMs: 5000 })
  const quotes = new BrapiQuotes(client, 'secret', 20, () => new Date(Date.now() + offset))
  return { quotes, advance: ms => { offset += ms } }
}

const dayBefore = (days: number): string => new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 10)

t.test('the daily range that covers a day: a month, three, six, then the monthly ranges', async t => {
  const now = new Date('2026-05-31T15:00:00.000Z')
  t.equal(dayRangeCovering('2026-04-30', now), '1mo')
  t.equal(dayRangeCovering('2026-04-29', now), '3mo')
  t.equal(dayRangeCovering('2026-02-28', now), '3mo', 'three months before 31 May: 28 February at the latest')
  t.equal(dayRangeCovering('2025-12-01', now), '6mo')
  t.equal(dayRangeCovering('2025-11-30', now), '6mo')
  t.equal(dayRangeCovering('2025-11-29', now), '1y')
  t.equal(dayRangeCovering('2020-01-02', now), '10y')
})

t.test('a daily history: interval=1d on the range covering the day, each close on its day; a longer range than ' +
  'the plan serves is asked shorter and kept', async t => {
  const brapi = await startFakeBrapi(t)
  brapi.prices.set('PETR4', 34)
  const days = weekdays(dayBefore(400), dayBefore(0))
  brapi.dailyHistories.set('PETR4', days.map((day, index) => [day, index === 3 ? null : 30 + index / 100]))
  const { quotes } = brapiOn(brapi)
  const month = await quotes.history('PETR4', { interval: '1d', since: dayBefore(20) }, log)
  const [asked] = brapi.requestsTo('/api/quote/PETR4')
  t.same([asked?.query.get('range'), asked?.query.get('interval')], ['1mo', '1d'])
  t.ok(month !== undefined && month.closes.every(close => close.date >= dayBefore(20)), 'from the day asked')
  t.equal(month?.closes.at(-1)?.date, days.at(-1), 'each close dated its own day (13:00 UTC is that day)')

  brapi.maxRange = '3mo'
  const { log: captured, lines } = capturedLog()
  const year = await quotes.history('PETR4', { interval: '1d', since: dayBefore(300) }, captured)
  t.same(brapi.requestsTo('/api/quote/PETR4').slice(1)
    .map(request => [request.query.get('range'), request.query.get('includeRaw')]),
  [['1y', 'true'], ['1y', null], ['3mo', 'true']],
  'refused with the unadjusted closes and without them (the plan\'s range, not its unadjusted prices), then the ' +
    'next shorter range')
  t.ok(year !== undefined && year.closes.length > 50 && year.closes.length < 70, 'three months of closes')
  t.equal(year?.closes.some(close => close.date === days[3]), false, 'a day without a close is a gap')
  t.equal(lines.filter(line => /gives history up to this range/.test(String(line.msg))).length, 1)
  await quotes.history('PETR4', { interval: '1d', since: dayBefore(250) }, log)
  t.equal(brapi.requestsTo('/api/quote/PETR4').at(-1)?.query.get('range'), '3mo', 'the plan\'s range asked at once')
})

t.test('brapi\'s SELIC and IPCA: the series from the day asked (the IPCA from its month\'s first day), a plan ' +
  'without them none (logged once, asked again an hour later), garbage 502', async t => {
  const brapi = await startFakeBrapi(t)
  brapi.primeRates = [['2026-09-30', '15.00'], ['2026-10-01', '15'], ['2026-10-02', '14.75']]
  brapi.inflation = [['2026-08-01', '0.48'], ['2026-09-01', '-0.02'], ['2026-10-01', '0.09']]
  const { quotes, advance } = brapiOn(brapi)
  t.same(await quotes.primeRate('2026-10-01', log), [
    { date: '2026-10-01', percent: '15' }, { date: '2026-10-02', percent: '14.75' }
  ])
  const [asked] = brapi.requestsTo('/api/v2/prime-rate')
  t.equal(asked?.query.get('start'), '01/10/2026')
  t.equal(asked?.query.get('sortOrder'), 'asc')
  t.equal(asked?.headers.authorization, 'Bearer secret')
  t.same(await quotes.inflation('2026-09-15', log), [
    { date: '2026-09-01', percent: '-0.02' }, { date: '2026-10-01', percent: '0.09' }
  ], 'September\'s IPCA though asked from its 15th')

  brapi.primeRates = undefined
  const { log: captured, lines } = capturedLog()
  t.equal(await quotes.primeRate('2026-10-01', captured), undefined, 'the plan has no SELIC: none')
  t.equal(await quotes.primeRate('2026-10-01', captured), undefined)
  t.equal(brapi.requestsTo('/api/v2/prime-rate').length, 2, 'not asked again')
  t.same(lines.map(line => [line.level, line.msg]), [[30, 'brapi\'s plan gives no SELIC series: performances ' +
    'answer it null (asked again in an hour)']], 'an info line, not the token\'s error')
  advance(HISTORY_TTL_MS + 1)
  brapi.primeRates = [['2026-10-01', '15']]
  t.same(await quotes.primeRate('2026-10-01', log), [{ date: '2026-10-01', percent: '15' }], 'an hour later, asked')

  brapi.inflation = []
  t.equal(await quotes.inflation('2026-11-16', log), undefined, 'none published in the dates')
  brapi.onPath('/api/v2/inflation', (_request, res) => { sendJson(res, 404, { error: true }) })
  t.equal(await quotes.inflation('2026-11-16', log), undefined)
  brapi.onPath('/api/v2/inflation', (_request, res) => {
    sendJson(res, 200, { inflation: [{ date: '2026-10', value: 'x' }] })
  })
  await t.rejects(quotes.inflation('2026-11-16', log), { code: 'UPSTREAM_UNAVAILABLE' })
  brapi.onPath('/api/v2/inflation', (_request, res) => { sendJson(res, 200, { results: [] }) })
  await t.rejects(quotes.inflation('2026-11-16', log), { code: 'UPSTREAM_UNAVAILABLE' })
  brapi.onPath('/api/v2/inflation', (_request, res) => {
    sendJson(res, 200, { inflation: [{ date: '01/10/2026', value: 0.09, epochDate: 0 }] })
  })
  t.same(await quotes.inflation('2026-10-01', log), [{ date: '2026-10-01', percent: '0.09' }],
    'a number read as its text')
  brapi.refusal = { status: 429, retryAfter: '30' }
  await t.rejects(quotes.primeRate('2026-10-01', log), { code: 'BFF_UPSTREAM_QUOTA' },
    'a spent quota is the caller\'s error')
})

t.test('the quote cache keeps the SELIC and IPCA an hour, and a daily history not past the next close', async t => {
  let now = Date.parse('2026-11-20T20:30:00.000Z')
  let asked = 0
  const provider = new OfflineQuotes(() => new Date(now))
  const counting = {
    source: provider.source,
    quote: provider.quote.bind(provider),
    history: async (...args: Parameters<OfflineQuotes['history']>) => {
      asked++
      return await provider.history(...args)
    },
    primeRate: async (since: string) => { asked++; return await provider.primeRate(since) },
    inflation: async (since: string) => { asked++; return await provider.inflation(since) }
  }
  const cache = new CachedQuotes(counting, 1000, undefined, () => now)
  await cache.history('PETR4', { interval: '1d', since: '2026-11-01' }, log)
  await cache.history('PETR4', { interval: '1mo', since: '2026-11-01' }, log)
  await cache.primeRate('2026-11-01', log)
  await cache.inflation('2026-11-01', log)
  t.equal(asked, 4)
  now = Date.parse('2026-11-20T21:00:01.000Z')
  await cache.history('PETR4', { interval: '1d', since: '2026-11-01' }, log)
  await cache.history('PETR4', { interval: '1mo', since: '2026-11-01' }, log)
  await cache.primeRate('2026-11-01', log)
  await cache.inflation('2026-11-01', log)
  t.equal(asked, 5, 'only the daily history asked again: the close is in')
  now = Date.parse('2026-11-20T21:30:01.000Z')
  await cache.primeRate('2026-11-01', log)
  t.equal(asked, 6, 'the SELIC an hour later')
  const bare = new CachedQuotes({ source: 'x', quote: async () => undefined, history: async () => undefined }, 1000)
  t.equal(await bare.primeRate('2026-11-01', log), undefined, 'a provider without it gives none')
  t.equal(await bare.inflation('2026-11-01', log), undefined)
})

t.test('offline: daily closes on weekdays from each month\'s close to the next (today\'s is the quote), daily ' +
  'dollar rates, a simulated SELIC target and IPCA', async t => {
  const now = new Date('2026-11-20T15:00:00.000Z')
  const offline = new OfflineQuotes(() => now)
  const daily = await offline.history('VALE3', { interval: '1d', since: '2026-09-01' })
  const monthly = await offline.history('VALE3', { interval: '1mo', since: '2026-09-01' })
  t.ok(daily.closes.every(close => [1, 2, 3, 4, 5].includes(new Date(close.date).getUTCDay())), 'weekdays')
  t.equal(daily.closes.find(close => close.date === '2026-09-30')?.close, monthly.closes[0]?.close,
    'September\'s last weekday closes at September\'s close')
  t.equal(daily.closes.at(-1)?.date, '2026-11-20')
  t.equal(daily.closes.at(-1)?.close, (await offline.quote('VALE3')).price, 'today\'s close is the quote')
  t.same(await offline.history('VALE3', { interval: '1d', since: '2026-09-01' }), daily, 'the same every time')
  const rates = await offline.rateHistory('USD', { interval: '1d', since: '2026-11-16' })
  t.same(rates?.map(rate => rate.date), ['2026-11-16', '2026-11-17', '2026-11-18', '2026-11-19', '2026-11-20'])
  t.equal(rates?.at(-1)?.rate, (await offline.rates(['USD'])).get('USD')?.rate, 'today\'s rate is the current one')
  const selic = await offline.primeRate('2026-11-02')
  t.equal(selic.length, 15, 'each weekday')
  t.ok(selic.every(({ percent }) => Number(percent) >= 2 && Number(percent) <= 20))
  const ipca = await offline.inflation('2026-01-15')
  t.ok(ipca.every(month => month.date.endsWith('-01')), 'dated each month\'s first day')
  t.equal(ipca[0]?.date, '2026-01-01')
  t.equal(ipca.at(-1)?.date, '2026-10-01', 'October\'s is published by 20 November, November\'s not yet')
})

t.test('a day\'s key from its day number is the ISO date, every day of 1900–2199, any time of the day', async t => {
  const mismatches: string[] = []
  for (let time = Date.UTC(1900, 0, 1); time < Date.UTC(2200, 0, 1); time += 86_400_000) {
    for (const at of [time, time + 13 * 3_600_000, time + 86_399_999]) {
      const date = new Date(at)
      if (dayKey(date) !== date.toISOString().slice(0, 10)) mismatches.push(date.toISOString())
    }
  }
  t.same(mismatches, [])
})

t.test('closes out of order, or twice on a day, are sorted and the last of a day kept; more than 8 decimals rounded',
  async t => {
    const at = (day: string): number => Date.parse(`${day}T13:00:00Z`) / 1000
    const history = [
      { date: at('2026-11-18'), close: 32 },
      { date: at('2026-11-17'), close: 31 },
      { date: at('2026-11-18'), close: 32.5 },
      { date: at('2026-11-19'), close: 33.123456789 }
    ]
    t.same(closesOf(history, '2026-11-01', log), [
      { date: '2026-11-17', close: 31 }, { date: '2026-11-18', close: 32.5 }, { date: '2026-11-19', close: 33.12345679 }
    ])
  })
