import { Writable } from 'node:stream'
import t from 'tap'
import { traceContextOf } from '../../src/observability/trace.js'
import { startFakeBrapi } from '../fixtures/fake-brapi.js'
import { startFakeLaravel } from '../fixtures/fake-laravel.js'
import { PLUGGY_CLIENT_ID, PLUGGY_CLIENT_SECRET, startFakePluggy } from '../fixtures/fake-pluggy.js'
import { apiKey, bearer, buildTestApp, userToken } from '../helper.js'

const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736'
const CALLER_SPAN = '00f067aa0ba902b7'
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/

t.test('a caller\'s traceparent is continued: its trace id on every log line of the request ' +
  'and in the traceparent of each upstream call', async t => {
  const laravel = await startFakeLaravel(t)
  const pluggy = await startFakePluggy(t)
  const brapi = await startFakeBrapi(t)
  brapi.prices.set('PETR4', 37.5)
  const lines: Array<Record<string, unknown>> = []
  const stream = new Writable({
    write (chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>)
      done()
    }
  })
  const app = await buildTestApp(t, {
    BACKEND_URL: laravel.url,
    AGGREGATOR_URL: pluggy.url,
    AGGREGATOR_CLIENT_ID: PLUGGY_CLIENT_ID,
    AGGREGATOR_CLIENT_SECRET: PLUGGY_CLIENT_SECRET,
    QUOTES_PROVIDER: 'brapi',
    BRAPI_URL: brapi.url
  }, { logger: { level: 'info', stream } })
  const traceparent = `00-${CALLER_TRACE}-${CALLER_SPAN}-01`
  const calls = [
    await app.inject({
      method: 'GET',
      url: '/backend-api/user/profile',
      headers: { ...bearer(userToken()), traceparent, 'x-request-id': 'trace-backend' }
    }),
    await app.inject({
      method: 'POST',
      url: '/aggregator',
      headers: { ...bearer(userToken()), traceparent, 'x-request-id': 'trace-aggregator' },
      payload: { endpoint: '/connectors', method: 'GET' }
    }),
    await app.inject({
      method: 'GET',
      url: '/portfolio-assets/price/PETR4',
      headers: { ...apiKey(), traceparent, 'x-request-id': 'trace-brapi' }
    })
  ]
  t.same(calls.map(call => call.statusCode), [200, 200, 200])

  const received = [...laravel.received, ...pluggy.received, ...brapi.received]
  t.ok(received.length >= 4, 'the backend, the aggregator (key exchange and relay) and brapi were called')
  for (const request of received) {
    const sent = TRACEPARENT.exec(String(request.headers.traceparent))
    t.ok(sent, `${request.path} received a traceparent`)
    t.equal(sent?.[1], CALLER_TRACE, `${request.path}: the caller's trace`)
    t.not(sent?.[2], CALLER_SPAN, `${request.path}: a span of this service's, not the caller's`)
    t.equal(sent?.[3], '01', `${request.path}: the caller's sampling decision`)
  }
  for (const id of ['trace-backend', 'trace-aggregator', 'trace-brapi']) {
    const ofRequest = lines.filter(line => line.reqId === id)
    t.ok(ofRequest.length >= 1, `${id} has log lines`)
    t.ok(ofRequest.every(line => line.traceId === CALLER_TRACE), `every line of ${id} carries the trace id`)
  }
})

t.test('without a valid traceparent a trace starts: a fresh id in the logs and upstream', async t => {
  const laravel = await startFakeLaravel(t)
  const lines: Array<Record<string, unknown>> = []
  const stream = new Writable({
    write (chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>)
      done()
    }
  })
  const app = await buildTestApp(t, { BACKEND_URL: laravel.url }, { logger: { level: 'info', stream } })
  const invalid = [
    undefined,
    'garbage',
    `00-${'0'.repeat(32)}-${CALLER_SPAN}-01`,
    `00-${CALLER_TRACE}-${'0'.repeat(16)}-01`,
    `ff-${CALLER_TRACE}-${CALLER_SPAN}-01`,
    `00-${CALLER_TRACE}-${CALLER_SPAN}-01-extra`
  ]
  for (const [index, traceparent] of invalid.entries()) {
    const headers: Record<string, string> = { ...bearer(userToken()), 'x-request-id': `fresh-${index}` }
    if (traceparent !== undefined) headers.traceparent = traceparent
    t.equal((await app.inject({ method: 'GET', url: '/backend-api/user/profile', headers })).statusCode, 200)
    const sent = TRACEPARENT.exec(String(laravel.received.at(-1)?.headers.traceparent))
    t.ok(sent !== null && sent[1] !== CALLER_TRACE, `${String(traceparent)}: a new trace`)
    t.ok(
      lines.filter(line => line.reqId === `fresh-${index}`).every(line => line.traceId === sent?.[1]),
      'its id is in the log lines'
    )
  }
  t.match(
    traceContextOf(`01-${CALLER_TRACE}-${CALLER_SPAN}-01-future`),
    { traceId: CALLER_TRACE, flags: '01' },
    'a later version is read by its first fields'
  )
})
