import t from 'tap'
import { planOf, tradesOf } from '../../src/domain/investments.js'
import { pluggyInvestment, pluggyInvestmentTransaction } from '../fixtures/pluggy-shapes.js'

/*
 * What an import makes of the aggregator's investments and their transactions (docs/aggregator.md#investments),
 * without the store or the network: each of Pluggy's types as one of the five asset types, the price's origin, and
 * every reason an investment or a transaction is left out.
 */

const TODAY = '2026-12-06'
const plan = (fields: Record<string, unknown>) => planOf(pluggyInvestment('inv', 'item', fields), TODAY)
const trades = (...fields: Array<Record<string, unknown>>) =>
  tradesOf('inv', fields.map((each, index) => pluggyInvestmentTransaction(`t${index}`, 'inv', each)), TODAY)

t.test('each type of Pluggy\'s as one asset type, listed or priced by its institution', async t => {
  const cases: Array<[string, Record<string, unknown>, object]> = [
    ['a stock', { type: 'EQUITY', subtype: 'STOCK', code: 'PETR4' }, { type: 'STOCK', symbol: 'PETR4' }],
    ['a BDR', { type: 'EQUITY', subtype: 'BDR', code: 'AAPL34' }, { type: 'STOCK', symbol: 'AAPL34' }],
    ['the fractional market: the same share', { code: 'petr4f' }, { type: 'STOCK', symbol: 'PETR4' }],
    ['a real-estate fund', { subtype: 'REAL_ESTATE_FUND', code: 'HGLG11' }, { type: 'FUND', symbol: 'HGLG11' }],
    ['an ETF', { type: 'ETF', subtype: null, code: 'BOVA11' }, { type: 'FUND', symbol: 'BOVA11' }],
    ['an older type of its own', { type: 'REAL_ESTATE_FUND', code: 'KNRI11' }, { type: 'FUND', symbol: 'KNRI11' }]
  ]
  for (const [name, fields, expected] of cases) {
    t.match(plan(fields), { ...expected, institution: { priceSource: null, asOf: null } }, name)
    t.equal((plan(fields) as { institutionPrice?: number }).institutionPrice, undefined, `${name}: quoted`)
  }
  const institution: Array<[string, Record<string, unknown>, object]> = [
    ['fixed income', { type: 'FIXED_INCOME', code: null, isin: 'BRSTNCLTN7D3' },
      { type: 'BOND', symbol: 'BRSTNCLTN7D3' }],
    ['a mutual fund, by its CNPJ', { type: 'MUTUAL_FUND', code: '12.345.678/0001-90' },
      { type: 'FUND', symbol: '12.345.678/0001-90' }],
    ['a security', { type: 'SECURITY', code: null, name: 'Previdência VGBL' },
      { type: 'FUND', symbol: 'PREVIDÊNCIA VGBL' }],
    ['a COE', { type: 'COE', code: null }, { type: 'FUND' }],
    ['another type', { type: 'OTHER', code: null }, { type: 'FUND' }],
    ['a type Pluggy adds later', { type: 'CRYPTO_FUND', code: 'XYZW11' }, { type: 'FUND', symbol: 'XYZW11' }],
    ['an equity whose code is no ticker', { code: 'PETROBRAS' }, { type: 'STOCK', symbol: 'PETROBRAS' }]
  ]
  for (const [name, fields, expected] of institution) {
    t.match(plan({ quantity: 2, balance: 100, ...fields }), {
      ...expected, institution: { priceSource: 'institution', asOf: '2026-01-15' }, institutionPrice: 50
    }, `${name}: priced at balance ÷ quantity`)
  }
})

t.test('the institution\'s figures: its price, quantity, opening and what it says of the asset', async t => {
  t.match(plan({ type: 'FIXED_INCOME', code: null, quantity: null, balance: null, amount: null, value: 1234.5 }), {
    held: { toNumber: Function }, institutionPrice: 1234.5
  }, 'no quantity: one unit, at its value when no balance is given')
  t.match(plan({ type: 'FIXED_INCOME', code: null, quantity: 1, balance: null, amount: 980 }),
    { institutionPrice: 980 }, 'no balance: the gross amount')
  t.match(plan({ status: 'TOTAL_WITHDRAWAL', quantity: 0, balance: 0, value: 40 }), { held: { toNumber: Function } })
  t.equal((plan({ status: 'TOTAL_WITHDRAWAL', quantity: 30 }) as { held: { toNumber: () => number } }).held.toNumber(),
    0, 'withdrawn: nothing held, whatever its last quantity')
  t.match(plan({
    amountOriginal: 3000, quantity: 100, purchaseDate: '2020-05-04T00:00:00.000Z', issueDate: '2019-01-01T00:00:00Z'
  }), { openingPrice: 30, purchasedOn: '2020-05-04' }, 'what was put in ÷ quantity; the purchase before the issue')
  t.match(plan({ issueDate: '2019-01-01T00:00:00Z' }), { purchasedOn: '2019-01-01', openingPrice: undefined })
  t.match(plan({ purchaseDate: '2099-01-01T00:00:00Z', date: 'not a date' }), { purchasedOn: undefined, asOf: TODAY },
    'a day in the future is no purchase; no figures\' day: the import\'s')
  t.match(plan({
    type: 'FIXED_INCOME',
    code: null,
    issuer: '  Banco X  ',
    dueDate: '2031-01-01T00:00:00Z',
    rate: 12.5,
    rateType: 'PRE',
    isin: 'BRBCOXCDB001'
  }), {
    institution: { issuer: 'Banco X', dueDate: '2031-01-01', rate: 12.5, rateType: 'PRE', isin: 'BRBCOXCDB001' }
  }, 'kept as given, trimmed; a due date in the future kept')
  t.match(plan({ dueDate: 'someday', issuer: '   ' }), { institution: { dueDate: null, issuer: null } })
  t.match(plan({ purchaseDate: '2024-02-30T00:00:00Z', dueDate: '2031-02-29T00:00:00Z' }),
    { purchasedOn: undefined, institution: { dueDate: null } }, 'a day the calendar has not (Date reads March\'s 1st)')
})

