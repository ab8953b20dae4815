import t from 'tap'
import type { App } from '../../src/app.js'
import { replay } from '../../src/domain/replay.js'
import { apiKey, buildDataApp, forEachEngine } from '../helper.js'
import { rest } from './interfaces.js'

const DAY = 86_400_000
const dateOf = (days: number): string => new Date(Date.now() - days * DAY).toISOString().slice(0, 10)

/** An asset bought 30 days ago, with a sale and a buy since. */
async function assetOf (app: App, portfolioId: string): Promise<string> {
  const input = { name: 'A', symbol: 'A', type: 'STOCK', quantity: 10, price: 5, portfolioId, date: dateOf(30) }
  const { id } = (await rest(app, 'POST', '/portfolio-assets', apiKey(), input)).body
  const since = [
    { type: 'SELL', date: dateOf(20), quantity: 4, price: 6 }, { type: 'BUY', date: dateOf(10), quantity: 2, price: 7 }
  ]
  for (const trade of since) await rest(app, 'POST', `/portfolio-assets/${String(id)}/transactions`, apiKey(), trade)
  return id
}

/**
 * Every kind of write of an asset's position at once, on the same assets and their portfolio: dated sales (some
 * of more than is held), undoes, PATCHes of quantity, the assets' and the portfolio's deletes. Each write locks in
 * the order every write takes (transactions, then assets, then the portfolio), so none deadlocks (PostgreSQL would
 * abort one: a 500), and each decides on rows no other write changes meanwhile: every asset left holds what its
 * transactions make.
 */
forEachEngine(t, 'trades, undoes, PATCHes and deletes racing on one portfolio: no deadlock, and every asset left ' +
  'holds what its transactions make', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const statuses = new Set<number>()
  const anyVersion = { ...apiKey(), 'if-match': '*' }
  const survivors: string[] = []
  for (let round = 0; round < 8; round++) {
    const portfolioId = (await rest(app, 'POST', '/portfolios', apiKey(), { name: 'Raced', userId: 'u' })).body.id
    const assets = [await assetOf(app, portfolioId), await assetOf(app, portfolioId), await assetOf(app, portfolioId)]
    const url = (id: string): string => `/portfolio-assets/${id}`
    const firstOf = async (id: string): Promise<string> =>
      String((await rest(app, 'GET', `${url(id)}/transactions`, apiKey())).body[0]?.id)
    const [first, second] = await Promise.all(assets.slice(0, 2).map(firstOf))
    const answers = await Promise.all([
      ...assets.map(async (id, index) => await rest(app, 'POST', `${url(id)}/transactions`, apiKey(),
        { type: 'SELL', date: dateOf(25 - index * 10), quantity: 7, price: 8 })),
      rest(app, 'DELETE', `${url(assets[0] ?? '')}/transactions/${String(first)}`, apiKey()),
      rest(app, 'DELETE', `${url(assets[1] ?? '')}/transactions/${String(second)}`, apiKey()),
      ...assets.map(async (id, index) => await rest(app, 'PATCH', url(id), apiKey(), { quantity: 3 + index })),
      // `If-Match: *` has the deletes read their rows under lock first, as a user's token does.
      rest(app, 'DELETE', url(assets[2] ?? ''), anyVersion),
      round % 2 === 0 ? rest(app, 'DELETE', `/portfolios/${String(portfolioId)}`, anyVersion) : undefined
    ])
    for (const answer of answers) if (answer !== undefined) statuses.add(answer.status)
    survivors.push(...assets)
  }
  t.same([...statuses].filter(status => ![200, 201, 404, 422].includes(status)), [], [...statuses].join(', '))
  let checked = 0
  for (const id of survivors) {
    const asset = await rest(app, 'GET', `/portfolio-assets/${id}`, apiKey())
    if (asset.status === 404) continue
    const transactions = (await rest(app, 'GET', `/portfolio-assets/${id}/transactions`, apiKey())).body
    const { after, shortAt } = replay(transactions)
    t.same([shortAt, after.quantity.toNumber()], [undefined, asset.body.quantity], `${id}: its quantity`)
    checked++
  }
  t.ok(checked > 0, `${checked} assets left to check`)
})
