import t from 'tap'
import { buildDataApp, buildTestApp, forEachEngine } from '../../helper.js'
import { startFakePluggy, type FakePluggy } from '../../fixtures/fake-pluggy.js'
import { pluggyInvestment, pluggyInvestmentTransaction } from '../../fixtures/pluggy-shapes.js'
import { ANA, asUser } from '../../fixtures/owners.js'
import { ended, holdingsOf, imported, importConfig, portfolioOf } from './import-helpers.js'

/** A broker's item of ana's: shares with a year of history, a CDB, a real-estate fund, a dollar fund, one withdrawn. */
function brokerOfAna (pluggy: FakePluggy): void {
  pluggy.items.set('item-ana', ANA)
  const investments = [
    pluggyInvestment('inv-petr', 'item-ana', { code: 'PETR4', quantity: 100, value: 38.5, balance: 3850 }),
    pluggyInvestment('inv-cdb', 'item-ana', {
      type: 'FIXED_INCOME',
      subtype: 'CDB',
      code: null,
      name: 'CDB Banco X 110% CDI',
      quantity: 1,
      value: 10_500,
      balance: 10_500,
      amount: 10_800,
      amountOriginal: 10_000,
      issueDate: '2024-01-10T00:00:00.000Z',
      dueDate: '2027-01-10T00:00:00.000Z',
      issuer: 'Banco X',
      rate: 110,
      rateType: 'CDI',
      isin: 'BRBCOXCDB001'
    }),
    pluggyInvestment('inv-hglg', 'item-ana', {
      subtype: 'REAL_ESTATE_FUND',
      code: 'HGLG11',
      name: 'CSHG LOGISTICA FII',
      quantity: 20,
      value: 160,
      balance: 3200,
      purchaseDate: '2023-03-01T00:00:00.000Z'
    }),
    pluggyInvestment('inv-usd', 'item-ana', { type: 'MUTUAL_FUND', code: null, currencyCode: 'USD' }),
    pluggyInvestment('inv-out', 'item-ana', {
      code: 'VALE3', name: 'VALE ON', quantity: 0, value: 60, balance: 0, status: 'TOTAL_WITHDRAWAL'
    })
  ]
  for (const investment of investments) pluggy.investments.set(investment.id as string, investment)
  pluggy.investmentTransactions.set('inv-petr', [
    pluggyInvestmentTransaction('t-buy', 'inv-petr', {
      quantity: 30,
      value: 30,
      amount: 900,
      date: '2025-06-03T00:00:00.000Z',
      tradeDate: '2025-06-02T00:00:00.000Z',
      expenses: { brokerageFee: 4.9, settlementFee: 0.1, incomeTax: null }
    }),
    pluggyInvestmentTransaction('t-sell', 'inv-petr', {
      type: 'SELL', quantity: 10, value: 35, amount: 350, date: '2025-08-01T00:00:00.000Z', tradeDate: null
    }),
    pluggyInvestmentTransaction('t-tax', 'inv-petr', { type: 'TAX', quantity: null, value: null, amount: 12 })
  ])
  pluggy.investmentTransactions.set('inv-out', [
    pluggyInvestmentTransaction('t-vale', 'inv-out', {
      quantity: 5, value: 60, date: '2025-09-01T00:00:00.000Z', tradeDate: null
    })
  ])
}

