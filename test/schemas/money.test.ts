import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import Big from 'big.js'
import { sql } from 'kysely'
import {
  decimal, decimalsOf, fromCents, money, percentage, positionValue, unitAmount
} from '../../src/schemas/money.js'
import { connect } from '../../src/store/connect.js'
import { migrate } from '../../src/store/migrate.js'
import { Store } from '../../src/store/store.js'
import { apiKey, assertErrorBody, buildDataApp, forEachEngine } from '../helper.js'

t.test('money is rounded half away from zero from the exact decimal product', async t => {
  // 1.005 is 1.00499999999999989… as a double: rounding the float would give 1.00.
  t.equal(money(positionValue(1.005, 1)), 1.01)
  t.equal(money(positionValue(0.5, 0.01)), 0.01, 'a tie of 0.005 goes up')
  t.equal(money(decimal(-0.005)), -0.01, 'and away from zero below it')
  t.equal(money(positionValue(3, 0.1)), 0.3, 'not 0.30000000000000004')
  t.equal(money(positionValue(1234.567, 92.68)), 114419.67)
  t.equal(unitAmount(0.123456785), 0.12345679)
  t.equal(unitAmount(decimal(100).div(3)), 33.33333333)
  t.equal(percentage(decimal(1), decimal(3)), 33.33)
  t.equal(percentage(decimal(1), decimal(0)), 0)
  // 0.004 and twenty 9s %: rounded once from the exact quotient, 0; not 0.01 (from a 20-place expansion, 0.005).
  t.equal(percentage(new Big('4999999999999999999.99'), new Big('1e23')), 0)
  t.equal(fromCents('11442627'), 114426.27, 'PostgreSQL sums arrive as text')
  t.equal(fromCents(30), 0.3)
  t.same(
    [decimalsOf(0.1), decimalsOf(38.45), decimalsOf(1e-9), decimalsOf(12), decimalsOf(1e21), decimalsOf(Number.NaN)],
    [1, 2, 9, 0, 0, Infinity]
  )
})

forEachEngine(t, 'amounts in answers have 2 decimals and totals are exact sums of what is shown', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const portfolio = (await app.inject({
    method: 'POST',
    url: '/portfolios',
    headers: apiKey(),
    payload: { name: 'Exact', userId: 'money' }
  })).json()
  const positions = [[1.005, 1], [3, 0.1], [1234.567, 92.68], [0.5, 0.01], [0.00000001, 0.00000001]] as const
  const created = []
  for (const [quantity, price] of positions) {
    const res = await app.inject({
      method: 'POST',
      url: '/portfolio-assets',
      headers: apiKey(),
      payload: { name: 'A', symbol: 'TEST11', type: 'FUND', quantity, price, portfolioId: portfolio.id }
    })
    t.equal(res.statusCode, 201)
    created.push(res.json() as { id: string, totalValue: number })
  }
  t.same(created.map(asset => asset.totalValue), [1.01, 0.3, 114419.67, 0.01, 0])
  // As doubles, 1.01 + 0.3 + 114419.67 + 0.01 is 114420.99000000002: the sums below are exact.

  const detail = (await app.inject({ method: 'GET', url: `/portfolios/${portfolio.id}`, headers: apiKey() })).json()
  t.equal(detail.totalValue, 114420.99)
  const listed = (await app.inject({ method: 'GET', url: '/portfolios?userId=money', headers: apiKey() })).json()
  t.equal(listed[0].totalValue, 114420.99)
  t.equal((await app.inject({
    method: 'GET',
    url: `/portfolios/${portfolio.id}/value`,
    headers: apiKey()
  })).json().totalValue, 114420.99)
  t.equal((await app.inject({ method: 'GET', url: '/stats', headers: apiKey() })).json().totalValue, 114420.99)

  // A PATCH recomputes the value from the stored other field.
  const patched = await app.inject({
    method: 'PATCH',
    url: `/portfolio-assets/${created[1]?.id ?? ''}`,
    headers: apiKey(),
    payload: { quantity: 0.7 }
  })
  t.equal(patched.json().totalValue, 0.07)
  t.equal((await app.inject({
    method: 'GET',
    url: `/portfolios/${portfolio.id}`,
    headers: apiKey()
  })).json().totalValue, 114420.76)

  // A sale's quantity is an exact difference (0.7 − 0.4 is 0.29999999999999993 in floats), and so is
  // what is left of the position.
  await app.inject({
    method: 'PATCH',
    url: `/portfolio-assets/${created[1]?.id ?? ''}`,
    headers: apiKey(),
    payload: { quantity: 0.3 }
  })
  const dashboard = (await app.inject({
    method: 'GET',
    url: `/portfolio-assets/${created[1]?.id ?? ''}/dashboard`,
    headers: apiKey()
  })).json()
  t.same(dashboard.transactions.map((tx: { type: string, quantity: number }) => [tx.type, tx.quantity]),
    [['BUY', 3], ['SELL', 2.3], ['SELL', 0.4]])
  t.equal(dashboard.basicInfo.quantity, 0.3)
  t.equal(dashboard.basicInfo.investedValue, 0.03)
})

