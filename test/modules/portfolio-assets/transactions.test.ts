import t, { type Test } from 'tap'
import type { App } from '../../../src/app.js'
import {
  apiKey, assertErrorBody, buildDataApp, buildTestApp, forEachEngine, freshDatabase, NEEDS_POSTGRES, testNeeding
} from '../../helper.js'
import { startFakeBrapi } from '../../fixtures/fake-brapi.js'
import { openEventStream } from '../../fixtures/event-stream.js'
import { until } from '../../fixtures/until.js'
import { NOT_IMPORTED } from '../../fixtures/portfolios.js'

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** `days` before today (UTC), `YYYY-MM-DD`. */
function daysAgo (days: number): string {
  return new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 10)
}

interface Api {
  send: (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object, headers?: object) =>
  Promise<{ status: number, body: any, etag?: string, headers: Record<string, unknown> }>
  portfolio: () => Promise<string>
  asset: (portfolioId: string, fields?: object) => Promise<string>
}

function apiOf (app: App): Api {
  const send: Api['send'] = async (method, url, payload, headers = {}) => {
    const res = await app.inject({
      method, url, headers: { ...apiKey(), ...headers }, ...(payload === undefined ? {} : { payload })
    })
    const etag = res.headers.etag
    return { status: res.statusCode, body: res.json(), headers: res.headers, ...(etag === undefined ? {} : { etag }) }
  }
  return {
    send,
    portfolio: async () => (await send('POST', '/portfolios', { name: 'Dated', userId: 'tx' })).body.id,
    asset: async (portfolioId, fields = {}) => (await send('POST', '/portfolio-assets', {
      name: 'Petrobras PN', symbol: 'PETR4', type: 'STOCK', quantity: 100, price: 32, portfolioId, ...fields
    })).body.id
  }
}

forEachEngine(t, 'buys and sales make the asset\'s quantity, average price and value, and its portfolio\'s',
  async (t, engine) => {
    const app = await buildDataApp(t, engine)
    const { send, portfolio, asset } = apiOf(app)
    const portfolioId = await portfolio()
    const id = await asset(portfolioId, { date: daysAgo(60) })
    const url = `/portfolio-assets/${id}/transactions`
    const buy = await send('POST', url, { type: 'BUY', date: daysAgo(30), quantity: 50, price: 36, fee: 4.9, x: 1 })
    t.equal(buy.status, 201)
    t.same(Object.keys(buy.body).sort(), [
      'assetId', 'createdAt', 'date', 'estimated', 'fee', 'id', 'investmentTransactionId', 'price', 'quantity',
      'totalValue', 'type'
    ], 'nothing else')
    t.match(buy.body, NOT_IMPORTED, 'recorded here: no investment transaction, not estimated')
    t.match(buy.body, { id: UUID, assetId: id, type: 'BUY', date: daysAgo(30), createdAt: ISO_MS })
    t.match(buy.body, { quantity: 50, price: 36, fee: 4.9, totalValue: 1800 })
    const assetUrl = `/portfolio-assets/${id}`
    t.match((await send('GET', assetUrl)).body, { quantity: 150, price: 33.33333333, totalValue: 5000 })

    const sale = await send('POST', url, { type: 'SELL', date: daysAgo(10), quantity: 30, price: 38 })
    t.equal(sale.status, 201)
    t.match(sale.body, { type: 'SELL', quantity: 30, price: 38, fee: 0, totalValue: 1140 })
    // A sale leaves the average price: 120 × 33.33333333 = 3999.9999996, to the cent.
    t.match((await send('GET', assetUrl)).body, { quantity: 120, price: 33.33333333, totalValue: 4000 })
    t.equal((await send('GET', `/portfolios/${portfolioId}/value`)).body.totalValue, 4000)
    t.equal((await send('GET', `/portfolios/${portfolioId}`)).body.totalValue, 4000)

    // Listed in the order they count: a back-dated buy among them by its date.
    const early = await send('POST', url, { type: 'BUY', date: daysAgo(45), quantity: 10, price: 30 })
    const listed = await send('GET', url)
    t.equal(listed.status, 200)
    t.same(listed.body.map((tx: { date: string, type: string }) => [tx.date, tx.type]), [
      [daysAgo(60), 'BUY'], [daysAgo(45), 'BUY'], [daysAgo(30), 'BUY'], [daysAgo(10), 'SELL']
    ])
    t.same((await send('GET', `${url}?limit=2&offset=1`)).body.map((tx: { id: string }) => tx.id),
      [early.body.id, buy.body.id], 'a page of them')

    // Undone: the position is replayed without it.
    const undone = await send('DELETE', `${url}/${String(early.body.id)}`)
    t.equal(undone.status, 200)
    t.same(undone.body, { message: 'Transação removida com sucesso', id: early.body.id })
    t.match((await send('GET', assetUrl)).body, { quantity: 120, price: 33.33333333, totalValue: 4000 })
    t.equal((await send('DELETE', `${url}/${String(early.body.id)}`)).status, 404, 'gone')

    // Everything sold: nothing held, at no price; the asset stays with its history.
    await send('POST', url, { type: 'SELL', date: daysAgo(0), quantity: 120, price: 40 })
    t.match((await send('GET', assetUrl)).body, { quantity: 0, price: 0, totalValue: 0 })
    t.equal((await send('GET', url)).body.length, 4)
  })

