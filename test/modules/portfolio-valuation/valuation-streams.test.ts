import { readdirSync } from 'node:fs'
import { request } from 'node:http'
import t from 'tap'
import type { App } from '../../../src/app.js'
import { apiKey, buildTestApp, TEST_API_KEYS } from '../../helper.js'
import { openEventStream } from '../../fixtures/event-stream.js'
import { startFakeBrapi } from '../../fixtures/fake-brapi.js'
import { until } from '../../fixtures/until.js'

async function portfolio (app: App, symbol: string): Promise<string> {
  const { id } = (await app.inject({
    method: 'POST', url: '/portfolios', headers: apiKey(), payload: { name: symbol, userId: 'drop' }
  })).json() as { id: string }
  await app.inject({
    method: 'POST',
    url: '/portfolio-assets',
    headers: apiKey(),
    payload: { name: symbol, symbol, type: 'STOCK', quantity: 1, price: 10, portfolioId: id }
  })
  return id
}

/** Descriptors this process holds open (sockets included). */
function openDescriptors (): number {
  return readdirSync('/proc/self/fd').length
}

/** Opens a stream on a connection of its own and resolves once its first event arrived; the answer drops it. */
async function openAndHold (base: string, path: string): Promise<() => void> {
  return await new Promise((resolve, reject) => {
    const headers = { ...apiKey(), accept: 'text/event-stream' }
    const req = request(`${base}${path}`, { agent: false, headers }, res => {
      if (res.statusCode !== 200) reject(new Error(`stream answered ${String(res.statusCode)}`))
      res.on('data', (chunk: Buffer) => {
        if (chunk.includes('event: valuation')) resolve(() => { req.destroy() })
      })
      res.on('error', () => {})
    })
    req.on('error', () => {})
    req.end()
  })
}

t.test('a thousand streams opened and dropped by their clients leave nothing behind: ' +
  'no stream, no watched portfolio or symbol, no descriptor', { skip: process.platform !== 'linux' && 'needs /proc' },
async t => {
  const brapi = await startFakeBrapi(t)
  for (const symbol of ['AAAA3', 'BBBB3', 'CCCC3', 'DDDD3']) brapi.prices.set(symbol, 11)
  const app = await buildTestApp(t, {
    QUOTES_PROVIDER: 'brapi', BRAPI_URL: brapi.url, VALUATION_STREAMS_PER_CREDENTIAL: '2000', RATE_LIMIT_MAX: '100000'
  })
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  const ids = await Promise.all(['AAAA3', 'BBBB3', 'CCCC3', 'DDDD3'].map(async symbol => await portfolio(app, symbol)))
  // One stream first, so what exists once (the keep-alive pool to brapi, the listener) is counted before.
  const warm = await openAndHold(base, `/portfolios/${ids[0] ?? ''}/valuation/stream`)
  warm()
  await until('the first stream forgotten', () => app.domain.liveValuations.streams === 0)
  const descriptors = openDescriptors()
  t.same(app.domain.liveValuations.watched, { portfolios: 0, symbols: 0 })

  const drops: Array<() => void> = []
  for (let batch = 0; batch < 10; batch++) {
    drops.push(...await Promise.all(Array.from({ length: 100 }, async (_, index) =>
      await openAndHold(base, `/portfolios/${ids[index % ids.length] ?? ''}/valuation/stream`))))
  }
  t.equal(app.domain.liveValuations.streams, 1000, 'a thousand streams open')
  t.same(app.domain.liveValuations.watched, { portfolios: 4, symbols: 4 })
  for (const drop of drops) drop()
  await until('every stream forgotten', () => app.domain.liveValuations.streams === 0)
  t.same(app.domain.liveValuations.watched, { portfolios: 0, symbols: 0 }, 'the watch set is empty again')
  await until(`descriptors back to ${descriptors}`, () => openDescriptors() <= descriptors)
})

t.test('past VALUATION_STREAMS_PER_CREDENTIAL a stream is 429 before it starts; ' +
  'started streams stay out of the request histogram and are counted apart', async t => {
  const app = await buildTestApp(t, { VALUATION_STREAMS_PER_CREDENTIAL: '2', METRICS_PORT: '0' })
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  const id = await portfolio(app, 'PETR4')
  const url = `${base}/portfolios/${id}/valuation/stream`
  const unknown = await openEventStream(t, `${base}/portfolios/nope/valuation/stream`, apiKey())
  t.match(unknown, { status: 404, body: { code: 'NOT_FOUND' } })
  const anonymous = await openEventStream(t, url)
  t.match(anonymous, { status: 401, body: { code: 'API_KEY_INVALID' } })
  const streams = [await openEventStream(t, url, apiKey()), await openEventStream(t, url, apiKey())]
  await Promise.all(streams.map(async stream => await stream.next(1)))
  const over = await openEventStream(t, url, apiKey())
  t.equal(over.status, 429)
  t.match(over.body, { statusCode: 429, code: 'RATE_LIMITED', path: `/portfolios/${id}/valuation/stream` })
  t.match(over.headers.get('retry-after'), /^\d+$/)
  const rotated = await openEventStream(t, url, apiKey(TEST_API_KEYS[1]))
  t.equal(rotated.status, 200, 'another key has its own streams')

  const metrics = await (await fetch(`${app.metricsAddress() ?? ''}/metrics`)).text()
  t.match(metrics, /bff_valuation_streams 3\n/)
  const route = 'route="/portfolios/:id/valuation/stream"'
  t.match(metrics, new RegExp(`http_request_duration_seconds_count\\{method="GET",${route},status_code="429"\\} 1`))
  t.notMatch(metrics, new RegExp(`${route},status_code="200"`), 'an open stream is no slow request')
  streams[0]?.close()
  await until('the closed stream forgotten', () => app.domain.liveValuations.streams === 2)
  t.equal((await openEventStream(t, url, apiKey())).status, 200, 'a place freed by a closed stream is taken again')
})

t.test('the stream continues from a reconnecting EventSource\'s Last-Event-ID; ' +
  'a closing instance ends its streams', async t => {
  const app = await buildTestApp(t)
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  const id = await portfolio(app, 'PETR4')
  const stream = await openEventStream(t, `${base}/portfolios/${id}/valuation/stream`, {
    ...apiKey(), 'last-event-id': '41'
  })
  t.match((await stream.next(1))[0], { id: '42', event: 'valuation' })
  await app.close()
  await stream.ended
  t.equal(stream.events.length, 1, 'ended by the service')
})

t.test('the development reset replaces every portfolio: their streams end with `deleted`', async t => {
  const app = await buildTestApp(t)
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  const id = await portfolio(app, 'PETR4')
  const stream = await openEventStream(t, `${base}/portfolios/${id}/valuation/stream`, apiKey())
  await stream.next(1)
  t.equal((await app.inject({ method: 'POST', url: '/reset', headers: apiKey() })).statusCode, 200)
  t.match((await stream.next(2))[1], { event: 'deleted' })
  await stream.ended
})
