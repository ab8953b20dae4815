import t from 'tap'
import { BrapiQuotes } from '../../src/quotes/brapi.js'
import { UpstreamClient } from '../../src/upstream/client.js'
import { dayOf, monthStart, startFakeBrapi, type FakeBrapi } from '../fixtures/fake-brapi.js'
import { sendJson } from '../fixtures/fake-server.js'
import { capturedLog } from '../fixtures/captured-log.js'
import { silentLog as log } from '../helper.js'

/** A provider on the fake, with a clock the test moves (milliseconds added to the real now). */
function brapiOn (
  brapi: FakeBrapi, tickersPerRequest = 20
): { quotes: BrapiQuotes, advance: (ms: number) => void, now: () => Date } {
  let offset = 0
  const client = new UpstreamClient({ name: 'brapi', baseUrl: brapi.url, timeoutMs: 5000 })
  const now = (): Date => new Date(Date.now() + offset)
  return { quotes: new BrapiQuotes(client, 'secret', tickersPerRequest, now), advance: ms => { offset += ms }, now }
}

const monthly = (monthsAgo: number): { interval: '1mo', since: string } =>
  ({ interval: '1mo', since: dayOf(monthsAgo, 1) })
const TIME = '2026-11-21T20:07:46.000Z'

t.test('several tickers in one request, within the plan\'s limit per request; the token in the header', async t => {
  const brapi = await startFakeBrapi(t)
  for (const [ticker, price] of [['PETR4', 38.5], ['VALE3', 61.2], ['ITUB4', 31], ['^BVSP', 128000]] as const) {
    brapi.prices.set(ticker, price)
  }
  brapi.prices.set('NOPRICE3', null)
  const quotes = await brapiOn(brapi).quotes.quoteMany(['PETR4', 'VALE3', '^BVSP', 'NOPRICE3', 'XPTO3'], log)
  t.equal(brapi.quoteRequests(), 1, 'one request for five tickers')
  const [sent] = brapi.requestsTo('/api/quote/')
  t.equal(sent?.path, '/api/quote/PETR4,VALE3,%5EBVSP,NOPRICE3,XPTO3', 'comma-separated, each ticker encoded')
  t.equal(sent?.headers.authorization, 'Bearer secret')
  t.equal(sent?.query.get('token'), null, 'never in the query')
  t.same([...quotes.keys()], ['PETR4', 'VALE3', '^BVSP', 'NOPRICE3', 'XPTO3'])
  t.same(quotes.get('VALE3'), { symbol: 'VALE3', price: 61.2, currency: 'BRL', lastUpdate: TIME })
  t.equal(quotes.get('^BVSP')?.price, 128000)
  t.equal(quotes.get('NOPRICE3'), undefined, 'a null price is no quote')
  t.equal(quotes.get('XPTO3'), undefined, 'a ticker left out of the answer is unknown')

  const chunked = await brapiOn(brapi, 2).quotes.quoteMany(['PETR4', 'VALE3', 'ITUB4'], log)
  t.equal(brapi.quoteRequests(), 3, 'three tickers at two per request: two more requests')
  t.equal(chunked.get('ITUB4')?.price, 31)
  const unknown = await brapiOn(brapi).quotes.quoteMany(['NOPE1', 'NOPE2'], log)
  t.same([...unknown.values()], [undefined, undefined], 'none known: brapi\'s 404 means no quotes')
  t.equal(brapi.requestsTo('/api/v2/crypto/available').length, 3, 'each provider read brapi\'s list of coins once')
})

t.test('a plan of one ticker per request: asked ticker by ticker, and the instance stops batching', async t => {
  const brapi = await startFakeBrapi(t)
  brapi.prices.set('PETR4', 38.5)
  brapi.prices.set('VALE3', 61.2)
  brapi.oneTickerPerRequest = true
  const { log, lines } = capturedLog()
  const { quotes } = brapiOn(brapi)
  const first = await quotes.quoteMany(['PETR4', 'VALE3'], log)
  t.same([first.get('PETR4')?.price, first.get('VALE3')?.price], [38.5, 61.2])
  t.equal(brapi.quoteRequests(), 3, 'the refused request, then one per ticker')
  t.equal(lines.filter(line => /one per request/.test(String(line.msg))).length, 1, 'told once')
  await quotes.quoteMany(['PETR4', 'VALE3'], log)
  t.equal(brapi.quoteRequests(), 5, 'from then on, one request per ticker without trying a batch')
  t.notOk(brapi.requestsTo('/api/quote/').slice(3).some(request => request.path.includes(',')))
})

