/**
 * The configuration the service runs with: the validated variables turned into each plugin's and
 * module's options. `loadConfig` (config.ts) validates the environment and applies the production
 * rules; this file only splits and combines variables that were already accepted.
 */
import type { ConfigValues } from './schema.js'
import { isPostgresUrl } from '../store/database-url.js'
import { providerConfig } from '../schemas/tokens.js'
import type { AuthPluginOptions } from '../plugins/auth.js'
import type { MetricsPluginOptions } from '../plugins/metrics.js'
import type { ProtectionPluginOptions } from '../plugins/protection.js'
import type { QuotesPluginOptions } from '../plugins/quotes.js'
import type { UpstreamsPluginOptions } from '../plugins/upstreams.js'
import type { AggregatorModuleOptions } from '../modules/aggregator/index.js'
import type { AuthModuleOptions } from '../modules/auth/index.js'
import type { BackendApiModuleOptions } from '../modules/backend-api/index.js'
import type { SystemModuleOptions } from '../modules/system/index.js'
import type { GraphqlModuleOptions } from '../modules/graphql/index.js'
import type { DemoModuleOptions } from '../modules/demo/index.js'
import type { ChangeFeedPluginOptions } from '../plugins/change-feed.js'
import type { IdempotencyPluginOptions } from '../plugins/idempotency.js'
import type { DomainPluginOptions } from '../plugins/domain.js'
import type { Misspelling } from './misspellings.js'

/** The validated variables; outside production missing secrets are filled with development values. */
export type Environment = Omit<ConfigValues, 'JWT_SECRET' | 'API_KEYS'> & {
  JWT_SECRET: string
  API_KEYS: string
}

/** The configuration, parsed once: the variables, and each plugin's options ready to register. */
export interface AppConfig {
  /** Every variable, validated and defaulted. */
  env: Environment
  /** Variables of the environment that look like one of the service's but are not: each is a warning at start. */
  misspellings: Misspelling[]
  /** Development-only routes exist (outside production: docs/api.md#development-only-routes). */
  devRoutes: boolean
  /** After SIGTERM, how long `/ready` says 503 while the instance still serves. */
  shutdownDrainMs: number
  /** Fastify's `trustProxy`: client IPs (rate limits, failed-authentication budgets, logs) from X-Forwarded-For. */
  trustProxy: boolean | string[] | ((address: string, hop: number) => boolean)
  metrics: MetricsPluginOptions
  /** OTLP/HTTP endpoint spans are exported to; no OpenTelemetry at all without one. */
  otlpEndpoint: string | undefined
  auth: AuthPluginOptions
  store: { url: string, schema?: string, demoData: boolean, createFolder: boolean, waitForDatabase: boolean }
  protection: ProtectionPluginOptions
  upstreams: UpstreamsPluginOptions
  quotes: QuotesPluginOptions
  changeFeed: ChangeFeedPluginOptions
  idempotency: IdempotencyPluginOptions
  domain: DomainPluginOptions
  modules: {
    auth: AuthModuleOptions
    system: SystemModuleOptions
    backendApi: BackendApiModuleOptions
    aggregator: AggregatorModuleOptions
    graphql: GraphqlModuleOptions
    demo: DemoModuleOptions
  }
}

/** The non-empty, trimmed items of a comma-separated variable (`API_KEYS`, `CORS_ORIGINS`, …). */
export function commaList (value: string | undefined): string[] {
  return (value ?? '').split(',').map(item => item.trim()).filter(item => item.length > 0)
}

/**
 * Long enough for a balancer checking `/ready` every 2 s to see two failures, and for an idle
 * keep-alive connection of a balancer with a shorter idle timeout to close (docs/deploy.md).
 */
const PRODUCTION_DRAIN_MS = 5000

/** The `hops` proxies nearest the service are trusted, whatever their addresses. */
function trustHops (hops: number): (address: string, hop: number) => boolean {
  return (_address, hop) => hop < hops
}