t.test('an investment that cannot be held is skipped, with its reason', async t => {
  const skipped: Array<[string, unknown, RegExp]> = [
    ['not described', { id: 'inv', name: 'x' }, /não descreveu/],
    ['not even an id', 42, /não descreveu/],
    ['no name', pluggyInvestment('inv', 'item', { name: '  ' }), /não tem nome/],
    ['in dollars', pluggyInvestment('inv', 'item', { currencyCode: 'USD' }), /Em USD/],
    ['a quantity past the bounds', pluggyInvestment('inv', 'item', { quantity: 1e13 }), /quantidade/],
    ['no balance nor value', pluggyInvestment('inv', 'item', {
      type: 'MUTUAL_FUND', code: null, balance: null, amount: null, value: null
    }), /quanto vale/],
    ['a price past the bounds', pluggyInvestment('inv', 'item', {
      type: 'MUTUAL_FUND', code: null, quantity: 0.00000001, balance: 1e6
    }), /quanto vale/]
  ]
  for (const [name, raw, reason] of skipped) {
    t.match(planOf(raw, TODAY), { transactionId: null, reason }, name)
  }
  t.equal((planOf(42, TODAY) as { investmentId: string }).investmentId, 'desconhecido')
})

t.test('buys and sales as dated trades, in order; everything else skipped with its reason', async t => {
  const { trades: made, skipped } = trades(
    { type: 'SELL', quantity: 5, value: 40, date: '2025-03-10T15:00:00Z', tradeDate: null },
    {
      type: 'BUY',
      quantity: 10,
      value: null,
      amount: 305,
      date: '2025-03-10T09:00:00Z',
      tradeDate: null,
      expenses: { brokerageFee: 4.9, incomeTax: null, custodyFee: 0.1 }
    },
    { type: 'BUY', quantity: 2, value: 31, date: '2025-03-12T00:00:00Z', tradeDate: '2025-03-10T10:00:00Z' },
    { type: 'TAX', quantity: null, amount: 3 },
    { type: 'TRANSFER', quantity: 3 },
    { type: null },
    { type: 'BUY', date: '1989-12-31T00:00:00Z', tradeDate: null },
    { type: 'BUY', date: '2099-01-01T00:00:00Z', tradeDate: null },
    { type: 'BUY', quantity: 0 },
    { type: 'BUY', quantity: null },
    { type: 'SELL', value: null, amount: null },
    { type: 'BUY', quantity: 1e12, value: 1e12 }
  )
  t.same(made.map(({ type, date, quantity, price, fee, investmentTransactionId }) =>
    [type, date, quantity, price, fee, investmentTransactionId]), [
    ['BUY', '2025-03-10', 10, 30.5, 5, 't1'],
    ['BUY', '2025-03-10', 2, 31, 0, 't2'],
    ['SELL', '2025-03-10', 5, 40, 0, 't0']
  ], 'by day, then by the time made; the price amount ÷ quantity when no value; the fee the expenses summed')
  t.same(skipped.map(({ transactionId, reason }) => [transactionId, reason.split(/[(:]/)[0]?.trim()]), [
    ['t3', 'Imposto'],
    ['t4', 'Transferência'],
    ['t5', 'Transação sem tipo de compra ou venda'],
    ['t6', 'Data fora do intervalo aceito'],
    ['t7', 'Data fora do intervalo aceito'],
    ['t8', 'Transação sem quantidade'],
    ['t9', 'Transação sem quantidade'],
    ['t10', 'Transação sem preço'],
    ['t11', 'Transação de valor acima do limite de um ativo']
  ])
  t.match(tradesOf('inv', [{ id: 't', type: 'BUY' }], TODAY).skipped,
    [{ transactionId: null, reason: /não descreveu/ }], 'a transaction without its date')
})