forEachEngine(t, 'a sale of more than is held at its date is 422 INSUFFICIENT_QUANTITY, and so is a removal ' +
  'that would leave less than nothing; neither writes anything', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const { send, portfolio, asset } = apiOf(app)
  const portfolioId = await portfolio()
  const id = await asset(portfolioId, { date: daysAgo(30), quantity: 100 })
  const url = `/portfolio-assets/${id}/transactions`
  const later = await send('POST', url, { type: 'BUY', date: daysAgo(5), quantity: 100, price: 40 })
  const before = await send('GET', `/portfolio-assets/${id}`)

  // 200 are held today, but only 100 twenty days ago.
  const backDated = await send('POST', url, { type: 'SELL', date: daysAgo(20), quantity: 150, price: 35 })
  t.equal(backDated.status, 422)
  assertErrorBody(t, backDated.body, 422, url)
  t.equal(backDated.body.code, 'INSUFFICIENT_QUANTITY')
  t.equal(backDated.body.message, `Quantidade insuficiente: em ${daysAgo(20)} a posição ficaria negativa`)
  // Before anything was bought.
  const tooEarly = await send('POST', url, { type: 'SELL', date: daysAgo(40), quantity: 1, price: 35 })
  t.equal(tooEarly.body.code, 'INSUFFICIENT_QUANTITY')

  const sold = await send('POST', url, { type: 'SELL', date: daysAgo(1), quantity: 150, price: 41 })
  t.equal(sold.status, 201, 'today 200 are held')
  // Without the later buy, that sale would sell 150 of 100.
  const removal = await send('DELETE', `${url}/${String(later.body.id)}`)
  t.equal(removal.status, 422)
  t.equal(removal.body.message, `Quantidade insuficiente: em ${daysAgo(1)} a posição ficaria negativa`)
  t.equal((await send('GET', url)).body.length, 3, 'nothing written, nothing removed')
  const after = await send('GET', `/portfolio-assets/${id}`)
  t.match(after.body, { quantity: 50 })
  t.not(after.etag, before.etag, 'only the accepted sale changed the asset')
  t.equal((await send('DELETE', `${url}/${String(sold.body.id)}`)).status, 200, 'the sale itself may go')
  const { quantity, price, totalValue } = before.body
  t.match((await send('GET', `/portfolio-assets/${id}`)).body, { quantity, price, totalValue }, 'back as it was')
})