/** Each plugin's options from the variables: the one place where they are split and combined. */
export function pluginOptions (env: Environment): Omit<AppConfig, 'misspellings'> {
  const production = env.NODE_ENV === 'production'
  const devRoutes = !production
  const sharedRedisUrl = env.RATE_LIMIT_REDIS_URL ?? env.REDIS_URL
  const providers = providerConfig(
    { user: env.JWT_USER_MODEL, client: env.JWT_CLIENT_MODEL },
    { user: env.JWT_USER_PROVIDER_HASH, client: env.JWT_CLIENT_PROVIDER_HASH }
  )
  return {
    env,
    devRoutes,
    shutdownDrainMs: env.SHUTDOWN_DRAIN_MS ?? (env.NODE_ENV === 'production' ? PRODUCTION_DRAIN_MS : 0),
    metrics: { port: env.METRICS_PORT, host: env.METRICS_HOST },
    otlpEndpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT,
    trustProxy: env.TRUST_PROXY === undefined
      ? false
      : env.TRUST_PROXY === 'true'
        ? true
        : /^\d+$/.test(env.TRUST_PROXY) ? trustHops(Number(env.TRUST_PROXY)) : commaList(env.TRUST_PROXY),
    auth: {
      jwtSecret: env.JWT_SECRET,
      jwtAlgorithm: env.JWT_ALGORITHM,
      leewaySeconds: env.JWT_LEEWAY,
      defaultType: env.JWT_DEFAULT_TYPE,
      providers,
      apiKeys: commaList(env.API_KEYS),
      authFailuresPerMinute: env.AUTH_FAILURES_PER_MINUTE,
      portfolioAccess: env.PORTFOLIO_ACCESS
    },
    // Demo portfolios only in development: a test or production store starts empty.
    // Production waits for an unreachable PostgreSQL (not ready) and never creates a SQLite folder
    // (docs/deploy.md#failure-modes): elsewhere a missing folder is made and a missing server is one line.
    store: {
      url: env.DATABASE_URL,
      ...env.DATABASE_SCHEMA === undefined ? {} : { schema: env.DATABASE_SCHEMA },
      demoData: env.NODE_ENV === 'development',
      createFolder: !production,
      waitForDatabase: production
    },
    protection: {
      corsOrigins: commaList(env.CORS_ORIGINS),
      rateLimitMax: env.RATE_LIMIT_MAX,
      rateLimitWindowMs: env.RATE_LIMIT_WINDOW_MS,
      rateLimitRedisUrl: sharedRedisUrl,
      maxEventLoopDelayMs: env.MAX_EVENT_LOOP_DELAY_MS,
      hstsMaxAgeSeconds: env.HSTS_MAX_AGE
    },
    upstreams: {
      backend: { baseUrl: env.BACKEND_URL, timeoutMs: env.BACKEND_TIMEOUT_MS },
      aggregator: {
        baseUrl: env.AGGREGATOR_URL,
        timeoutMs: env.AGGREGATOR_TIMEOUT_MS,
        credentials: env.AGGREGATOR_CLIENT_ID === undefined || env.AGGREGATOR_CLIENT_SECRET === undefined
          ? undefined
          : { clientId: env.AGGREGATOR_CLIENT_ID, clientSecret: env.AGGREGATOR_CLIENT_SECRET },
        requestsPerMinute: env.AGGREGATOR_REQUESTS_PER_MINUTE,
        requestsPerPrincipalPerMinute: env.AGGREGATOR_REQUESTS_PER_PRINCIPAL_PER_MINUTE,
        redisUrl: sharedRedisUrl
      }
    },
    quotes: env.QUOTES_PROVIDER === 'brapi'
      ? {
          provider: 'brapi',
          quoteTtlSeconds: env.QUOTES_TTL,
          brapiUrl: env.BRAPI_URL,
          brapiToken: env.BRAPI_TOKEN,
          tickersPerRequest: env.BRAPI_TICKERS_PER_REQUEST,
          timeoutMs: env.BRAPI_TIMEOUT_MS
        }
      : { provider: 'offline', quoteTtlSeconds: env.QUOTES_TTL },
    // A keyed request makes a few upstream calls at most: one in flight longer than this was lost.
    idempotency: {
      ttlSeconds: env.IDEMPOTENCY_TTL_SECONDS,
      inFlightLeaseMs: 60_000 + 2 * Math.max(env.BACKEND_TIMEOUT_MS, env.AGGREGATOR_TIMEOUT_MS)
    },
    // The watched symbols are asked again every QUOTES_TTL, at most once a second (0 disables only the cache).
    domain: {
      liveValuations: {
        minIntervalMs: env.VALUATION_MIN_INTERVAL_MS,
        streamsPerCaller: env.VALUATION_STREAMS_PER_CREDENTIAL,
        refreshIntervalMs: Math.max(env.QUOTES_TTL, 1) * 1000
      },
      readCache: { ttlMs: env.PORTFOLIO_CACHE_TTL_MS },
      background: {
        queue: { pollMs: env.JOB_POLL_MS, leaseMs: env.JOB_LEASE_MS },
        verification: {
          retryMs: env.AGGREGATOR_VERIFY_RETRY_MS, expiryMs: env.AGGREGATOR_VERIFY_EXPIRY_SECONDS * 1000
        },
        imports: { attempts: env.IMPORT_ATTEMPTS, retryMs: env.IMPORT_RETRY_MS, delayMs: env.IMPORT_DELAY_MS }
      }
    },
    changeFeed: {
      redisUrl: env.REDIS_URL ?? env.RATE_LIMIT_REDIS_URL,
      postgresUrl: isPostgresUrl(env.DATABASE_URL) ? env.DATABASE_URL : undefined,
      listenUrl: env.DATABASE_LISTEN_URL
    },
    modules: {
      auth: { devRoutes, backendUrl: env.BACKEND_URL, jwtAlgorithm: env.JWT_ALGORITHM },
      system: { devRoutes, backendHealthPath: env.BACKEND_HEALTH_PATH },
      backendApi: {
        paths: { health: env.BACKEND_HEALTH_PATH, me: env.BACKEND_ME_PATH, profile: env.BACKEND_PROFILE_PATH }
      },
      aggregator: {
        allowedPaths: commaList(env.AGGREGATOR_ALLOWED_PATHS),
        allowedMethods: commaList(env.AGGREGATOR_ALLOWED_METHODS),
        webhookSecret: env.AGGREGATOR_WEBHOOK_SECRET,
        // Outside production an unconfigured aggregator still takes webhooks (local testing).
        webhooksWithoutCredentials: devRoutes,
        connectTokensPerMinute: env.CONNECT_TOKENS_PER_MINUTE
      },
      // Introspection and GraphiQL outside production only (docs/api.md#development-only-routes).
      graphql: {
        devTools: devRoutes,
        maxCost: env.GRAPHQL_MAX_COST,
        maxDocumentBytes: env.GRAPHQL_MAX_DOCUMENT_BYTES,
        tokenLeewaySeconds: env.JWT_LEEWAY
      },
      // The performance page, development only: its token signed as `npm run token` signs one.
      demo: {
        devRoutes,
        token: {
          secret: env.JWT_SECRET,
          algorithm: env.JWT_ALGORITHM,
          providers,
          issuer: new URL('api/login', `${env.BACKEND_URL.replace(/\/$/, '')}/`).href,
          ttlSeconds: env.JWT_TTL
        }
      }
    }
  }
}
