import type { App } from '../src/app.js'

/*
 * The portfolio the benchmarks of a portfolio's history measure in process (bench/performance.ts,
 * bench/corporate-events.ts), made through the routes, so that one portfolio is measured by both.
 */

/** Assets of the portfolio; each has 12 transactions. */
export const TRADED_ASSETS = 20

/** A request through `app.inject`: its JSON answer; an answer from 300 up throws, naming the request and the answer. */
export type Call = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) => Promise<any>

/** Requests of `app` with `headers` (the bench's credential). */
export function caller (app: App, headers: Record<string, string>): Call {
  return async (method, url, payload) => {
    const res = await app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) })
    if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`)
    return res.json()
  }
}

/**
 * A portfolio named `prefix` of {@link TRADED_ASSETS} assets of symbols `${prefix}003`, `${prefix}013`…, each bought
 * in 2006 and eleven times more, one sale in four, each with a fee: its id, and its last asset's.
 */
export async function tradedPortfolio (call: Call, prefix: string): Promise<{ id: string, assetId: string }> {
  const { id } = await call('POST', '/portfolios', { name: prefix, userId: 'bench' })
  let assetId = ''
  for (let asset = 0; asset < TRADED_ASSETS; asset++) {
    const symbol = `${prefix}${String(asset).padStart(2, '0')}3`
    const created = await call('POST', '/portfolio-assets', {
      name: symbol, symbol, type: 'STOCK', quantity: 100, price: 20, portfolioId: id, date: `2006-0${1 + asset % 9}-10`
    })
    assetId = String(created.id)
    for (let trade = 1; trade < 12; trade++) {
      const date = `${2006 + trade * 1 + (asset % 7)}-${String(1 + (asset + trade) % 12).padStart(2, '0')}-15`
      const type = trade % 4 === 0 ? 'SELL' : 'BUY'
      await call('POST', `/portfolio-assets/${assetId}/transactions`,
        { type, date, quantity: type === 'SELL' ? 20 : 10, price: 20 + trade, fee: 4.9 })
    }
  }
  return { id: String(id), assetId }
}
