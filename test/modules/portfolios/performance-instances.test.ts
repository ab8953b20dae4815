import t from 'tap'
import pg from 'pg'
import type { App } from '../../../src/app.js'
import { apiKey, buildTestApp, freshDatabase, NEEDS_POSTGRES, testNeeding } from '../../helper.js'
import { portfolioWith } from '../../fixtures/portfolios.js'

/*
 * A performance kept in one instance's memory (docs/api.md#performance) is dropped when another
 * instance records a transaction of its portfolio: the change feed (PostgreSQL's LISTEN/NOTIFY
 * here) tells every instance. Every wait is a poll.
 */

async function invested (app: App, id: string): Promise<number> {
  const res = await app.inject({ method: 'GET', url: `/portfolios/${id}/performance?range=3m`, headers: apiKey() })
  return res.json().invested
}

testNeeding(t, 'a transaction recorded on A is answered by B\'s performance once the feed tells it',
  [NEEDS_POSTGRES], async t => {
    const database = await freshDatabase(t, 'postgres')
    const shared = database.env
    const a = await buildTestApp(t, shared)
    const b = await buildTestApp(t, shared)
    for (let attempt = 0; attempt < 400 && !(a.changeFeed.proven() && b.changeFeed.proven()); attempt++) {
      await new Promise(resolve => setTimeout(resolve, 25))
    }
    const { id, assetIds } = await portfolioWith(a, [{ symbol: 'PETR4', quantity: 10, price: 30, date: '2026-01-05' }])
    t.equal(await invested(b, id), 300, 'B computes and keeps it')
    // A change no feed tells (the database edited by hand): B keeps answering what it kept.
    const byHand = new pg.Client({ connectionString: database.searchPathUrl })
    await byHand.connect()
    await byHand.query('update asset_transactions set price = 20')
    await byHand.end()
    t.equal(await invested(b, id), 300, 'answered from B\'s memory')
    const sale = await a.inject({
      method: 'POST',
      url: `/portfolio-assets/${assetIds[0] ?? ''}/transactions`,
      headers: apiKey(),
      payload: { type: 'SELL', date: '2026-02-02', quantity: 4, price: 31 }
    })
    t.equal(sale.statusCode, 201)
    for (let attempt = 0; attempt < 1200 && await invested(b, id) !== 120; attempt++) {
      await new Promise(resolve => setTimeout(resolve, 25))
    }
    t.equal(await invested(b, id), 120, 'B answers the sale (6 left at 20), computed again')
  })