t.test('coins: from brapi\'s list or an asset of type CRYPTO, priced in reais at /api/v2/crypto, batched', async t => {
  const brapi = await startFakeBrapi(t)
  brapi.coins.set('BTC', 330_123.45)
  brapi.coins.set('ETH', 14_500)
  brapi.coins.set('PEPE', 0.00012345)
  brapi.listedCoins = ['BTC', 'ETH']
  brapi.prices.set('PETR4', 38.5)
  const { quotes, advance } = brapiOn(brapi)
  const answers = await quotes.quoteMany(['PETR4', 'BTC', 'ETH', 'PEPE'], log)
  t.same(answers.get('BTC'), { symbol: 'BTC', price: 330_123.45, currency: 'BRL', lastUpdate: TIME })
  t.equal(answers.get('ETH')?.price, 14_500)
  t.equal(answers.get('PEPE'), undefined, 'neither listed nor held as CRYPTO: asked as a B3 ticker, unknown')
  const crypto = brapi.requestsTo('/api/v2/crypto')
  t.equal(crypto.length, 1, 'one request for every coin')
  t.equal(crypto[0]?.query.get('coin'), 'BTC,ETH')
  t.equal(crypto[0]?.query.get('currency'), 'BRL', 'coins are asked in reais')
  t.equal(crypto[0]?.headers.authorization, 'Bearer secret')

  t.same(quotes.knowCoins(['PEPE', 'BTC']), ['PEPE'], 'a coin it did not know of')
  t.same(quotes.knowCoins(['PEPE']), [], 'known now')
  t.equal((await quotes.quote('PEPE', log))?.price, 0.00012345)
  await quotes.quote('BTC', log)
  t.equal(brapi.requestsTo('/api/v2/crypto/available').length, 1, 'the list is read once a day')
  advance(24 * 60 * 60 * 1000)
  await quotes.quote('ETH', log)
  t.equal(brapi.requestsTo('/api/v2/crypto/available').length, 2, 'and again the next day')

  brapi.coins.delete('ETH')
  const refused = await quotes.quoteMany(['BTC', 'ETH'], log)
  t.equal(refused.get('BTC')?.price, 330_123.45, 'a coin brapi no longer has (400) leaves the others quoted')
  t.equal(refused.get('ETH'), undefined)
  const before = brapi.requestsTo('/api/v2/crypto').length
  await quotes.quoteMany(['BTC', 'PEPE'], log)
  t.equal(brapi.requestsTo('/api/v2/crypto').length, before + 1, 'that 400 was the coin\'s: still batching')
})

t.test('coins without brapi\'s list: only CRYPTO assets are coins, and the list is asked again later', async t => {
  const brapi = await startFakeBrapi(t)
  brapi.coins.set('BTC', 330_000)
  brapi.prices.set('PETR4', 38.5)
  const { log, lines } = capturedLog()
  const { quotes, advance } = brapiOn(brapi)
  for (const refusal of [{ status: 403 as const }, { status: 400 as const }]) {
    brapi.refusals.set('/api/v2/crypto/available', refusal)
    t.equal((await quotes.quote('PETR4', log))?.price, 38.5, `the list refused (${refusal.status}): stocks are quoted`)
    t.equal(await quotes.quote('BTC', log), undefined, 'a coin no asset holds is asked as a B3 ticker')
    t.equal(brapi.requestsTo('/api/v2/crypto/available').length, lines.filter(line =>
      /list of coins/.test(String(line.msg))).length, 'each refusal logged')
    advance(10 * 60 * 1000)
  }
  t.equal(brapi.requestsTo('/api/v2/crypto/available').length, 2, 'asked again 10 minutes later')
  quotes.knowCoins(['BTC'])
  t.equal((await quotes.quote('BTC', log))?.price, 330_000, 'a coin an asset of type CRYPTO holds is a coin')
  brapi.refusals.clear()
  brapi.on('BOOM3', (_request, res) => sendJson(res, 200, {}))
  brapi.refusals.set('/api/v2/crypto/available', { status: 429, retryAfter: '5' })
  await t.rejects(quotes.quote('PETR4', log), { code: 'BFF_UPSTREAM_QUOTA' }, 'a spent quota is not a missing list')
})

