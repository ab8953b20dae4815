import { createRequire } from 'node:module'
import type { FastifyPluginCallback } from 'fastify'
import { trace, type Tracer } from '@opentelemetry/api'
import type { SpanExporter } from '@opentelemetry/sdk-trace-node'
import type { TraceContext } from './trace.js'
import type { DependencyHealth } from './dependencies.js'

/** `ExportResultCode.SUCCESS` of @opentelemetry/core, whose enum is not imported for one value. */
const SUCCESS = 0

/** OpenTelemetry span export, on only with `OTEL_EXPORTER_OTLP_ENDPOINT` (docs/api.md#observability). */
export interface Tracing {
  /** @fastify/otel: a span per request and per hook and handler. Register before the routes. */
  plugin: FastifyPluginCallback
  tracer: Tracer
  /** The trace of the span active where it is called (the request's SERVER span in a request). */
  activeTrace: () => TraceContext | undefined
  /** Exports the spans still buffered and stops. */
  shutdown: () => Promise<void>
  /** Where each export's success or failure is reported, once the app can log (`span_export`). */
  reportExports: (health: DependencyHealth) => void
}

export const SERVICE_NAME = 'bff-service'

/**
 * Starts the standard OpenTelemetry pipeline: a tracer provider with the W3C propagator and an
 * AsyncLocalStorage context, spans batched to the OTLP/HTTP exporter at `endpoint`
 * (`/v1/traces`), the HTTP instrumentation (a SERVER span per incoming request, a CLIENT span
 * and the `traceparent` of each upstream call through got; the relays' undici calls get theirs
 * from `tracer`, see src/upstream/relay.ts) and the official Fastify one.
 * Everything is loaded here, on demand: without an endpoint none of it is in memory.
 */
export async function startTracing (endpoint: string): Promise<Tracing> {
  const [
    { NodeTracerProvider, BatchSpanProcessor },
    { OTLPTraceExporter },
    { resourceFromAttributes },
    { HttpInstrumentation },
    { registerInstrumentations },
    { FastifyOtelInstrumentation }
  ] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/instrumentation-http'),
    import('@opentelemetry/instrumentation'),
    import('@fastify/otel')
  ])
  // A collector that is away costs the spans of the moment, never the service: the exporter
  // retries a batch with its own backoff, the processor drops spans past its queue (2 048), and each
  // export's outcome is reported so that an outage is one log line and `bff_dependency_up`.
  const exporter = new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, '')}/v1/traces` })
  let health: DependencyHealth | undefined
  const reporting: SpanExporter = {
    export: (spans, done) => {
      exporter.export(spans, result => {
        if (result.code === SUCCESS) health?.up()
        else health?.down(result.error ?? new Error('span export failed'))
        done(result)
      })
    },
    shutdown: async () => { await exporter.shutdown() },
    forceFlush: async () => { await exporter.forceFlush() }
  }
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': SERVICE_NAME }),
    spanProcessors: [new BatchSpanProcessor(reporting)]
  })
  provider.register()
  const fastifyOtel = new FastifyOtelInstrumentation()
  const unregister = registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [new HttpInstrumentation(), fastifyOtel]
  })
  // The instrumentation patches `http` when it is next required; Fastify and got already hold
  // the module (one object, patched in place), so it is required once more here.
  const require = createRequire(import.meta.url)
  require('node:http')
  require('node:https')
  return {
    plugin: fastifyOtel.plugin(),
    tracer: provider.getTracer(SERVICE_NAME),
    activeTrace: () => {
      const active = trace.getActiveSpan()?.spanContext()
      return active === undefined
        ? undefined
        : { traceId: active.traceId, flags: active.traceFlags === 1 ? '01' : '00' }
    },
    shutdown: async () => {
      unregister()
      await provider.shutdown()
    },
    reportExports: reportTo => { health = reportTo }
  }
}
