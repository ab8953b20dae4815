import t from 'tap'
import fc from 'fast-check'
import { buildDashboard } from '../../src/domain/dashboard-calculation.js'
import {
  inReais, inReaisAll, monthlyClosesInReais, quotesInReais, quotesInReaisOrNone, ratesOrNone
} from '../../src/domain/reais.js'
import type {
  ExchangeRate, PriceHistory, ProviderQuote, QuoteProvider, RateObservation
} from '../../src/quotes/provider.js'
import { positionValue } from '../../src/schemas/money.js'
import { silentLog as log } from '../helper.js'

const T1 = '2026-11-21T20:07:46.000Z'
const T0 = '2026-11-21T17:00:00.000Z'

/** A provider of fixed answers: quotes, rates, histories and rate histories a test gives. */
function provider (given: {
  quotes?: Record<string, ProviderQuote>
  rates?: Record<string, ExchangeRate> | 'failing'
  histories?: Record<string, PriceHistory>
  rateHistories?: Record<string, RateObservation[]> | 'failing'
}): QuoteProvider & { asked: string[] } {
  const asked: string[] = []
  const { rates, rateHistories } = given
  return {
    source: 'test',
    asked,
    quote: async symbol => given.quotes?.[symbol],
    history: async symbol => given.histories?.[symbol],
    rates: async currencies => {
      asked.push(`rates ${currencies.join()}`)
      if (rates === 'failing') throw new Error('down')
      return new Map(currencies.map(currency => [currency, rates?.[currency]]))
    },
    rateHistory: async currency => {
      asked.push(`history ${currency}`)
      if (rateHistories === 'failing') throw new Error('down')
      return rateHistories?.[currency]
    }
  }
}

const usd = (rate: string, lastUpdate = T0): ExchangeRate => ({ currency: 'USD', rate, lastUpdate })

t.test('a price in another currency × its rate, in exact decimals, rounded once to 8 decimals', async t => {
  t.equal(inReais(0.1, '3'), 0.3, 'not 0.30000000000000004')
  t.equal(1.15 * 5.1, 5.864999999999999, 'what binary floats would give')
  t.equal(inReais(1.15, '5.1'), 5.865)
  t.equal(positionValue(1, inReais(1.15, '5.1')).toNumber(), 5.87, 'so a position rounds half away from zero, right')
  t.equal(inReais(4.35, '100'), 435, 'not 434.99999999999994')
  t.equal(inReais(0.00000001, '0.4'), 0, 'half a hundred-millionth of a real is below the last decimal')
  t.equal(inReais(0.00000003, '0.5'), 0.00000002, '1.5e-8: half away from zero')
  // Integers only: price and rate scaled to whole units, the product rounded half up by hand.
  fc.assert(fc.property(
    fc.integer({ min: 0, max: 1e13 }), fc.integer({ min: 1, max: 1e6 }),
    (priceUnits, rateUnits) => {
      const product = BigInt(priceUnits) * BigInt(rateUnits)
      const expected = (product + 5000n) / 10000n
      const got = inReais(priceUnits / 1e8, String(rateUnits / 1e4))
      return BigInt(Math.round(got * 1e8)) === expected
    }
  ), { numRuns: 2000 })
})

t.test('quotes in reais: BRL as given, another currency converted with its rate, none without one', async t => {
  const quotes = new Map<string, ProviderQuote | undefined>([
    ['PETR4', { symbol: 'PETR4', price: 38.5, currency: 'BRL', lastUpdate: T1 }],
    ['AAPL', { symbol: 'AAPL', price: 230.12, currency: 'USD', lastUpdate: T1 }],
    ['SAP', { symbol: 'SAP', price: 200, currency: 'EUR', lastUpdate: T1 }],
    ['GONE3', undefined]
  ])
  const rated = provider({ rates: { USD: usd('5.4321') } })
  const converted = await inReaisAll(rated, quotes, log)
  t.same(converted.get('PETR4'), { symbol: 'PETR4', price: 38.5, lastUpdate: T1 })
  t.same(converted.get('AAPL'), { symbol: 'AAPL', price: 1250.034852, lastUpdate: T0 }, 'priced as of the older time')
  t.equal(converted.get('SAP'), undefined, 'no rate: unquoted, never summed as reais')
  t.equal(converted.get('GONE3'), undefined)
  t.same(rated.asked, ['rates USD,EUR'], 'one request for every currency')
  const later = await inReaisAll(provider({ rates: { USD: usd('5.4321', '2026-11-22T00:00:00.000Z') } }), quotes, log)
  t.equal(later.get('AAPL')?.lastUpdate, T1, 'a rate fresher than the quote: the quote\'s time')
  t.equal((await inReaisAll(provider({ rates: 'failing' }), quotes, log)).get('AAPL'), undefined, 'rates failing')
  const { rates: _, ...withoutRates } = provider({})
  t.equal((await inReaisAll(withoutRates, quotes, log)).get('AAPL'), undefined, 'a provider without rates')
  t.same(await ratesOrNone(rated, [], log), new Map(), 'no currency: nothing asked')
  t.same(rated.asked, ['rates USD,EUR'])

  const failing: QuoteProvider = {
    source: 'x', quote: async () => { throw new Error('down') }, history: async () => undefined
  }
  await t.rejects(quotesInReais(failing, ['PETR4'], log), /down/, 'a dashboard hears of the failure')
  t.same(await quotesInReaisOrNone(failing, ['PETR4'], log), new Map(), 'a valuation counts at book value')
  t.same(await quotesInReais(failing, [], log), new Map())
})