t.test('history: the range that covers the first month, in the currency brapi gives', async t => {
  const brapi = await startFakeBrapi(t)
  brapi.prices.set('AAPL', 230)
  brapi.currencies.set('AAPL', 'USD')
  brapi.histories.set('AAPL',
    [[monthStart(2), 200], [monthStart(1), null], [monthStart(1) + 86400, 210], [monthStart(0), 225]])
  const { quotes } = brapiOn(brapi)
  const history = await quotes.history('AAPL', monthly(2), log)
  t.same(history, {
    currency: 'USD',
    closes: [
      { date: dayOf(2, 1), close: 200 },
      { date: dayOf(1, 2), close: 210 },
      { date: dayOf(0, 1), close: 225 }
    ]
  }, 'a null close is a gap')
  const [asked] = brapi.requestsTo('/api/quote/')
  t.equal(asked?.query.get('range'), '1y')
  t.equal(asked?.query.get('interval'), '1mo')
  t.equal(await quotes.history('NOPE3', monthly(2), log), undefined, 'unknown ticker: no history')
})

t.test('history the plan refuses: shorter ranges asked, the longest it gives kept for the instance', async t => {
  const brapi = await startFakeBrapi(t)
  brapi.prices.set('PETR4', 38.5)
  brapi.histories.set('PETR4',
    Array.from({ length: 70 }, (_, index) => [monthStart(69 - index), 10 + index] as [number, number]))
  brapi.maxRange = '1y'
  const { log, lines } = capturedLog()
  const { quotes } = brapiOn(brapi)
  const history = await quotes.history('PETR4', monthly(65), log)
  t.same(brapi.requestsTo('/api/quote/').map(request => request.query.get('range')), ['10y', '5y', '2y', '1y'],
    'each refused range (400), then the next shorter one')
  t.equal(history?.closes[0]?.date, dayOf(11, 1), 'what the plan gives: the last 12 months')
  t.equal(history?.closes.length, 12)
  t.equal(lines.filter(line => line.range === '1y').length, 1, 'what was learnt is told once')
  await quotes.history('PETR4', monthly(30), log)
  t.same(brapi.requestsTo('/api/quote/').slice(4).map(request => request.query.get('range')), ['1y'],
    'the next history asks the longest range the plan gives at once')
  t.same(await quotes.history('PETR4', monthly(3), log), { currency: 'BRL', closes: history?.closes.slice(8) })

  brapi.maxRange = '3mo'
  brapi.longerRange = 'shorten'
  const shortened = await quotes.history('PETR4', monthly(8), log)
  t.equal(shortened?.closes.length, 3, 'a shorter usedRange: what brapi gave')
  await quotes.history('PETR4', monthly(9), log)
  t.equal(brapi.requestsTo('/api/quote/').at(-1)?.query.get('range'), '3mo', 'and it is remembered too')

  brapi.longerRange = 'refuse'
  brapi.maxRange = '1mo'
  t.equal(await quotes.history('PETR4', monthly(1), log), undefined, 'not even 3mo: no history')
})

