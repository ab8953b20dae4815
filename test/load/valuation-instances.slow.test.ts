import t, { type Test } from 'tap'
import { createClient, type Client } from 'graphql-ws'
import WebSocket from 'ws'
import { freshDatabase, NEEDS_POSTGRES, testNeeding } from '../helper.js'
import { closedPort } from '../fixtures/fake-server.js'
import { instanceApiKey, startInstance, type Instance } from '../fixtures/instances.js'
import { NEEDS_REDIS, startRedis } from '../fixtures/redis.js'
import { startFakeBrapi } from '../fixtures/fake-brapi.js'
import { openEventStream, type EventStream } from '../fixtures/event-stream.js'
import { until } from '../fixtures/until.js'

/*
 * Live valuations across two real instances on one PostgreSQL: a change written on either is heard by the
 * streams of both, through Redis (and, without it, PostgreSQL's LISTEN/NOTIFY); quotes are refreshed with
 * one provider request for every watched symbol; SIGTERM ends streams and closes sockets with 1001.
 */

const headers = { 'x-api-key': instanceApiKey, 'content-type': 'application/json' }

async function call (instance: Instance, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${instance.url}${path}`, {
    method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  return await res.json()
}

/** A graphql-transport-ws subscription to an instance, its API key in connection_init's payload. */
function subscribe (t: Test, instance: Instance, id: string) {
  let closeCode: number | undefined
  const client: Client = createClient({
    url: `${instance.url.replace('http', 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { 'x-api-key': instanceApiKey },
    retryAttempts: 0,
    on: { closed: event => { closeCode = (event as { code: number }).code } }
  })
  t.teardown(async () => { await client.dispose() })
  const deliveries: any[] = []
  let ended: (outcome: unknown) => void = () => {}
  const done = new Promise(resolve => { ended = resolve })
  client.subscribe({
    query: 'subscription ($id: ID!) { portfolioValuation(id: $id) { bookValue marketValue unquotedSymbols } }',
    variables: { id }
  }, {
    next: value => { deliveries.push(value) },
    error: error => { ended(error) },
    complete: () => { ended('complete') }
  })
  return { deliveries, done, closeCode: () => closeCode }
}

const last = (stream: EventStream): any => JSON.parse(stream.events.at(-1)?.data ?? 'null')