forEachEngine(t, 'a quantity or price with more than 8 decimals, or a value over the maximum, ' +
  'is 400 and writes nothing', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const portfolio = (await app.inject({
    method: 'POST',
    url: '/portfolios',
    headers: apiKey(),
    payload: { name: 'Bounds', userId: 'money' }
  })).json()
  const asset = { name: 'A', symbol: 'TEST11', type: 'FUND', quantity: 1, price: 1, portfolioId: portfolio.id }
  const tooPrecise = await app.inject({
    method: 'POST',
    url: '/portfolio-assets',
    headers: apiKey(),
    payload: { ...asset, price: 0.123456789, quantity: 1e-9 }
  })
  assertErrorBody(t, tooPrecise.json(), 400, '/portfolio-assets')
  t.same(tooPrecise.json().message, [
    'quantity must be a number conforming to the specified constraints',
    'price must be a number conforming to the specified constraints'
  ])

  const created = (await app.inject({
    method: 'POST',
    url: '/portfolio-assets',
    headers: apiKey(),
    payload: { ...asset, price: 1e12 }
  })).json()
  const tooLarge = await app.inject({
    method: 'PATCH',
    url: `/portfolio-assets/${created.id as string}`,
    headers: apiKey(),
    payload: { quantity: 1e12 }
  })
  assertErrorBody(t, tooLarge.json(), 400, `/portfolio-assets/${created.id as string}`)
  t.equal(tooLarge.json().message, 'totalValue must not be greater than 10000000000000')
  t.match((await app.inject({
    method: 'GET',
    url: `/portfolio-assets/${created.id as string}`,
    headers: apiKey()
  })).json(), { quantity: 1, totalValue: 1e12 }, 'unchanged')
  t.equal((await app.inject({
    method: 'GET',
    url: `/portfolio-assets/${created.id as string}/dashboard`,
    headers: apiKey()
  })).json().transactions.length, 1, 'no lot written')
})

t.test('migration 0004 rounds stored amounts to 8 decimals and computes each value in cents', async t => {
  const url = `sqlite:${join(mkdtempSync(join(tmpdir(), 'bff-money-')), 'bff.sqlite')}`
  const before = await connect(url)
  await migrate(before.db, 'sqlite', { upTo: '0003-asset-lots' })
  const stamp = '2026-01-01T00:00:00.000Z'
  await sql`insert into portfolios (id, name, description, user_id, created_at, updated_at)
    values ('p', 'Old', null, 'u', ${stamp}, ${stamp})`.execute(before.db)
  await sql`insert into portfolio_assets (id, portfolio_id, name, symbol, type, quantity, price, created_at, updated_at)
    values ('a', 'p', 'A', 'A', 'STOCK', ${0.7 - 0.4}, 1.005, ${stamp}, ${stamp}),
      ('b', 'p', 'B', 'B', 'STOCK', 3, 0.1, ${stamp}, ${stamp})`.execute(before.db)
  await sql`insert into asset_lots (id, asset_id, date, seq, quantity, price, created_at)
    values ('l', 'a', '2026-01-01', 1, ${0.7 - 0.4}, 1.005, ${stamp})`.execute(before.db)
  await before.db.destroy()

  const store = await Store.open(url)
  t.teardown(() => store.close())
  t.match((await store.assets.versioned('a'))?.value, { quantity: 0.3, price: 1.005, totalValue: 0.3 })
  t.same((await store.transactions.list('a', { limit: 10, offset: 0 }))?.map(lot => lot.quantity), [0.3])
  t.equal((await store.portfolios.portfolioOnly('p'))?.totalValue, 0.6)
})
