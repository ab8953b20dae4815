import t from 'tap'
import { buildDashboard, longLabel, shortLabel } from '../../src/domain/dashboard-calculation.js'

t.test('docs/api.md\'s worked example', async t => {
  const dashboard = buildDashboard({
    asset: {
      id: 'petr4',
      symbol: 'PETR4',
      name: 'Petrobras PN',
      quantity: 120,
      imageUrl: 'https://icons.brapi.dev/icons/PETR4.svg'
    },
    portfolio: [
      {
        assetId: 'petr4',
        lastQuote: 40,
        origin: { source: 'brapi.dev', lastUpdate: '2026-11-14T20:07:46.000Z' },
        closes: [
          { month: '2026-09', close: 30 },
          { month: '2026-10', close: 35 }
        ],
        transactions: [
          { id: 'a', type: 'BUY', date: '2026-09-10', quantity: 100, price: 32, fee: 0 },
          { id: 'b', type: 'BUY', date: '2026-10-10', quantity: 50, price: 36, fee: 4.9 },
          { id: 'c', type: 'SELL', date: '2026-10-20', quantity: 30, price: 38, fee: 5.7 }
        ]
      },
      {
        assetId: 'vale3',
        lastQuote: 50,
        origin: { source: 'brapi.dev', lastUpdate: '2026-11-14T20:07:46.000Z' },
        closes: [],
        transactions: [{ id: 'd', type: 'BUY', date: '2026-11-05', quantity: 10, price: 60, fee: 0 }]
      }
    ],
    benchmark: {
      lastQuote: 132_000,
      closes: [
        { month: '2026-09', close: 120_000 },
        { month: '2026-10', close: 126_000 }
      ]
    },
    now: new Date('2026-11-15T12:00:00Z')
  })
  t.same(dashboard.basicInfo, {
    ticker: 'PETR4',
    name: 'Petrobras PN',
    imageUrl: 'https://icons.brapi.dev/icons/PETR4.svg',
    quantity: 120,
    averagePrice: 33.33333333,
    lastQuote: 40,
    quoteSource: 'brapi.dev',
    quoteUpdatedAt: '2026-11-14T20:07:46.000Z',
    investedValue: 4000,
    grossValue: 4800,
    result: 800,
    resultPercentage: 20,
    // 30 × (38 − 33.33333333) = 140.0000001, less 4.90 + 5.70 of fees
    realizedResult: 129.4,
    fees: 10.6,
    income: 0,
    incomeAnnounced: 0
  })
  t.same(dashboard.monthlyHistory, [
    {
      month: 'Set.2026',
      currentBalance: 3000,
      quantity: 100,
      returnPercentage: -6.25,
      portfolioPercentage: 100,
      ibovPercentage: 0,
      estimated: false
    },
    {
      month: 'Out.2026',
      currentBalance: 4200,
      quantity: 120,
      returnPercentage: 5,
      portfolioPercentage: 100,
      ibovPercentage: 5,
      estimated: false
    },
    {
      month: 'Nov.2026',
      currentBalance: 4800,
      quantity: 120,
      returnPercentage: 20,
      portfolioPercentage: 90.57,
      ibovPercentage: 10,
      estimated: false
    }
  ])
  t.same(dashboard.historicalChart, [
    { month: 'Set/26', appliedValue: 3200, grossBalance: 3000 },
    { month: 'Out/26', appliedValue: 4000, grossBalance: 4200 },
    { month: 'Nov/26', appliedValue: 4000, grossBalance: 4800 }
  ])
  t.same(dashboard.transactions, [
    {
      id: 'a',
      date: '2026-09-10',
      type: 'BUY',
      description: 'Compra de 100 PETR4',
      quantity: 100,
      pricePerUnit: 32,
      totalValue: 3200,
      fee: 0
    },
    {
      id: 'b',
      date: '2026-10-10',
      type: 'BUY',
      description: 'Compra de 50 PETR4',
      quantity: 50,
      pricePerUnit: 36,
      totalValue: 1800,
      fee: 4.9
    },
    {
      id: 'c',
      date: '2026-10-20',
      type: 'SELL',
      description: 'Venda de 30 PETR4',
      quantity: 30,
      pricePerUnit: 38,
      totalValue: 1140,
      fee: 5.7
    }
  ])
})

