import t from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import type { App } from '../../src/app.js'
import { apiKey, buildDataApp, forEachEngine } from '../helper.js'

type Response = Promise<LightMyRequestResponse>
type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE'

async function call (app: App, method: Method, url: string, extra = {}, payload?: object): Response {
  const body = payload === undefined ? {} : { payload: payload as Record<string, unknown> }
  return await app.inject({ method, url, headers: { ...apiKey(), ...extra }, ...body })
}

const tagOf = async (app: App, url: string): Promise<string> => String((await call(app, 'GET', url)).headers.etag)

/**
 * A conditional delete locks what it deletes in the order every write takes (lots, assets, the
 * portfolio): a portfolio deleted with If-Match while its assets are edited and deleted, some
 * with If-Match too, never deadlocks on PostgreSQL (which would abort one of them: a 500).
 */
forEachEngine(t, 'conditional deletes racing asset writes: no deadlock, only 200, 404, 412', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const statuses = new Set<number>()
  for (let round = 0; round < 10; round++) {
    const portfolio = (await call(app, 'POST', '/portfolios', {}, { name: 'Raced', userId: 'u' })).json()
    const portfolioUrl = `/portfolios/${portfolio.id as string}`
    const assetUrls: string[] = []
    for (let index = 0; index < 3; index++) {
      const asset = { name: 'A', symbol: 'A', type: 'STOCK', quantity: 1, price: 1, portfolioId: portfolio.id }
      const created = await call(app, 'POST', '/portfolio-assets', {}, asset)
      assetUrls.push(`/portfolio-assets/${created.json().id as string}`)
    }
    const portfolioTag = await tagOf(app, portfolioUrl)
    const assetTags = await Promise.all(assetUrls.map(async url => await tagOf(app, url)))
    const answers = await Promise.all([
      ...assetUrls.map(async url => await call(app, 'PATCH', url, {}, { quantity: 2 })),
      call(app, 'DELETE', portfolioUrl, { 'if-match': portfolioTag }),
      ...assetUrls.map(async (url, index) => await call(app, 'DELETE', url, { 'if-match': assetTags[index] }))
    ])
    for (const answer of answers) statuses.add(answer.statusCode)
  }
  t.same([...statuses].filter(status => ![200, 404, 412].includes(status)), [], [...statuses].join(', '))
})