forEachEngine(t, 'unknown assets and transactions are 404; bad input 400, before anything is written',
  async (t, engine) => {
    const app = await buildDataApp(t, engine)
    const { send, portfolio, asset } = apiOf(app)
    const id = await asset(await portfolio())
    const url = `/portfolio-assets/${id}/transactions`
    const body = { type: 'BUY', date: daysAgo(1), quantity: 1, price: 1 }
    for (const [method, path, payload] of [
      ['GET', '/portfolio-assets/nope/transactions'],
      ['POST', '/portfolio-assets/nope/transactions', body],
      ['DELETE', '/portfolio-assets/nope/transactions/nope']
    ] as const) {
      const res = await send(method, path, payload)
      t.equal(res.status, 404, `${method} ${path}`)
      t.equal(res.body.message, 'Ativo não encontrado')
    }
    t.equal((await send('GET', `/portfolio-assets/${'x'.repeat(65)}/transactions`)).status, 404)
    const unknown = await send('DELETE', `${url}/no-such-transaction`)
    t.equal(unknown.status, 404)
    t.equal(unknown.body.message, 'Transação não encontrada')
    t.equal((await send('DELETE', `${url}/${'y'.repeat(65)}`)).status, 404)

    const refusals: Array<[object, string[]]> = [
      [{ ...body, date: daysAgo(-2) }, [`maximal allowed date for date is ${daysAgo(0)}`]],
      [{ ...body, date: '1989-12-31' }, ['minimal allowed date for date is 1990-01-01']],
      [{ ...body, date: '2023-02-30' }, ['date must be a valid ISO 8601 date string']],
      [{ ...body, date: '15/03/2024' }, ['date must be a valid ISO 8601 date string']],
      [{ ...body, type: 'DIVIDEND' }, ['type must be one of the following values: BUY, SELL']],
      [{ ...body, fee: 0.001 }, ['fee must be a number conforming to the specified constraints']],
      [{ ...body, fee: -1 }, ['fee must not be less than 0']],
      [{ ...body, quantity: 0 }, ['quantity must be greater than 0']],
      [{ ...body, price: 1.123456789 }, ['price must be a number conforming to the specified constraints']],
      [{ type: 'SELL' }, [
        'date should not be empty', 'date must be a string', 'quantity should not be empty',
        'quantity must be a number conforming to the specified constraints', 'price should not be empty',
        'price must be a number conforming to the specified constraints'
      ]]
    ]
    for (const [payload, phrases] of refusals) {
      const res = await send('POST', url, payload)
      t.equal(res.status, 400, JSON.stringify(payload))
      t.equal(res.body.code, 'VALIDATION_FAILED')
      t.same([...res.body.message].sort(), [...phrases].sort())
    }
    const tooLarge = await send('POST', url, { ...body, quantity: 1e12, price: 1e12 })
    t.equal(tooLarge.status, 400)
    t.equal(tooLarge.body.message, 'totalValue must not be greater than 10000000000000')
    t.equal((await send('GET', url)).body.length, 1, 'only the first buy')

    // The first buy's date on create has the same rules.
    const early = await send('POST', '/portfolio-assets', {
      name: 'A', symbol: 'A', type: 'STOCK', quantity: 1, price: 1, portfolioId: await portfolio(), date: '1989-01-01'
    })
    t.same(early.body.message, ['minimal allowed date for date is 1990-01-01'])
  })

