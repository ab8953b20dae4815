import t from 'tap'
import type { AddressInfo } from 'node:net'
import Fastify, { type FastifyInstance } from 'fastify'
import lingeringClose from '../../src/plugins/lingering-close.js'
import { httpTimeouts } from '../../src/config/timeouts.js'
import { apiKey, buildTestApp } from '../helper.js'
import { parseAnswer, sendLargeBody, trickleBody } from '../fixtures/raw-client.js'

async function listen (app: FastifyInstance): Promise<number> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  return (app.server.address() as AddressInfo).port
}

t.test('the service answers 413 to a client that reads only after sending 3 MiB, and keeps serving', async t => {
  const app = await buildTestApp(t, {}, httpTimeouts(30_000))
  const port = await listen(app)
  for (const chunked of [false, false, false, true, true]) {
    const exchange = await sendLargeBody(port, '/portfolios', apiKey(), { totalBytes: 3 * 1024 * 1024, chunked })
    t.equal(exchange.error, undefined, 'no reset')
    t.match(parseAnswer(exchange.received), { status: 413, body: { code: 'PAYLOAD_TOO_LARGE' } })
    t.equal(exchange.bodyBytesSent, 3 * 1024 * 1024, 'the whole body was taken')
  }
  t.equal((await fetch(`http://127.0.0.1:${port}/auth/health`)).status, 200)
})

t.test('lingering is bounded: by bytes, and by time for a client that stops sending', async t => {
  const app = Fastify({ bodyLimit: 1024 })
  t.teardown(() => app.close())
  await app.register(lingeringClose, { lingerMs: 300, lingerBytes: 256 * 1024 })
  app.post('/', async () => ({ ok: true }))
  const port = await listen(app)

  const flood = await sendLargeBody(port, '/', {}, { totalBytes: 64 * 1024 * 1024, pauseMs: 0 })
  t.ok(flood.bodyBytesSent < 64 * 1024 * 1024, `the server stopped reading at its bound (${flood.bodyBytesSent} bytes)`)

  // Chunks with pauses far longer than the bound: the server closes in between.
  const stalled = await sendLargeBody(port, '/', {}, { totalBytes: 64 * 1024 * 1024, chunkBytes: 16384, pauseMs: 1500 })
  t.ok(stalled.bodyBytesSent < 64 * 1024 * 1024, `the server stopped waiting (${stalled.bodyBytesSent} bytes taken)`)
  t.notOk(stalled.closedByClient)
})

t.test('a body trickled past REQUEST_TIMEOUT_MS is cut at the timeout, not at Node\'s 60 s default', async t => {
  const app = await buildTestApp(t, {}, httpTimeouts(1000))
  const port = await listen(app)
  t.equal(app.server.headersTimeout, 1000)
  t.equal(app.server.requestTimeout, 1000)
  // Ten times the timeout: generous for a busy machine; before, nothing happened for 60 s.
  const exchange = await trickleBody(port, '/portfolios', apiKey(), 100, 10_000)
  t.notOk(exchange.closedByClient, `the server cut it (after ${exchange.elapsedMs} ms)`)
  t.ok(exchange.elapsedMs >= 1000, 'not before the timeout')
  t.equal(parseAnswer(exchange.received).status, 408)
})

t.test('timeouts: Node checks deadlines at least every second, more often for short ones', async t => {
  t.match(httpTimeouts(30_000), {
    requestTimeout: 30_000,
    keepAliveTimeout: 72_000,
    connectionTimeout: 60_000,
    http: { requestTimeout: 30_000, headersTimeout: 30_000, connectionsCheckingInterval: 1000 }
  })
  t.match(httpTimeouts(2000).http, { connectionsCheckingInterval: 500 })
})