t.test('a refused token (401, 403) is 502, with one error line a minute naming BRAPI_TOKEN', async t => {
  const brapi = await startFakeBrapi(t)
  brapi.prices.set('PETR4', 38.5)
  brapi.listedCoins = []
  const { log, lines } = capturedLog()
  const { quotes, advance } = brapiOn(brapi)
  await quotes.quote('PETR4', log)
  for (const status of [401, 403, 401] as const) {
    brapi.refusal = { status }
    await t.rejects(quotes.quote('PETR4', log), { code: 'BFF_UPSTREAM_UNAVAILABLE', statusCode: 502 }, String(status))
  }
  await t.rejects(quotes.history('PETR4', monthly(2), log), { code: 'BFF_UPSTREAM_UNAVAILABLE' })
  await t.rejects(quotes.rates(['USD'], log), { code: 'BFF_UPSTREAM_UNAVAILABLE' })
  const named = (): Array<Record<string, unknown>> => lines.filter(line => /BRAPI_TOKEN/.test(String(line.msg)))
  t.equal(named().length, 1, 'one line for five refusals within the minute')
  t.match(named()[0], { level: 50, status: 401, upstream: 'brapi' })
  t.notMatch(JSON.stringify(lines), /secret/, 'never the token itself')
  advance(60_000)
  await t.rejects(quotes.quote('PETR4', log))
  t.equal(named().length, 2, 'a minute later, another')
  brapi.refusal = undefined
  t.equal((await quotes.quote('PETR4', log))?.price, 38.5, 'and a token accepted again serves at once')
})

t.test('a spent quota (429, 402) is 503 with Retry-After, and brapi is left alone until then', async t => {
  const brapi = await startFakeBrapi(t)
  brapi.prices.set('PETR4', 38.5)
  brapi.listedCoins = []
  const { quotes, advance, now } = brapiOn(brapi)
  await quotes.quote('PETR4', log)
  const cases = [
    [() => ({ status: 429 as const, retryAfter: '30' }), 30],
    [() => ({ status: 402 as const, message: 'limit exceeded' }), 60],
    // An HTTP date 90 s after the provider's clock, rounded up to its whole second.
    [() => ({
      status: 429 as const,
      retryAfter: new Date(Math.ceil(now().getTime() / 1000) * 1000 + 90_000).toUTCString()
    }), 90]
  ] as const
  for (const [refusalAt, seconds] of cases) {
    const refusal = refusalAt()
    brapi.refusal = refusal
    const sent = brapi.received.length
    const told = await quotes.quote('PETR4', log)
      .catch((error: { code: string, statusCode: number, retryAfterSeconds: number }) => error)
    t.match(told, { code: 'BFF_UPSTREAM_QUOTA', statusCode: 503 }, `${refusal.status}: 503`)
    t.ok([seconds, seconds + 1].includes((told as { retryAfterSeconds: number }).retryAfterSeconds), `${seconds} s`)
    brapi.refusal = undefined
    await t.rejects(quotes.quoteMany(['PETR4', 'VALE3'], log), { code: 'BFF_UPSTREAM_QUOTA' })
    await t.rejects(quotes.history('PETR4', monthly(2), log), { code: 'BFF_UPSTREAM_QUOTA' })
    await t.rejects(quotes.rates(['USD'], log), { code: 'BFF_UPSTREAM_QUOTA' })
    await t.rejects(quotes.rateHistory('USD', monthly(2), log), { code: 'BFF_UPSTREAM_QUOTA' })
    advance(10_000)
    const waited = await quotes.quote('PETR4', log)
      .catch((error: { retryAfterSeconds: number }) => error.retryAfterSeconds)
    t.ok([seconds - 10, seconds - 9].includes(waited as number), `Retry-After counts down: ${String(waited)}`)
    t.equal(brapi.received.length, sent + 1, 'no request went to brapi meanwhile')
    advance((seconds + 1) * 1000)
    t.equal((await quotes.quote('PETR4', log))?.price, 38.5, 'asked again once it has passed')
  }
})

