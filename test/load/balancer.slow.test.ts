import t from 'tap'
import { createClient } from 'graphql-ws'
import WebSocket from 'ws'
import { testNeeding } from '../helper.js'
import { closedPort } from '../fixtures/fake-server.js'
import { openEventStream } from '../fixtures/event-stream.js'
import { instanceApiKey, NEEDS_NGINX, startInstance, startNginx } from '../fixtures/instances.js'

/**
 * What deploy/nginx.conf is for, through it as it is (test/fixtures/instances.ts): a live valuation
 * stream and a GraphQL subscription over WebSocket beside ordinary requests, and the client's
 * address reaching the service in X-Forwarded-For for TRUST_PROXY. The many-instance tests
 * (test/load/instances, test/faults/postgres) run the same file under writes, kills and drains.
 */
testNeeding(t, 'through deploy/nginx.conf: REST, a valuation stream, a GraphQL subscription, and the client\'s ' +
  'address for TRUST_PROXY', [NEEDS_NGINX], async t => {
  const port = await closedPort(t)
  await startInstance(t, 'sqlite::memory:', port, { TRUST_PROXY: '127.0.0.1', AUTH_FAILURES_PER_MINUTE: '2' })
  const balancer = await startNginx(t, [port])
  const key = { 'x-api-key': instanceApiKey }

  const created = await fetch(`${balancer}/portfolios`, {
    method: 'POST',
    headers: { ...key, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Through nginx', userId: 'balancer' })
  })
  t.equal(created.status, 201)
  const { id } = await created.json() as { id: string }

  const stream = await openEventStream(t, `${balancer}/portfolios/${id}/valuation/stream`, key)
  t.equal(stream.status, 200)
  const [first] = await stream.next(1)
  t.match(first, { event: 'valuation', id: '1' }, 'the first message of the stream comes through at once')
  t.match(JSON.parse(first?.data ?? 'null'), { portfolioId: id, bookValue: 0 })

  const client = createClient({
    url: `${balancer.replace('http', 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: key,
    retryAttempts: 0
  })
  t.teardown(async () => { await client.dispose() })
  const subscription = client.iterate<{ portfolioValuation: { portfolioId: string } }>({
    query: 'subscription ($id: ID!) { portfolioValuation(id: $id) { portfolioId } }',
    variables: { id }
  })
  const delivered = await subscription.next()
  t.same(delivered.value?.data, { portfolioValuation: { portfolioId: id } }, 'a subscription over WebSocket')
  const query = await fetch(`${balancer}/graphql`, {
    method: 'POST',
    headers: { ...key, 'content-type': 'application/json' },
    body: JSON.stringify({ query: `{ portfolio(id: "${id}") { name } }` })
  })
  t.same(await query.json(), { data: { portfolio: { name: 'Through nginx' } } }, 'a query on the same location')
  await subscription.return?.(undefined)

  // Two failed authentications per client address a minute: nginx appends the address it got the
  // request from to X-Forwarded-For, and the service, trusting only nginx, counts the address left
  // of it — here the one the test sends, as a client behind another proxy would be counted.
  const refused = async (address: string): Promise<number> => (await fetch(`${balancer}/portfolios`, {
    headers: { 'x-api-key': 'wrong-key', 'x-forwarded-for': address }
  })).status
  t.same([await refused('198.51.100.1'), await refused('198.51.100.1'), await refused('198.51.100.1')],
    [401, 401, 429], 'one address spends its budget')
  t.equal(await refused('198.51.100.2'), 401, 'another address has its own')
})
