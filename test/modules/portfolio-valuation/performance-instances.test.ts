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
    const bothProven = async (): Promise<void> => {
      for (let attempt = 0; attempt < 400 && !(a.changeFeed.proven() && b.changeFeed.proven()); attempt++) {
        await new Promise(resolve => setTimeout(resolve, 25))
      }
    }
    // Each time B's feed is proven again it drops what it kept ({ kind: 'all' }): on a busy machine a
    // heartbeat may come back late, so a round in which that happened proves nothing and is played again.
    let provenAgain = 0
    t.teardown(b.changeFeed.onPortfolioChange(change => { if (change.kind === 'all') provenAgain++ }))
    const byHand = new pg.Client({ connectionString: database.searchPathUrl })
    await byHand.connect()
    t.teardown(async () => { await byHand.end() })
    const { id, assetIds } = await portfolioWith(a, [{ symbol: 'PETR4', quantity: 10, price: 30, date: '2026-01-05' }])
    let price = 30
    let kept = false
    for (let round = 0; round < 20 && !kept; round++) {
      await bothProven()
      const before = provenAgain
      const computed = await invested(b, id)
      // A change no feed tells (the database edited by hand): B keeps answering what it kept.
      price = 20 - round
      await byHand.query('update asset_transactions set price = $1', [price])
      const answered = await invested(b, id)
      if (provenAgain !== before || !b.changeFeed.proven()) continue
      t.equal(computed, (round === 0 ? 30 : 21 - round) * 10, 'B computes it from the database')
      t.equal(answered, computed, 'answered from B\'s memory')
      kept = true
    }
    t.ok(kept, 'a round with B\'s feed proven throughout')
    const sale = await a.inject({
      method: 'POST',
      url: `/portfolio-assets/${assetIds[0] ?? ''}/transactions`,
      headers: apiKey(),
      payload: { type: 'SELL', date: '2026-02-02', quantity: 4, price: 31 }
    })
    t.equal(sale.statusCode, 201)
    for (let attempt = 0; attempt < 1200 && await invested(b, id) !== 6 * price; attempt++) {
      await new Promise(resolve => setTimeout(resolve, 25))
    }
    t.equal(await invested(b, id), 6 * price, 'B answers the sale (6 left at the price set by hand), computed again')
  })
