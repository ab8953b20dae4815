import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { startFakePluggy } from '../../fixtures/fake-pluggy.js'
import { Chromium, NEEDS_CHROMIUM } from '../../fixtures/chromium.js'
import {
  aggregatorConfig, subscribed, SUBSCRIPTION, webhook, type Delivery
} from '../../fixtures/item-subscriptions.js'
import { apiKey, buildTestApp, clientToken, testNeeding } from '../../helper.js'

/** A frontend's page: GraphQL over fetch from its own origin, and the subscription over the browser's WebSocket. */
const FRONTEND_PAGE = `<!doctype html><html><body><script>
  window.run = async ({ api, apiKey, token, itemId, subscription }) => {
    const post = async (query, variables) => {
      const headers = { 'x-api-key': apiKey, 'content-type': 'application/json' }
      const body = JSON.stringify({ query, variables })
      const response = await fetch(api + '/graphql', { method: 'POST', headers, body })
      return { status: response.status, requestId: response.headers.get('x-request-id'), body: await response.json() }
    }
    const create = 'mutation ($input: CreatePortfolioInput!) { createPortfolio(input: $input) { id name } }'
    const created = await post(create, { input: { name: 'From a browser', userId: 'web' } })
    const read = await post('query ($id: ID!) { portfolio(id: $id) { name totalValue assets { id } } }',
      { id: created.body.data.createPortfolio.id })
    // Browsers cannot set headers on a WebSocket: the token goes in connection_init's payload.
    const status = await new Promise((resolve, reject) => {
      const socket = new WebSocket(api.replace('http', 'ws') + '/graphql', 'graphql-transport-ws')
      const send = message => socket.send(JSON.stringify(message))
      socket.onopen = () => send({ type: 'connection_init', payload: { Authorization: 'Bearer ' + token } })
      socket.onmessage = ({ data }) => {
        const message = JSON.parse(data)
        if (message.type === 'connection_ack') {
          send({ id: '1', type: 'subscribe', payload: { query: subscription, variables: { itemId } } })
        } else if (message.type === 'next') {
          resolve({ protocol: socket.protocol, payload: message.payload })
          socket.close(1000)
        } else if (message.type === 'error') {
          reject(new Error(JSON.stringify(message.payload)))
        }
      }
      socket.onclose = event => reject(new Error('closed with ' + event.code))
    })
    return { created, read, status }
  }
</script></body></html>`

const title = 'a page on a CORS_ORIGINS origin queries, mutates and subscribes in headless Chromium'
testNeeding(t, title, [NEEDS_CHROMIUM], async t => {
  const page = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    response.end(FRONTEND_PAGE)
  })
  await new Promise<void>(resolve => page.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>(resolve => page.close(() => resolve())))
  const pageOrigin = `http://app.bff.test:${(page.address() as AddressInfo).port}`

  const pluggy = await startFakePluggy(t)
  pluggy.items.set('item-1', 'client-a')
  pluggy.itemStatuses.set('item-1', 'UPDATING')
  const app = await buildTestApp(t, { ...aggregatorConfig(pluggy), CORS_ORIGINS: pageOrigin })
  const api = `http://api.bff.test:${new URL(await app.listen({ port: 0, host: '127.0.0.1' })).port}`

  const browser = await Chromium.launch(t, 'chromium-graphql')
  const tab = await browser.open(`${pageOrigin}/`)
  const args = {
    api,
    apiKey: apiKey()['x-api-key'],
    token: clientToken({ sub: 'client-a' }),
    itemId: 'item-1',
    subscription: SUBSCRIPTION
  }
  const ran = browser.evaluate(tab, `run(${JSON.stringify(args)})`)
  // A page that fails before it subscribes fails the test with its own error.
  await Promise.race([subscribed(app, 1), ran])
  await webhook(app, 'item-1', 'item/updated')
  interface Result {
    status?: number
    requestId?: string
    body?: { data: Record<string, Record<string, unknown>> }
    protocol?: string
    payload?: Delivery
  }
  const { created, read, status } = await ran as Record<string, Result>

  t.equal(created?.status, 200, 'the mutation crossed origins (CORS preflight for JSON and x-api-key)')
  t.match(created?.requestId, /./, 'x-request-id is readable by the page')
  t.same(read?.body, { data: { portfolio: { name: 'From a browser', totalValue: 0, assets: [] } } })
  t.equal(status?.protocol, 'graphql-transport-ws')
  t.match(status?.payload?.data?.aggregatorItem, { itemId: 'item-1', status: 'UPDATING', event: 'item/updated' },
    'the webhook\'s status reached the browser')
})
