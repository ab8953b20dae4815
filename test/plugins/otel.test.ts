import { Writable } from 'node:stream'
import t from 'tap'
import { startFakeLaravel } from '../fixtures/fake-laravel.js'
import { startFake } from '../fixtures/fake-server.js'
import { capturedLog } from '../fixtures/captured-log.js'
import { apiKey, bearer, buildTestApp, userToken } from '../helper.js'

interface OtlpSpan { traceId: string, spanId: string, parentSpanId?: string, name: string, kind: number }
interface OtlpExport {
  resourceSpans: Array<{
    resource: { attributes: Array<{ key: string, value: { stringValue?: string } }> }
    scopeSpans: Array<{ spans: OtlpSpan[] }>
  }>
}

const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736'
const SERVER = 2
const CLIENT = 3

t.test('with OTEL_EXPORTER_OTLP_ENDPOINT, the request, its store statements and its upstream call ' +
  'are exported as spans of the caller\'s trace', async t => {
  // A small OTLP/HTTP receiver: what the standard exporter posts to /v1/traces, as JSON.
  const exports: OtlpExport[] = []
  const receiver = await startFake(t, (request, response) => {
    if (request.method === 'POST' && request.path === '/v1/traces') exports.push(JSON.parse(request.body) as OtlpExport)
    response.writeHead(200, { 'content-type': 'application/json' })
    response.end('{}')
  })
  const laravel = await startFakeLaravel(t)
  const lines: Array<Record<string, unknown>> = []
  const stream = new Writable({
    write (chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>)
      done()
    }
  })
  const app = await buildTestApp(t, {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    BACKEND_URL: laravel.url
  }, { logger: { level: 'info', stream } })
  const address = await app.listen({ host: '127.0.0.1', port: 0 })

  const traceparent = `00-${CALLER_TRACE}-00f067aa0ba902b7-01`
  const relayed = await fetch(`${address}/backend-api/user/profile`, {
    headers: {
      ...bearer(userToken()),
      traceparent,
      'x-request-id': 'otel-relay'
    }
  })
  t.equal(relayed.status, 200)
  const created = await fetch(`${address}/portfolios`, {
    method: 'POST',
    headers: { ...apiKey(), traceparent, 'content-type': 'application/json', 'x-request-id': 'otel-store' },
    body: JSON.stringify({ name: 'Traced', userId: 'otel' })
  })
  t.equal(created.status, 201)
  const fresh = await fetch(`${address}/auth/health`, { headers: { 'x-request-id': 'otel-fresh' } })
  t.equal(fresh.status, 200)
  await app.close() // flushes the batch

  const spans = exports.flatMap(batch =>
    batch.resourceSpans.flatMap(resource => resource.scopeSpans.flatMap(scope => scope.spans))
  )
  t.ok(
    exports.some(batch =>
      batch.resourceSpans.some(resource =>
        resource.resource.attributes.some(
          attribute => attribute.key === 'service.name' && attribute.value.stringValue === 'bff-service'
        )
      )
    ),
    'the service names itself'
  )
  const ofCaller = spans.filter(span => span.traceId === CALLER_TRACE)
  t.ok(ofCaller.filter(span => span.kind === SERVER).length >= 2, 'a SERVER span per request of the caller\'s trace')
  t.ok(ofCaller.some(span => span.name === 'request'), 'the Fastify instrumentation\'s request span')
  t.ok(ofCaller.some(span => span.name === 'store.query' && span.kind === CLIENT), 'store statements')
  const upstream = ofCaller.find(span => span.kind === CLIENT && span.name !== 'store.query')
  t.ok(upstream, 'the upstream call')
  const sent = String(laravel.received[0]?.headers.traceparent)
  t.match(
    sent,
    new RegExp(`^00-${CALLER_TRACE}-${upstream?.spanId ?? 'none'}-01$`),
    'the backend got the traceparent of that CLIENT span'
  )

  // Log lines and spans carry one id, also for a trace the service started.
  t.ok(lines.filter(line => line.reqId === 'otel-relay').every(line => line.traceId === CALLER_TRACE))
  const freshTrace = lines.find(line => line.reqId === 'otel-fresh')?.traceId
  t.match(freshTrace, /^[0-9a-f]{32}$/)
  t.not(freshTrace, CALLER_TRACE)
  t.ok(spans.some(span => span.traceId === freshTrace && span.kind === SERVER), 'the started trace is the exported one')
})

t.test('a collector that goes away under load costs no request: its loss is one line and the gauge, ' +
  'its return another', async t => {
  // Batches every 50 ms instead of 5 s, so the test sees several exports.
  process.env.OTEL_BSP_SCHEDULE_DELAY = '50'
  t.teardown(() => { delete process.env.OTEL_BSP_SCHEDULE_DELAY })
  const collector = { away: false }
  const receiver = await startFake(t, (_request, response) => {
    // Away: every connection is cut before an answer, as a collector that was killed.
    if (collector.away) response.socket?.destroy()
    else response.writeHead(200, { 'content-type': 'application/json' }).end('{}')
  })
  const { stream, lines } = capturedLog()
  const app = await buildTestApp(t, {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, METRICS_PORT: '0', RATE_LIMIT_MAX: '100000000'
  },
  { logger: { level: 'info', stream } })
  const spanExport = (): Array<Record<string, unknown>> => lines.filter(line => line.dependency === 'span_export')
  const load = async (until: () => boolean): Promise<number[]> => {
    const statuses: number[] = []
    for (let round = 0; round < 400 && !until(); round++) {
      const answers = await Promise.all(Array.from({ length: 10 }, async () =>
        (await app.inject({ method: 'GET', url: '/auth/health' })).statusCode))
      statuses.push(...answers)
      await new Promise(resolve => setTimeout(resolve, 25))
    }
    return statuses
  }
  await load(() => receiver.received.length > 0)
  collector.away = true
  const during = await load(() => spanExport().some(line => line.msg === 'dependency unavailable'))
  t.same(new Set(during), new Set([200]), `${during.length} requests served while the collector was away`)
  const gauge = await (await fetch(`${app.metricsAddress() ?? ''}/metrics`)).text()
  t.match(gauge, /bff_dependency_up\{dependency="span_export"\} 0/)
  collector.away = false
  await load(() => spanExport().some(line => line.msg === 'dependency available again'))
  t.match(spanExport(), [
    { level: 40, msg: 'dependency unavailable' },
    { level: 30, msg: 'dependency available again' }
  ], 'one line each way')
})
