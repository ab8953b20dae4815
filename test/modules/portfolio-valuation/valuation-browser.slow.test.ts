import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { build } from 'esbuild'
import { Chromium, NEEDS_CHROMIUM } from '../../fixtures/chromium.js'
import { startFakeBrapi } from '../../fixtures/fake-brapi.js'
import { apiKey, buildTestApp, testNeeding } from '../../helper.js'

/**
 * What a frontend bundles: the WHATWG EventSource of the `eventsource` package (a browser's own
 * cannot send the API key's header: its `fetch` option adds it) and graphql-ws's client.
 */
async function frontendBundle (): Promise<string> {
  const bundled = await build({
    stdin: {
      contents: "export { EventSource } from 'eventsource'; export { createClient } from 'graphql-ws'",
      resolveDir: fileURLToPath(new URL('../../../', import.meta.url))
    },
    bundle: true,
    format: 'iife',
    globalName: 'frontend',
    platform: 'browser',
    write: false,
    logLevel: 'silent'
  })
  return bundled.outputFiles[0]?.text ?? ''
}

/** A frontend's page: the valuation over SSE and over a GraphQL subscription, each message kept. */
const FRONTEND_PAGE = `<!doctype html><html><body><script src="/frontend.js"></script><script>
  window.sse = []
  window.graphql = []
  window.start = ({ api, apiKey, id }) => {
    const withKey = (input, init) => fetch(input, { ...init, headers: { ...init.headers, 'x-api-key': apiKey } })
    const source = new frontend.EventSource(api + '/portfolios/' + id + '/valuation/stream', { fetch: withKey })
    source.addEventListener('valuation', event => {
      window.sse.push({ id: event.lastEventId, ...JSON.parse(event.data) })
    })
    const url = api.replace('http', 'ws') + '/graphql'
    const client = frontend.createClient({ url, connectionParams: { 'x-api-key': apiKey } })
    client.subscribe({
      query: 'subscription ($id: ID!) { portfolioValuation(id: $id) { bookValue marketValue quotedAt } }',
      variables: { id }
    }, { next: ({ data }) => { window.graphql.push(data.portfolioValuation) }, error: () => {}, complete: () => {} })
    return true
  }
</script></body></html>`

const title = 'a page on another origin follows a portfolio\'s valuation in headless Chromium, ' +
  'with EventSource and graphql-ws, through an asset change and a quote move'
testNeeding(t, title, [NEEDS_CHROMIUM], async t => {
  const bundle = await frontendBundle()
  const page = createServer((request, response) => {
    if (request.url === '/frontend.js') {
      response.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(bundle)
      return
    }
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(FRONTEND_PAGE)
  })
  await new Promise<void>(resolve => page.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>(resolve => page.close(() => resolve())))
  const pageOrigin = `http://app.bff.test:${(page.address() as AddressInfo).port}`

  const brapi = await startFakeBrapi(t)
  brapi.prices.set('PETR4', 40)
  const app = await buildTestApp(t, {
    CORS_ORIGINS: pageOrigin,
    QUOTES_PROVIDER: 'brapi',
    BRAPI_URL: brapi.url,
    QUOTES_TTL: '1',
    VALUATION_MIN_INTERVAL_MS: '100'
  })
  const api = `http://api.bff.test:${new URL(await app.listen({ port: 0, host: '127.0.0.1' })).port}`
  const { id } = (await app.inject({
    method: 'POST', url: '/portfolios', headers: apiKey(), payload: { name: 'Browser', userId: 'web' }
  })).json() as { id: string }
  const asset = (await app.inject({
    method: 'POST',
    url: '/portfolio-assets',
    headers: apiKey(),
    payload: { name: 'Petrobras', symbol: 'PETR4', type: 'STOCK', quantity: 10, price: 30, portfolioId: id }
  })).json() as { id: string }

  const browser = await Chromium.launch(t, 'chromium-valuation')
  const tab = await browser.open(`${pageOrigin}/`)
  await browser.evaluate(tab, `start(${JSON.stringify({ api, apiKey: apiKey()['x-api-key'], id })})`)
  type Seen = Array<{ id?: string, bookValue: number, marketValue: number }>
  const seen = async (): Promise<{ sse: Seen, graphql: Seen }> =>
    await browser.evaluate(tab, '({ sse: window.sse, graphql: window.graphql })') as { sse: Seen, graphql: Seen }
  const until = async (what: string, condition: (latest: Seen[number]) => boolean): Promise<void> => {
    for (let attempt = 0; attempt < 800; attempt++) {
      const { sse, graphql } = await seen()
      const [lastSse, lastGraphql] = [sse.at(-1), graphql.at(-1)]
      if (lastSse !== undefined && lastGraphql !== undefined && condition(lastSse) && condition(lastGraphql)) return
      await new Promise(resolve => setTimeout(resolve, 25))
    }
    t.fail(`the page never saw ${what}: ${JSON.stringify(await seen())}`)
  }

  await until('the first valuation', latest => latest.bookValue === 300 && latest.marketValue === 400)
  const change = { quantity: 20 }
  await app.inject({ method: 'PATCH', url: `/portfolio-assets/${asset.id}`, headers: apiKey(), payload: change })
  await until('the asset change', latest => latest.bookValue === 600 && latest.marketValue === 800)
  brapi.prices.set('PETR4', 45.5)
  await until('the quote move', latest => latest.marketValue === 910)
  const { sse } = await seen()
  t.same(sse.map(message => message.id), sse.map((_, index) => String(index + 1)), 'ids increase from 1')
  t.pass('both transports followed the asset change and the quote move')
})
