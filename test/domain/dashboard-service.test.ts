import t from 'tap'
import { DashboardService } from '../../src/domain/dashboard-service.js'
import { EVERY_PORTFOLIO, type Access } from '../../src/domain/access.js'
import { BrapiQuotes } from '../../src/quotes/brapi.js'
import { CachedQuotes } from '../../src/quotes/cache.js'
import type { Asset, AssetType } from '../../src/schemas/asset.js'
import type { Holding } from '../../src/domain/ports.js'
import { UpstreamClient } from '../../src/upstream/client.js'
import { dayOf, monthStart, startFakeBrapi } from '../fixtures/fake-brapi.js'
import { silentLog as log } from '../helper.js'
import { NOT_IMPORTED, RECORDED_BY_HAND } from '../fixtures/portfolios.js'
import { NO_EVENT_BOOKS } from '../fixtures/corporate-events.js'

const access: Access = {
  apiKey: async () => {},
  principal: async () => { throw new Error('no') },
  portfolioScope: async () => EVERY_PORTFOLIO,
  caller: () => 'k'
}

function holding (
  symbol: string, type: AssetType, lots: Array<[monthsAgo: number, quantity: number, price: number]>
): Holding {
  const quantity = lots.reduce((sum, [, units]) => sum + units, 0)
  const asset: Asset = {
    id: symbol,
    name: symbol,
    symbol,
    type,
    quantity,
    price: lots[0]?.[2] ?? 0,
    totalValue: 0,
    portfolioId: 'p',
    eventsUnapplied: false,
    eventsAsOf: null,
    createdAt: '',
    updatedAt: '',
    ...RECORDED_BY_HAND
  }
  return {
    asset,
    transactions: lots.map(([monthsAgo, units, price], index) => ({
      id: `${symbol}-${index}`,
      assetId: symbol,
      type: 'BUY' as const,
      date: dayOf(monthsAgo, 10),
      quantity: units,
      price,
      fee: 0,
      totalValue: units * price,
      createdAt: '',
      ...NOT_IMPORTED
    }))
  }
}

t.test('a dashboard from brapi: coins and dollar shares in reais, months the plan does not give estimated', async t => {
  const brapi = await startFakeBrapi(t)
  brapi.maxRange = '1y'
  brapi.prices.set('PETR4', 40)
  brapi.prices.set('^BVSP', 132_000)
  brapi.prices.set('AAPL', 230)
  brapi.currencies.set('AAPL', 'USD')
  brapi.coins.set('BTC', 330_000)
  brapi.listedCoins = []
  brapi.rates.set('USD', '5.5')
  const monthly = (from: number, value: (monthsAgo: number) => number): Array<[number, number]> =>
    Array.from({ length: from + 1 }, (_, index) => [monthStart(from - index), value(from - index)])
  brapi.histories.set('PETR4', monthly(14, ago => 30 + ago))
  brapi.histories.set('^BVSP', monthly(14, ago => 120_000 - ago * 1000))
  brapi.histories.set('AAPL', monthly(14, ago => 200 - ago))
  brapi.histories.set('BTC', monthly(14, ago => 300_000 - ago * 10_000))
  // The dollar's history the plan gives starts two months ago.
  brapi.rateHistories.set('USD', [[dayOf(2, 27), 5.3], [dayOf(1, 28), 5.4]])
  const portfolio = [
    holding('PETR4', 'STOCK', [[13, 100, 30]]),
    holding('AAPL', 'STOCK', [[3, 2, 1050]]),
    holding('BTC', 'CRYPTO', [[1, 0.01, 320_000]])
  ]
  const holdings = {
    portfolioHoldingsOf: async (id: string) => {
      const own = portfolio.find(entry => entry.asset.id === id)
      return own === undefined ? undefined : { holding: own, portfolio }
    },
    holdingsOfPortfolios: async () => new Map([['p', portfolio]]),
    ownersOf: async () => { throw new Error('the API key reaches every asset: no owner is read') }
  }
  const client = new UpstreamClient({ name: 'brapi', baseUrl: brapi.url, timeoutMs: 5000 })
  const quotes = new CachedQuotes(new BrapiQuotes(client, 'token'), 60_000)
  const dashboards = new DashboardService(holdings, quotes, NO_EVENT_BOOKS)

  const petr4 = await dashboards.ofAsset(access, 'PETR4', log)
  t.equal(petr4.monthlyHistory.length, 14)
  t.ok(petr4.monthlyHistory.every(month => month.estimated),
    'the index\'s first month is before the 12 months the plan gives: no month\'s ibovPercentage is the index\'s')
  t.same(petr4.monthlyHistory.slice(0, 2).map(month => month.currentBalance), [3000, 3000],
    'held at its average buy price where brapi gave no close')
  t.equal(petr4.monthlyHistory[2]?.currentBalance, (30 + 11) * 100, 'then at its closes')
  t.same(brapi.requestsTo('/api/quote/PETR4').map(request => request.query.get('range')), ['2y', '1y'],
    'the refused range, then the plan\'s')

  const aapl = await dashboards.ofAsset(access, 'AAPL', log)
  t.match(aapl.basicInfo, { lastQuote: 1265, grossValue: 2530, quoteSource: 'brapi.dev' }, 'US$ 230 at R$ 5.50')
  t.same(aapl.monthlyHistory.map(month => [month.currentBalance, month.estimated]), [
    [2 * 197 * 5.3, true],
    [2098.8, false],
    [2149.2, false],
    [2530, false]
  ], 'each month at its own rate; before the rate history, the first rate, estimated')

  const btc = (await dashboards.ofAssets(access, [portfolio[2]?.asset as Asset], log))[0]
  t.match(btc, { basicInfo: { lastQuote: 330_000, grossValue: 3300 } })
  t.same(brapi.requestsTo('/api/v2/crypto').filter(request => request.query.has('range'))
    .map(request => [request.query.get('coin'), request.query.get('range')]),
  [['BTC', '2y'], ['BTC', '1y'], ['BTC', '1y'], ['BTC', '1y']],
  'a coin\'s history from /api/v2/crypto, for each dashboard\'s first month, within the plan')
  t.equal(brapi.requestsTo('/api/v2/crypto/available').length, 1)
})