forEachEngine(t, 'POST /portfolio-assets dates its first buy; PATCH records each change of quantity as a BUY or ' +
  'SELL dated today and keeps the price it is given', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const { send, portfolio, asset } = apiOf(app)
  const id = await asset(await portfolio(), { date: '2024-03-15' })
  const url = `/portfolio-assets/${id}`
  t.match((await send('GET', `${url}/transactions`)).body,
    [{ type: 'BUY', date: '2024-03-15', quantity: 100, price: 32 }])
  const history = (await send('GET', `${url}/dashboard`)).body.monthlyHistory
  t.equal(history[0].month, 'Mar.2024', 'history from the first buy')
  const undated = await asset(await portfolio())
  const undatedBuy = (await send('GET', `/portfolio-assets/${undated}/transactions`)).body[0]
  t.equal(undatedBuy.date, daysAgo(0), 'today by default')

  // A price of its own: no transaction, the cost as it was.
  t.match((await send('PATCH', url, { price: 40 })).body, { quantity: 100, price: 40, totalValue: 4000 })
  t.equal((await send('GET', `${url}/transactions`)).body.length, 1)
  t.match((await send('GET', `${url}/dashboard`)).body.basicInfo, { averagePrice: 32, investedValue: 3200 })
  // More: a buy at that price; the asset keeps it.
  t.match((await send('PATCH', url, { quantity: 150 })).body, { quantity: 150, price: 40, totalValue: 6000 })
  // Less: a sale at the price given with it, realizing it over the average price.
  t.match((await send('PATCH', url, { quantity: 120, price: 45 })).body,
    { quantity: 120, price: 45, totalValue: 5400 })
  const listed = (await send('GET', `${url}/transactions`)).body
  t.same(listed.map((tx: { type: string, date: string, quantity: number, price: number }) =>
    [tx.type, tx.date, tx.quantity, tx.price]),
  [['BUY', '2024-03-15', 100, 32], ['BUY', daysAgo(0), 50, 40], ['SELL', daysAgo(0), 30, 45]])
  // 100 × 32 + 50 × 40 = 5200 for 150: 34.66666667; the sale realizes 30 × (45 − 34.66666667).
  t.match((await send('GET', `${url}/dashboard`)).body.basicInfo,
    { quantity: 120, averagePrice: 34.66666667, investedValue: 4160, realizedResult: 310, fees: 0 })
  // A transaction through its own route sets the price to the average again.
  await send('POST', `${url}/transactions`, { type: 'BUY', date: daysAgo(0), quantity: 0.5, price: 34.66666667 })
  t.match((await send('GET', url)).body, { quantity: 120.5, price: 34.66666667, totalValue: 4177.33 })
})

forEachEngine(t, 'every transaction changes the asset\'s and its portfolio\'s ETag', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const { send, portfolio, asset } = apiOf(app)
  const portfolioId = await portfolio()
  const id = await asset(portfolioId)
  const tags = async (): Promise<string[]> => [
    String((await send('GET', `/portfolio-assets/${id}`)).etag),
    String((await send('GET', `/portfolios/${portfolioId}`)).etag)
  ]
  const [asset0, portfolio0] = await tags()
  const added = await send('POST', `/portfolio-assets/${id}/transactions`,
    { type: 'SELL', date: daysAgo(0), quantity: 1, price: 33 })
  const [asset1, portfolio1] = await tags()
  t.not(asset1, asset0)
  t.not(portfolio1, portfolio0)
  const stale = await send('PATCH', `/portfolio-assets/${id}`, { price: 1 }, { 'if-match': asset0 })
  t.equal(stale.status, 412, 'an edit made before the transaction is refused')
  await send('DELETE', `/portfolio-assets/${id}/transactions/${String(added.body.id)}`)
  const [asset2, portfolio2] = await tags()
  t.not(asset2, asset1)
  t.not(portfolio2, portfolio1)
  const notModified = await app.inject({
    method: 'GET', url: `/portfolios/${portfolioId}`, headers: { ...apiKey(), 'if-none-match': portfolio1 }
  })
  t.equal(notModified.statusCode, 200, 'a tag from before the removal no longer matches')
})

t.test('POST /portfolio-assets/:id/transactions honours Idempotency-Key: a retry records one transaction',
  async t => {
    const app = await buildDataApp(t, 'sqlite')
    const { send, portfolio, asset } = apiOf(app)
    const id = await asset(await portfolio())
    const url = `/portfolio-assets/${id}/transactions`
    const body = { type: 'BUY', date: daysAgo(2), quantity: 10, price: 35, fee: 1.5 }
    const key = { 'idempotency-key': 'buy-2024-001' }
    const first = await send('POST', url, body, key)
    const retry = await send('POST', url, body, key)
    t.equal(first.status, 201)
    t.equal(retry.status, 201)
    t.equal(retry.headers['idempotent-replayed'], 'true')
    t.same(retry.body, first.body)
    t.equal((await send('GET', url)).body.length, 2, 'the first buy and this one, once')
    t.match((await send('GET', `/portfolio-assets/${id}`)).body, { quantity: 110 })
    const other = await send('POST', url, { ...body, quantity: 11 }, key)
    t.equal(other.status, 422)
    t.equal(other.body.code, 'IDEMPOTENCY_KEY_REUSED')
    // A refusal is kept as the answer to that request, as any 4xx.
    const sale = { type: 'SELL', date: daysAgo(0), quantity: 1000, price: 1 }
    const refused = await send('POST', url, sale, { 'idempotency-key': 'sale-1' })
    t.equal(refused.status, 422)
    t.equal((await send('POST', url, sale, { 'idempotency-key': 'sale-1' })).headers['idempotent-replayed'], 'true')
  })