t.test('gaps in closes repeat the last close; before any close, the average buy price', async t => {
  const dashboard = buildDashboard({
    asset: { id: 'x', symbol: 'X', name: 'X', quantity: 2, imageUrl: '' },
    portfolio: [{
      assetId: 'x',
      lastQuote: 12,
      origin: { source: 'offline', lastUpdate: null },
      closes: [{ month: '2026-08', close: 11 }],
      transactions: [{ id: 'l', type: 'BUY', date: '2026-07-01', quantity: 2, price: 9, fee: 0 }]
    }],
    benchmark: undefined,
    now: new Date('2026-10-02T00:00:00Z')
  })
  t.same(
    dashboard.monthlyHistory.map(m => [m.month, m.currentBalance, m.ibovPercentage, m.estimated]),
    [
      ['Jul.2026', 18, 0, true],
      ['Ago.2026', 22, 0, true],
      ['Set.2026', 22, 0, true],
      ['Out.2026', 24, 0, true]
    ],
    'without a benchmark no month is market data: its ibovPercentage of 0 is not the index\'s'
  )
})

t.test('estimated: a month whose figures rest on a price that is not market data, and only such a month', async t => {
  const brapi = { source: 'brapi.dev', lastUpdate: '2026-10-01T20:00:00.000Z' }
  const transactions = [{ id: 'l', type: 'BUY' as const, date: '2026-06-10', quantity: 2, price: 9, fee: 0 }]
  const benchmark = {
    lastQuote: 130,
    closes: [{ month: '2026-06', close: 100 }, { month: '2026-07', close: 110 }, { month: '2026-08', close: 120 },
      { month: '2026-09', close: 125 }]
  }
  const months = (portfolio: Parameters<typeof buildDashboard>[0]['portfolio'], given = benchmark): boolean[] =>
    buildDashboard({
      asset: { id: 'x', symbol: 'X', name: 'X', quantity: 2, imageUrl: '' },
      portfolio,
      benchmark: given,
      now: new Date('2026-10-02T00:00:00Z')
    }).monthlyHistory.map(month => month.estimated)
  const closes = [
    { month: '2026-06', close: 10 },
    { month: '2026-07', close: 11, estimated: true },
    { month: '2026-09', close: 12 }
  ]
  t.same(months([{ assetId: 'x', lastQuote: 13, origin: brapi, closes, transactions }]),
    [false, true, true, false, false],
    'a close at another month\'s rate, then a gap (August repeats July): estimated; the current quote is not')
  const bond = { assetId: 'b', lastQuote: 100, origin: { source: 'asset', lastUpdate: null }, closes: [], transactions }
  t.same(months([{
    assetId: 'x',
    lastQuote: 13,
    origin: brapi,
    closes: [{ month: '2026-06', close: 10 },
      { month: '2026-07', close: 11 }, { month: '2026-08', close: 11 }, { month: '2026-09', close: 12 }],
    transactions
  }, bond]),
  [true, true, true, true, true], 'an asset at its stored price: every month\'s portfolio share rests on it')
  const market = [{ assetId: 'x', lastQuote: 13, origin: brapi, closes: benchmark.closes, transactions }]
  t.same(months(market), [false, false, false, false, false], 'every price a market close or quote')
  t.same(months(market, { lastQuote: 130, closes: benchmark.closes.slice(2) }), [true, true, true, true, true],
    'the benchmark missing in the first month: every month\'s change from it is not the index\'s')
})

t.test('labels', async t => {
  t.equal(longLabel('2026-01'), 'Jan.2026')
  t.equal(longLabel('2025-12'), 'Dez.2025')
  t.equal(shortLabel('2026-05'), 'Mai/26')
  t.equal(shortLabel('2009-02'), 'Fev/09')
})

t.test('an asset outside the portfolio given is a programming error', async t => {
  t.throws(() => buildDashboard({
    asset: { id: 'x', symbol: 'X', name: 'X', quantity: 1, imageUrl: '' },
    portfolio: [],
    benchmark: undefined,
    now: new Date()
  }), /part of its portfolio/)
})
