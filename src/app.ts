import Fastify, { type FastifyServerOptions } from 'fastify'
import sensible from '@fastify/sensible'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { apiKeyList, type AppConfig } from './config.js'
import errorResponses, { frameworkErrors } from './plugins/error-responses.js'
import openapi from './plugins/openapi.js'
import protection from './plugins/protection.js'
import lifecycle from './plugins/lifecycle.js'
import { echoRequestId } from './logging.js'
import auth, { providerConfig, type AuthPluginOptions } from './plugins/auth.js'
import store from './plugins/store.js'
import upstreams from './plugins/upstreams.js'
import quotes from './plugins/quotes.js'
import authModule from './modules/auth/index.js'
import portfoliosModule from './modules/portfolios/index.js'
import portfolioAssetsModule from './modules/portfolio-assets/index.js'
import exclusionsModule from './modules/openfinance-excluded-transactions/index.js'
import systemModule from './modules/system/index.js'
import backendApiModule from './modules/backend-api/index.js'
import aggregatorModule from './modules/aggregator/index.js'

/** The auth plugin's options, read from the configuration. */
export function authOptions (config: AppConfig): AuthPluginOptions {
  return {
    jwtSecret: config.JWT_SECRET,
    jwtAlgorithm: config.JWT_ALGORITHM,
    leewaySeconds: config.JWT_LEEWAY,
    defaultType: config.JWT_DEFAULT_TYPE,
    providers: providerConfig(
      { user: config.JWT_USER_MODEL, client: config.JWT_CLIENT_MODEL },
      { user: config.JWT_USER_PROVIDER_HASH, client: config.JWT_CLIENT_PROVIDER_HASH }
    ),
    apiKeys: apiKeyList(config.API_KEYS)
  }
}

/** The API's version (spec §9); package.json carries the same (a test holds them together). */
export const SERVICE_VERSION = '1.0.0'

/**
 * Builds the whole service without listening: the server entry, every test and a host
 * application that wants the same service all start here.
 */
export async function buildApp (config: AppConfig, server: FastifyServerOptions = {}) {
  const devRoutes = config.NODE_ENV !== 'production'
  const app = Fastify({
    bodyLimit: 1024 * 1024,
    ...server,
    frameworkErrors,
    ajv: {
      customOptions: {
        // Every failed rule makes one phrase of the 400 array (CONTRACT §5); `verbose` lets the
        // error handler see the schema of a missing property; no coercion: `123` is not a string.
        allErrors: true,
        verbose: true,
        coerceTypes: false
      }
    }
  }).withTypeProvider<TypeBoxTypeProvider>()

  // JSON only (CONTRACT §4: another content type is 415); a text/plain body would also dodge
  // CORS preflight (GHSA-3fjj-p79j-c9hh).
  app.removeContentTypeParser('text/plain')
  app.addHook('onRequest', echoRequestId)
  await app.register(sensible)
  await app.register(errorResponses)
  await app.register(lifecycle)
  await app.register(openapi, { version: SERVICE_VERSION })
  // Demo portfolios only in development: a test or production store starts empty.
  await app.register(store, { url: config.DATABASE_URL, demoData: config.NODE_ENV === 'development' })
  await app.register(auth, authOptions(config))
  await app.register(protection, {
    corsOrigins: (config.CORS_ORIGINS ?? '').split(',').map(origin => origin.trim()).filter(Boolean),
    rateLimitMax: config.RATE_LIMIT_MAX,
    rateLimitWindowMs: config.RATE_LIMIT_WINDOW_MS,
    rateLimitRedisUrl: config.RATE_LIMIT_REDIS_URL,
    maxEventLoopDelayMs: config.MAX_EVENT_LOOP_DELAY_MS
  })
  await app.register(upstreams, {
    backend: { baseUrl: config.BACKEND_URL, timeoutMs: config.BACKEND_TIMEOUT_MS },
    aggregator: {
      baseUrl: config.AGGREGATOR_URL,
      timeoutMs: config.AGGREGATOR_TIMEOUT_MS,
      credentials: config.AGGREGATOR_CLIENT_ID === undefined || config.AGGREGATOR_CLIENT_SECRET === undefined
        ? undefined
        : { clientId: config.AGGREGATOR_CLIENT_ID, clientSecret: config.AGGREGATOR_CLIENT_SECRET }
    }
  })
  await app.register(authModule, {
    prefix: '/auth',
    devRoutes,
    backendUrl: config.BACKEND_URL,
    jwtAlgorithm: config.JWT_ALGORITHM
  })
  await app.register(quotes, config.QUOTES_PROVIDER === 'brapi'
    ? { provider: 'brapi', quoteTtlSeconds: config.QUOTES_TTL, brapiUrl: config.BRAPI_URL, brapiToken: config.BRAPI_TOKEN, timeoutMs: config.BRAPI_TIMEOUT_MS }
    : { provider: 'offline', quoteTtlSeconds: config.QUOTES_TTL })
  await app.register(portfoliosModule, { prefix: '/portfolios' })
  await app.register(portfolioAssetsModule, { prefix: '/portfolio-assets' })
  await app.register(exclusionsModule, { prefix: '/openfinance-excluded-transactions' })
  await app.register(systemModule, { devRoutes, backendHealthPath: config.BACKEND_HEALTH_PATH })
  await app.register(backendApiModule, {
    prefix: '/backend-api',
    paths: { health: config.BACKEND_HEALTH_PATH, me: config.BACKEND_ME_PATH, profile: config.BACKEND_PROFILE_PATH }
  })
  await app.register(aggregatorModule, {
    prefix: '/aggregator',
    allowedPaths: config.AGGREGATOR_ALLOWED_PATHS.split(','),
    allowedMethods: config.AGGREGATOR_ALLOWED_METHODS.split(','),
    webhookSecret: config.AGGREGATOR_WEBHOOK_SECRET
  })
  return app
}

export type App = Awaited<ReturnType<typeof buildApp>>