forEachEngine(t, 'an import brings the broker\'s investments and trades; another records nothing twice', async (
  t, engine
) => {
  const pluggy = await startFakePluggy(t)
  brokerOfAna(pluggy)
  const app = await buildDataApp(t, engine, importConfig(pluggy))
  const portfolioId = await portfolioOf(app, ANA)

  const asked = await app.inject({
    method: 'POST', url: `/portfolios/${portfolioId}/imports`, headers: asUser(ANA), payload: { itemId: 'item-ana' }
  })
  t.equal(asked.statusCode, 202)
  t.match(asked.json(), { portfolioId, itemId: 'item-ana', status: 'queued', createdAt: String })

  const first = await ended(app, ANA, portfolioId, (asked.json() as { id: string }).id)
  t.match(first, {
    status: 'done',
    startedAt: String,
    finishedAt: String,
    error: null,
    counts: { investments: 5, assetsCreated: 4, assetsUpdated: 0, transactionsRecorded: 7, skipped: 2 }
  })
  t.same(first.skipped.map(({ investmentId, transactionId }) => [investmentId, transactionId]).sort(),
    [['inv-petr', 't-tax'], ['inv-usd', null]], 'the tax, and the investment in dollars, each with its reason')

  const held = await holdingsOf(app, ANA, portfolioId)
  t.same([...held.keys()].sort(), ['inv-cdb', 'inv-hglg', 'inv-out', 'inv-petr'])
  const petr = held.get('inv-petr')
  t.match(petr?.asset, { symbol: 'PETR4', type: 'STOCK', quantity: 100, priceSource: null, asOf: null })
  t.same(petr?.transactions.map(({ type, date, quantity, price, fee, estimated, investmentTransactionId: id }) =>
    [type, date, quantity, price, fee, estimated, id]), [
    // What a year of history does not explain: the day before the first trade, at its price.
    ['BUY', '2025-06-01', 80, 30, 0, true, null],
    ['BUY', '2025-06-02', 30, 30, 5, false, 't-buy'],
    ['SELL', '2025-08-01', 10, 35, 0, false, 't-sell']
  ], 'the opening, then the institution\'s trades (date the tradeDate, else date; fee the expenses)')
  t.match(held.get('inv-cdb'), {
    asset: {
      name: 'CDB Banco X 110% CDI',
      symbol: 'BRBCOXCDB001',
      type: 'BOND',
      quantity: 1,
      price: 10_500,
      priceSource: 'institution',
      asOf: '2026-01-15',
      issuer: 'Banco X',
      dueDate: '2027-01-10',
      rate: 110,
      rateType: 'CDI',
      isin: 'BRBCOXCDB001'
    },
    transactions: [{ type: 'BUY', date: '2024-01-10', quantity: 1, price: 10_000, estimated: true }]
  }, 'no ticker: the institution\'s own figures, opened at what was put in on its issue day')
  t.match(held.get('inv-hglg'), {
    asset: { symbol: 'HGLG11', type: 'FUND', quantity: 20, priceSource: null },
    transactions: [{ type: 'BUY', date: '2023-03-01', quantity: 20, estimated: true }]
  }, 'a listed fund: a FUND with its ticker, opened on its purchase day')
  t.match(held.get('inv-out'), {
    asset: { symbol: 'VALE3', quantity: 0 },
    transactions: [
      { type: 'BUY', date: '2025-09-01', quantity: 5, estimated: false },
      { type: 'SELL', quantity: 5, price: 60, estimated: true }
    ]
  }, 'withdrawn: sold to zero at its average price')
  t.equal(held.get('inv-out')?.transactions.length, 2)

  // Ana records a buy by hand; the next import keeps it and makes the opening smaller to match the institution.
  const assetId = petr?.asset.id ?? ''
  const byHand = await app.inject({
    method: 'POST',
    url: `/portfolio-assets/${assetId}/transactions`,
    headers: asUser(ANA),
    payload: { type: 'BUY', date: '2025-07-01', quantity: 5, price: 32 }
  })
  t.equal(byHand.statusCode, 201)
  const second = await imported(app, ANA, portfolioId, 'item-ana')
  t.match(second.counts, { investments: 5, assetsCreated: 0, assetsUpdated: 1, transactionsRecorded: 1, skipped: 2 })
  const again = (await holdingsOf(app, ANA, portfolioId)).get('inv-petr')
  t.equal(again?.asset.quantity, 100, 'still what the institution holds')
  t.same(again?.transactions.map(({ type, quantity, estimated }) => [type, quantity, estimated]), [
    ['BUY', 75, true], ['BUY', 30, false], ['BUY', 5, false], ['SELL', 10, false]
  ], 'the hand-recorded buy stands; no trade of the institution recorded twice')

  // A price of her own stands while the institution reports nothing new.
  const patched = await app.inject({
    method: 'PATCH', url: `/portfolio-assets/${assetId}`, headers: asUser(ANA), payload: { price: 41.25 }
  })
  t.equal(patched.statusCode, 200)
  const beforeThird = await holdingsOf(app, ANA, portfolioId)
  const tagOf = async (): Promise<unknown> =>
    (await app.inject({ url: `/portfolio-assets/${assetId}`, headers: asUser(ANA) })).headers.etag
  const tagBefore = await tagOf()
  const third = await imported(app, ANA, portfolioId, 'item-ana')
  t.match(third.counts, { assetsCreated: 0, assetsUpdated: 0, transactionsRecorded: 0 }, 'nothing new: nothing written')
  t.match((await holdingsOf(app, ANA, portfolioId)).get('inv-petr')?.asset, { quantity: 100, price: 41.25 })
  t.same(await holdingsOf(app, ANA, portfolioId), beforeThird, 'every asset and transaction as before it')
  t.equal(await tagOf(), tagBefore, 'the asset\'s row not written again')
  const list = await app.inject({ url: `/portfolios/${portfolioId}/imports`, headers: asUser(ANA) })
  t.same((list.json() as Array<{ id: string }>).map(({ id }) => id), [third.id, second.id, first.id], 'latest first')
})

t.test('GraphQL: importInvestments and Portfolio.imports answer as REST does', async t => {
  const pluggy = await startFakePluggy(t)
  brokerOfAna(pluggy)
  const app = await buildTestApp(t, importConfig(pluggy))
  const portfolioId = await portfolioOf(app, ANA)
  interface Answer {
    data?: { importInvestments?: { id: string }, portfolio?: { imports: unknown[] } }
    errors?: Array<{ extensions?: { code?: string } }>
  }
  const graphql = async (query: string, variables: Record<string, unknown>): Promise<Answer> => {
    const payload = { query, variables }
    return (await app.inject({ method: 'POST', url: '/graphql', headers: asUser(ANA), payload })).json()
  }
  const asked = await graphql('mutation ($p: ID!, $i: ID!) { importInvestments(portfolioId: $p, itemId: $i) ' +
    '{ id portfolioId itemId status } }', { p: portfolioId, i: 'item-ana' })
  t.match(asked.data?.importInvestments, { portfolioId, itemId: 'item-ana', status: 'queued' })
  const done = await ended(app, ANA, portfolioId, String(asked.data?.importInvestments?.id))
  const listed = await graphql('query ($p: ID!) { portfolio(id: $p) { imports { id status counts { investments ' +
    'assetsCreated assetsUpdated transactionsRecorded skipped } skipped { investmentId transactionId reason } ' +
    'error } } }', { p: portfolioId })
  t.same(listed.data?.portfolio?.imports, [{
    id: done.id, status: 'done', counts: done.counts, skipped: done.skipped, error: null
  }])
  pluggy.items.set('item-bia', 'bia')
  const refused = await graphql('mutation ($p: ID!, $i: ID!) { importInvestments(portfolioId: $p, itemId: $i) ' +
    '{ id } }', { p: portfolioId, i: 'item-bia' })
  t.equal(refused.errors?.[0]?.extensions?.code, 'FORBIDDEN_PRINCIPAL')
})