t.test('the live valuation follows every transaction', async t => {
  const brapi = await startFakeBrapi(t)
  brapi.prices.set('PETR4', 40)
  const app = await buildTestApp(t, {
    QUOTES_PROVIDER: 'brapi', BRAPI_URL: brapi.url, VALUATION_MIN_INTERVAL_MS: '0'
  })
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  const { send, portfolio, asset } = apiOf(app)
  const portfolioId = await portfolio()
  const id = await asset(portfolioId, { quantity: 10, price: 30 })
  const stream = await openEventStream(t, `${base}/portfolios/${portfolioId}/valuation/stream`, apiKey())
  const [first] = await stream.next(1)
  t.match(JSON.parse(first?.data ?? ''), { bookValue: 300, marketValue: 400 })
  const buy = await send('POST', `/portfolio-assets/${id}/transactions`,
    { type: 'BUY', date: daysAgo(0), quantity: 10, price: 36 })
  t.match(JSON.parse((await stream.next(2))[1]?.data ?? ''), { bookValue: 660, marketValue: 800, result: 140 })
  await send('DELETE', `/portfolio-assets/${id}/transactions/${String(buy.body.id)}`)
  t.match(JSON.parse((await stream.next(3))[2]?.data ?? ''), { bookValue: 300, marketValue: 400 })
  stream.close()
})

testNeeding(t, 'another instance\'s reads, cached or live, follow a transaction (PostgreSQL LISTEN/NOTIFY)',
  [NEEDS_POSTGRES], async (t: Test) => {
    const { env } = await freshDatabase(t, 'postgres')
    const brapi = await startFakeBrapi(t)
    brapi.prices.set('PETR4', 40)
    const config = { ...env, QUOTES_PROVIDER: 'brapi', BRAPI_URL: brapi.url, VALUATION_MIN_INTERVAL_MS: '0' }
    const writer = apiOf(await buildTestApp(t, config))
    // The reader keeps a read longer than any wait below: only the feed can make it answer the
    // change (polled: past the default rate limit).
    const readerApp = await buildTestApp(t, { ...config, PORTFOLIO_CACHE_TTL_MS: '60000', RATE_LIMIT_MAX: '1000000' })
    const reader = apiOf(readerApp)
    const portfolioId = await writer.portfolio()
    const id = await writer.asset(portfolioId, { quantity: 10, price: 30 })
    const base = await readerApp.listen({ port: 0, host: '127.0.0.1' })
    const stream = await openEventStream(t, `${base}/portfolios/${portfolioId}/valuation/stream`, apiKey())
    t.match(JSON.parse((await stream.next(1))[0]?.data ?? ''), { bookValue: 300 })
    // The reader keeps the portfolio's detail in memory from here, once its feed is proven.
    await until('the reader\'s feed proven', () => readerApp.changeFeed.proven())
    t.equal((await reader.send('GET', `/portfolios/${portfolioId}`)).body.totalValue, 300)
    await writer.send('POST', `/portfolio-assets/${id}/transactions`,
      { type: 'SELL', date: daysAgo(0), quantity: 4, price: 35 })
    t.match(JSON.parse((await stream.next(2))[1]?.data ?? ''), { bookValue: 180, marketValue: 240 })
    // A change reaches another instance's memory when the feed delivers it.
    let detail = await reader.send('GET', `/portfolios/${portfolioId}`)
    await until('the reader answers the sale', async () => {
      detail = await reader.send('GET', `/portfolios/${portfolioId}`)
      return detail.status === 200 && detail.body.totalValue !== 300
    }, () => [detail.status, detail.body])
    t.match(detail.body, { totalValue: 180, assets: [{ quantity: 6, price: 30 }] })
    stream.close()
  })