t.test('monthly closes in reais: each month converted with its own rate, else estimated', async t => {
  const history = (currency: string): PriceHistory => ({
    currency,
    closes: [
      { date: '2026-06-01', close: 100 },
      { date: '2026-07-01', close: 110 },
      { date: '2026-08-01', close: 120 },
      { date: '2026-08-15', close: 121 },
      { date: '2026-09-01', close: 130 }
    ]
  })
  const reais = await monthlyClosesInReais(provider({ histories: { X: history('BRL') } }), 'X', '2026-06', log)
  t.same(reais.map(({ month, close, estimated }) => [month, close, estimated]), [
    ['2026-06', 100, false], ['2026-07', 110, false], ['2026-08', 121, false], ['2026-09', 130, false]
  ], 'in reais: as given, the last close of each month')

  const rates = {
    USD: [
      { date: '2026-07-15', rate: '5' }, { date: '2026-07-31', rate: '5.1' }, { date: '2026-09-30', rate: '5.3' }
    ]
  }
  const dollars = provider({ histories: { X: history('USD') }, rateHistories: rates, rates: { USD: usd('5.5') } })
  t.same((await monthlyClosesInReais(dollars, 'X', '2026-06', log)).map(({ month, close, estimated }) =>
    [month, close, estimated]), [
    ['2026-06', 510, true],
    ['2026-07', 561, false],
    ['2026-08', 617.1, true],
    ['2026-09', 689, false]
  ], 'June: before the rate history, July\'s rate; August: none of its own, July\'s again')
  t.notOk(dollars.asked.includes('rates USD'), 'with a history, today\'s rate is not asked')

  const noHistory = provider({ histories: { X: history('USD') }, rates: { USD: usd('5.5') } })
  t.same((await monthlyClosesInReais(noHistory, 'X', '2026-06', log)).map(month => [month.close, month.estimated]),
    [[550, true], [605, true], [665.5, true], [715, true]], 'no rate history: today\'s rate, every month estimated')
  const failing = provider({ histories: { X: history('USD') }, rates: { USD: usd('5.5') }, rateHistories: 'failing' })
  t.equal((await monthlyClosesInReais(failing, 'X', '2026-06', log)).length, 4, 'a failing rate history: the same')
  t.same(await monthlyClosesInReais(provider({ histories: { X: history('USD') } }), 'X', '2026-06', log), [],
    'no rate at all: no closes (the symbol is unquoted anyway)')
  t.same(await monthlyClosesInReais(provider({}), 'X', '2026-06', log), [], 'no history')
})

t.test('docs/api.md\'s worked example of a dollar asset', async t => {
  const dollars = provider({
    histories: {
      AAPL: { currency: 'USD', closes: [{ date: '2026-09-01', close: 200 }, { date: '2026-10-01', close: 210 }] }
    },
    rateHistories: { USD: [{ date: '2026-10-01', rate: '5.35' }, { date: '2026-10-30', rate: '5.40' }] },
    rates: { USD: usd('5.5') }
  })
  const closes = await monthlyClosesInReais(dollars, 'AAPL', '2026-09', log)
  const lastQuote = inReais(230, '5.5')
  const dashboard = buildDashboard({
    asset: { id: 'aapl', symbol: 'AAPL', name: 'Apple', quantity: 3, imageUrl: '' },
    portfolio: [{
      assetId: 'aapl',
      lastQuote,
      origin: { source: 'brapi.dev', lastUpdate: T0 },
      closes,
      transactions: [
        { id: 'a', type: 'BUY', date: '2026-09-10', quantity: 2, price: 1050, fee: 0 },
        { id: 'b', type: 'BUY', date: '2026-10-10', quantity: 1, price: 1150, fee: 0 }
      ]
    }],
    benchmark: {
      lastQuote: 132_000,
      closes: [{ month: '2026-09', close: 120_000 }, { month: '2026-10', close: 126_000 }]
    },
    now: new Date('2026-11-15T12:00:00Z')
  })
  t.match(dashboard.basicInfo, {
    averagePrice: 1083.33333333,
    lastQuote: 1265,
    investedValue: 3250,
    grossValue: 3795,
    result: 545,
    resultPercentage: 16.77
  })
  t.same(dashboard.monthlyHistory.map(month => [
    month.month, month.quantity, month.currentBalance, month.returnPercentage, month.portfolioPercentage,
    month.ibovPercentage, month.estimated
  ]), [
    ['Set.2026', 2, 2160, 2.86, 100, 0, true],
    ['Out.2026', 3, 3402, 4.68, 100, 5, false],
    ['Nov.2026', 3, 3795, 16.77, 100, 10, false]
  ])
})