for (const transport of ['redis', 'postgres'] as const) {
  const needs = transport === 'redis' ? [NEEDS_POSTGRES, NEEDS_REDIS] : [NEEDS_POSTGRES]
  testNeeding(t, `two instances on PostgreSQL (change feed: ${transport}): every stream hears a change written ` +
    'on either, quote moves in one provider request per refresh, the deletion, and the shutdown', needs, async t => {
    const { env: url } = await freshDatabase(t, 'postgres')
    const brapi = await startFakeBrapi(t)
    const prices = [['PETR4', 40], ['VALE3', 60], ['ITUB4', 30]] as const
    for (const [symbol, price] of prices) brapi.prices.set(symbol, price)
    const env = {
      QUOTES_PROVIDER: 'brapi',
      BRAPI_URL: brapi.url,
      BRAPI_TICKERS_PER_REQUEST: '50',
      QUOTES_TTL: '1',
      VALUATION_MIN_INTERVAL_MS: '100',
      SHUTDOWN_DRAIN_MS: '500',
      ...(transport === 'redis' ? { REDIS_URL: (await startRedis(t)).url } : {})
    }
    const [a, b] = await Promise.all([startInstance(t, url, await closedPort(t), env),
      startInstance(t, url, await closedPort(t), env)])
    if (a === undefined || b === undefined) throw new Error('no instances')
    const { id } = await call(a, 'POST', '/portfolios', { name: 'Live', userId: 'live' })
    const petr = await call(a, 'POST', '/portfolio-assets',
      { name: 'Petrobras', symbol: 'PETR4', type: 'STOCK', quantity: 10, price: 35, portfolioId: id })
    await call(a, 'POST', '/portfolio-assets',
      { name: 'Vale', symbol: 'VALE3', type: 'STOCK', quantity: 1, price: 50, portfolioId: id })

    const onA = await openEventStream(t, `${a.url}/portfolios/${id}/valuation/stream`, headers)
    const onB = await openEventStream(t, `${b.url}/portfolios/${id}/valuation/stream`, headers)
    const graphqlOnB = subscribe(t, b, id)
    await onA.next(1)
    await onB.next(1)
    await until('the subscription\'s first message', () => graphqlOnB.deliveries.length === 1)
    t.match(last(onB), { bookValue: 400, marketValue: 460, unquotedSymbols: [] })

    // Written on A, heard on B (and on A); then written on B, heard on A.
    await call(a, 'PATCH', `/portfolio-assets/${String(petr.id)}`, { quantity: 20 })
    await until('B hears A\'s change', () => last(onB)?.bookValue === 750)
    await until('the subscription on B hears it', () => graphqlOnB.deliveries.at(-1)?.data?.portfolioValuation
      ?.bookValue === 750)
    await call(b, 'POST', '/portfolio-assets',
      { name: 'Itaú', symbol: 'ITUB4', type: 'STOCK', quantity: 1, price: 25, portfolioId: id })
    await until('A hears B\'s change', () => last(onA)?.bookValue === 775)
    // Each instance prices the new symbol once on its own (its first quote): the refreshes come after.
    await until('both price ITUB4', () => [onA, onB].every(stream => last(stream)?.marketValue === 20 * 40 + 60 + 30))

    // A quote moves: each instance's refresher asks for every watched symbol in one request.
    const before = brapi.received.length
    brapi.prices.set('PETR4', 41)
    await until('A hears the quote', () => last(onA)?.marketValue === 20 * 41 + 60 + 30)
    await until('B hears the quote', () => last(onB)?.marketValue === 20 * 41 + 60 + 30)
    const refreshes = brapi.received.slice(before).filter(request => request.path.startsWith('/api/quote/'))
    t.ok(refreshes.length >= 2, `${refreshes.length} refreshes`)
    const symbolsAsked = refreshes.map(request =>
      decodeURIComponent(request.path).split('/').at(-1)?.split(',').sort().join())
    t.ok(symbolsAsked.every(symbols => symbols === 'ITUB4,PETR4,VALE3'),
      `every refresh is one request for all three watched symbols: ${JSON.stringify(symbolsAsked)}`)

    // A comment line keeps a quiet stream alive (at least every 15 s).
    await until('a heartbeat', () => onB.comments.length > 0)

    // Deleted on B: every stream ends, the subscription with NOT_FOUND then complete.
    await call(b, 'DELETE', `/portfolios/${String(id)}`)
    await until('A\'s stream hears the deletion', () => onA.events.at(-1)?.event === 'deleted')
    await onA.ended
    await onB.ended
    t.equal(onB.events.at(-1)?.event, 'deleted')
    t.equal(await graphqlOnB.done, 'complete')
    t.equal(graphqlOnB.deliveries.at(-1)?.errors?.[0]?.extensions?.code, 'NOT_FOUND')

    // SIGTERM: an open stream ends, a subscription's socket closes with 1001, the instance exits 0.
    const { id: other } = await call(a, 'POST', '/portfolios', { name: 'Other', userId: 'live' })
    const stream = await openEventStream(t, `${b.url}/portfolios/${String(other)}/valuation/stream`, headers)
    const subscription = subscribe(t, b, other)
    await stream.next(1)
    await until('the subscription started', () => subscription.deliveries.length === 1)
    const exited = new Promise(resolve => b.child.once('exit', code => { resolve(code) }))
    b.child.kill('SIGTERM')
    await stream.ended
    await until('the socket closed', () => subscription.closeCode() !== undefined)
    t.equal(subscription.closeCode(), 1001, 'going away')
    t.equal(await exited, 0, 'exited 0')
  })
}
