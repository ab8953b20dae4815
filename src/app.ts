import type { ServerOptions } from 'node:http'
import Fastify, { type FastifyServerOptions } from 'fastify'
import sensible from '@fastify/sensible'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { AppConfig } from './config/config.js'
import errorResponses, { answerClientError, frameworkErrors } from './plugins/error-responses.js'
import openapi from './plugins/openapi.js'
import { MAX_REQUEST_TEXT_LENGTH } from './schemas/common.js'
import strictInputs from './plugins/strict-inputs.js'
import protection from './plugins/protection.js'
import lifecycle from './plugins/lifecycle.js'
import lingeringClose from './plugins/lingering-close.js'
import { echoRequestId, requestId } from './observability/logging.js'
import schemaCompilers from './plugins/schema-compilers.js'
import metrics, { dependencyHealth } from './plugins/metrics.js'
import { tracedChildLogger, tracedChildLoggerWith } from './observability/trace.js'
import auth from './plugins/auth.js'
import store from './plugins/store.js'
import upstreams from './plugins/upstreams.js'
import quotes from './plugins/quotes.js'
import changeFeed from './plugins/change-feed.js'
import domain from './plugins/domain.js'
import idempotency from './plugins/idempotency.js'
import conditionalRequests from './plugins/conditional-requests.js'
import authModule from './modules/auth/index.js'
import portfoliosModule from './modules/portfolios/index.js'
import portfolioValuationModule from './modules/portfolio-valuation/index.js'
import portfolioImportsModule from './modules/portfolio-imports/index.js'
import portfolioAssetsModule from './modules/portfolio-assets/index.js'
import exclusionsModule from './modules/openfinance-excluded-transactions/index.js'
import systemModule from './modules/system/index.js'
import backendApiModule from './modules/backend-api/index.js'
import aggregatorModule from './modules/aggregator/index.js'
import graphqlModule from './modules/graphql/index.js'
import demoModule from './modules/demo/index.js'

/**
 * The API's version (docs/api.md#versioning); package.json carries the same (a test holds them together).
 * @internal Test seam: a test holds it equal to package.json's version.
 */
export const SERVICE_VERSION = '1.0.0'

/**
 * Builds the whole service without listening: the server entry, every test and a host
 * application that wants the same service all start here.
 */
export async function buildApp (config: AppConfig, server: FastifyServerOptions & { http?: ServerOptions } = {}) {
  // Before the server exists: the HTTP instrumentation must see it created.
  const tracing =
    config.otlpEndpoint === undefined
      ? undefined
      : await (await import('./observability/otel.js')).startTracing(config.otlpEndpoint)
  const app = Fastify({
    bodyLimit: 1024 * 1024,
    // The caller's sane x-request-id, else a UUID (echoed by echoRequestId).
    genReqId: requestId,
    requestIdHeader: false,
    // Every line of a request carries its W3C trace id; upstream calls continue the trace.
    childLoggerFactory: tracing === undefined ? tracedChildLogger : tracedChildLoggerWith(tracing.activeTrace),
    // Path parameters of any length reach validation, which answers 404 for an overlong id
    // (never 414: docs/api.md#inputs); the request line itself is bounded by Node's header limit.
    routerOptions: { maxParamLength: MAX_REQUEST_TEXT_LENGTH },
    // Behind a balancer the client is in X-Forwarded-For, from the proxies TRUST_PROXY names.
    trustProxy: config.trustProxy,
    ...server,
    frameworkErrors,
    clientErrorHandler: answerClientError
  }).withTypeProvider<TypeBoxTypeProvider>()

  // Every route's validators and serializers, before any route; a module finds them here and adds none.
  await app.register(schemaCompilers)

  // JSON only (another content type is 415: docs/api.md#inputs); a text/plain body would also dodge
  // CORS preflight (GHSA-3fjj-p79j-c9hh).
  app.removeContentTypeParser('text/plain')
  app.addHook('onRequest', echoRequestId)
  if (tracing !== undefined) {
    await app.register(tracing.plugin)
    app.addHook('onClose', async () => { await tracing.shutdown() })
  }
  await app.register(metrics, config.metrics)
  tracing?.reportExports(dependencyHealth(app, 'span_export'))
  await app.register(sensible)
  await app.register(errorResponses)
  await app.register(lifecycle)
  await app.register(lingeringClose)
  await app.register(openapi, { version: SERVICE_VERSION, environment: config.env.NODE_ENV })
  await app.register(strictInputs)
  await app.register(store, tracing === undefined ? config.store : { ...config.store, tracer: tracing.tracer })
  await app.register(auth, config.auth)
  await app.register(protection, config.protection)
  await app.register(
    upstreams,
    tracing === undefined ? config.upstreams : { ...config.upstreams, tracer: tracing.tracer }
  )
  await app.register(quotes, config.quotes)
  await app.register(changeFeed, config.changeFeed)
  // One domain for every module (their live valuations share one quote refresher).
  await app.register(domain, config.domain)
  // Switched on per route (`config.idempotent`, `config.entityTag`, `config.ifMatch`): before the modules.
  await app.register(idempotency, config.idempotency)
  await app.register(conditionalRequests)
  await app.register(authModule, { prefix: '/auth', ...config.modules.auth })
  await app.register(portfoliosModule, { prefix: '/portfolios' })
  await app.register(portfolioValuationModule, { prefix: '/portfolios' })
  await app.register(portfolioImportsModule, { prefix: '/portfolios' })
  await app.register(portfolioAssetsModule, { prefix: '/portfolio-assets' })
  await app.register(exclusionsModule, { prefix: '/openfinance-excluded-transactions' })
  await app.register(systemModule, config.modules.system)
  await app.register(backendApiModule, { prefix: '/backend-api', ...config.modules.backendApi })
  await app.register(aggregatorModule, { prefix: '/aggregator', ...config.modules.aggregator })
  await app.register(graphqlModule, config.modules.graphql)
  await app.register(demoModule, config.modules.demo)
  return app
}

export type App = Awaited<ReturnType<typeof buildApp>>