t.test('rates: brapi\'s bidPrice, a text, kept exact; a pair it does not have has none', async t => {
  const brapi = await startFakeBrapi(t)
  brapi.rates.set('USD', '5.4321')
  brapi.rates.set('EUR', '6.1')
  const { quotes } = brapiOn(brapi)
  const rates = await quotes.rates(['USD', 'EUR', 'JPY'], log)
  t.same(rates.get('USD'), { currency: 'USD', rate: '5.4321', lastUpdate: new Date(1795334843 * 1000).toISOString() })
  t.equal(rates.get('EUR')?.rate, '6.1')
  t.equal(rates.get('JPY'), undefined)
  const [asked] = brapi.requestsTo('/api/v2/currency')
  t.equal(asked?.query.get('currency'), 'USD-BRL,EUR-BRL,JPY-BRL', 'one request for every currency')
  t.same(await quotes.rates([], log), new Map(), 'nothing asked for nothing')
  t.equal((await quotes.rates(['JPY'], log)).get('JPY'), undefined, 'none known: 404')
  brapi.rates.set('USD', '5,43')
  await t.rejects(quotes.rates(['USD'], log), { code: 'BFF_UPSTREAM_UNAVAILABLE' }, 'a bidPrice not decimal is garbage')
  brapi.rates.set('USD', '0')
  await t.rejects(quotes.rates(['USD'], log), { code: 'BFF_UPSTREAM_UNAVAILABLE' }, 'nor is a rate of zero one')
})

t.test('rate history: the daily PTAX since a date, oldest first; none for a pair outside the plan', async t => {
  const brapi = await startFakeBrapi(t)
  brapi.rateHistories.set('USD', [[dayOf(1, 30), 5.31], [dayOf(2, 2), 5.2], [dayOf(0, 3), 5.4]])
  const { quotes } = brapiOn(brapi)
  t.same(await quotes.rateHistory('USD', monthly(2), log), [
    { date: dayOf(2, 2), rate: '5.2' }, { date: dayOf(1, 30), rate: '5.31' }, { date: dayOf(0, 3), rate: '5.4' }
  ])
  const [asked] = brapi.requestsTo('/api/v2/currency/historical')
  t.equal(asked?.query.get('currency'), 'USD-BRL')
  t.equal(asked?.query.get('startDate'), dayOf(2, 1))
  t.equal(asked?.query.get('sortOrder'), 'asc')
  t.ok(Number(asked?.query.get('limit')) >= 59, 'enough points for every day asked')
  t.equal(await quotes.rateHistory('EUR', monthly(2), log), undefined, 'the pair among the answer\'s errors')
  brapi.refusals.set('/api/v2/currency/historical', { status: 400 })
  t.equal(await quotes.rateHistory('USD', monthly(2), log), undefined, 'refused: none')
})

t.test('answers brapi\'s SDKs do not allow are 502, logged, never served', async t => {
  const brapi = await startFakeBrapi(t)
  brapi.listedCoins = []
  const garbage: Record<string, unknown> = {
    NOCUR3: { results: [{ symbol: 'NOCUR3', regularMarketPrice: 10 }] },
    BADCUR3: { results: [{ symbol: 'BADCUR3', currency: 'R$', regularMarketPrice: 10 }] },
    NONE3: { results: [] },
    TEAPOT3: 418
  }
  for (const [ticker, body] of Object.entries(garbage)) {
    brapi.on(ticker, (_request, res) => typeof body === 'number' ? sendJson(res, body, {}) : sendJson(res, 200, body))
  }
  brapi.on('BADCLOSE3', (_request, res) => sendJson(res, 200, {
    results: [{
      symbol: 'BADCLOSE3', currency: 'BRL', regularMarketPrice: 1, historicalDataPrice: [{ date: 1e20, close: 1 }]
    }]
  }))
  brapi.on('NOHISTCUR3', (_request, res) =>
    sendJson(res, 200, { results: [{ symbol: 'NOHISTCUR3', regularMarketPrice: 1 }] }))
  const { log, lines } = capturedLog()
  const { quotes } = brapiOn(brapi)
  for (const ticker of Object.keys(garbage)) {
    await t.rejects(quotes.quote(ticker, log), { code: 'BFF_UPSTREAM_UNAVAILABLE' }, ticker)
  }
  const garbled = { code: 'BFF_UPSTREAM_UNAVAILABLE' }
  await t.rejects(quotes.history('BADCLOSE3', monthly(2), log), garbled, 'a close dated nowhere')
  await t.rejects(quotes.history('NOHISTCUR3', monthly(2), log), garbled, 'a history without its currency')
  t.ok(lines.filter(line => line.upstream === 'brapi' && line.level === 40).length >= 6, 'each logged')
  brapi.on('ODDTIME3', (_request, res) => sendJson(res, 200, {
    results: [{ symbol: 'odd', currency: 'usd', regularMarketPrice: 1.123456789, regularMarketTime: 'soon' }]
  }))
  const odd = await quotes.quote('ODDTIME3', log)
  t.match(odd, { symbol: 'ODDTIME3', currency: 'USD', price: 1.12345679 }, 'one ticker, one result: that ticker\'s')
  t.ok(Date.parse(odd?.lastUpdate ?? '') > Date.now() - 60_000, 'a time brapi gave that reads as none: now')
})

t.test('currencies and histories brapi answers oddly', async t => {
  const brapi = await startFakeBrapi(t)
  brapi.listedCoins = []
  const { quotes } = brapiOn(brapi)
  const answer = (path: string, body: unknown): void => {
    brapi.onPath(path, (_request, res) => sendJson(res, 200, body))
  }
  const garbled = { code: 'BFF_UPSTREAM_UNAVAILABLE' }
  answer('/api/v2/currency', { currency: 'USD-BRL 5.43' })
  await t.rejects(quotes.rates(['USD'], log), garbled, 'no list of pairs')
  answer('/api/v2/currency', {
    currency: [
      null,
      { fromCurrency: 'USD', toCurrency: 'EUR', bidPrice: '0.9' },
      { fromCurrency: 'GBP', bidPrice: '7' },
      { fromCurrency: 'usd', toCurrency: 'brl', bidPrice: 5.43, updatedAtTimestamp: '2026-11-21 17:07:23' }]
  })
  const lastUpdate = '2026-11-21T17:07:23.000Z'
  t.same(await quotes.rates(['USD'], log), new Map([['USD', { currency: 'USD', rate: '5.43', lastUpdate }]]),
    'another pair, one not asked for: left out; a numeric bidPrice taken as its decimal')
  const history = '/api/v2/currency/historical'
  answer(history, { results: 'none' })
  t.equal(await quotes.rateHistory('USD', monthly(1), log), undefined, 'no results')
  answer(history, { results: [{ pair: 'USD-BRL' }] })
  t.equal(await quotes.rateHistory('USD', monthly(1), log), undefined, 'no observations')
  const observed = (...observations: unknown[]): void => {
    answer(history, { results: [{ pair: 'USD-BRL', observations }] })
  }
  observed({ date: '2026-11-21T00:00:00Z', value: 5.4 }, null)
  await t.rejects(quotes.rateHistory('USD', monthly(1), log), garbled, 'an observation it cannot read')
  observed({ date: 'yesterday', value: 5.4 })
  await t.rejects(quotes.rateHistory('USD', monthly(1), log), garbled, 'a date it cannot read')
  observed({ date: '2026-11-22', value: '5.41' }, { date: '2026-11-21', value: 5.4 })
  t.same(await quotes.rateHistory('USD', monthly(1), log),
    [{ date: '2026-11-21', rate: '5.4' }, { date: '2026-11-22', rate: '5.41' }], 'oldest first, whatever the order')

  brapi.prices.set('PETR4', 38)
  brapi.on('PETR4', (_request, res) => sendJson(res, 200, {
    results: [{ symbol: 'PETR4', currency: 'BRL', usedRange: 'ytd', historicalDataPrice: [null, 7] }]
  }))
  t.same(await quotes.history('PETR4', monthly(1), log), { currency: 'BRL', closes: [] }, 'entries that are no entries')
  brapi.on('PETR4', (_request, res) => sendJson(res, 200, {
    results: [{ symbol: 'PETR4', currency: 'BRL', regularMarketPrice: 38, usedRange: 'forever' }]
  }))
  t.same(await quotes.history('PETR4', monthly(1), log), { currency: 'BRL', closes: [] }, 'no historicalDataPrice')
  brapi.on('PETR4', (_request, res) => sendJson(res, 200, { results: [{ symbol: 'VALE3', currency: 'BRL' }, {}] }))
  t.equal(await quotes.history('PETR4', monthly(1), log), undefined, 'another ticker\'s history is none of this one')
})
