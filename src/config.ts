import { randomBytes } from 'node:crypto'
import envSchema from 'env-schema'
import { Type, type Static } from '@sinclair/typebox'
import { providerConfig } from './tokens.js'
import { JWT_ALGORITHMS, type JwtAlgorithm } from './schemas/auth.js'
import type { AuthPluginOptions } from './plugins/auth.js'
import type { MetricsPluginOptions } from './plugins/metrics.js'
import type { ProtectionPluginOptions } from './plugins/protection.js'
import type { QuotesPluginOptions } from './plugins/quotes.js'
import type { UpstreamsPluginOptions } from './plugins/upstreams.js'
import type { AggregatorModuleOptions } from './modules/aggregator/index.js'
import type { AuthModuleOptions } from './modules/auth/index.js'
import type { BackendApiModuleOptions } from './modules/backend-api/index.js'
import type { SystemModuleOptions } from './modules/system/index.js'
import type { GraphqlModuleOptions } from './modules/graphql/index.js'
import type { ItemStatusPluginOptions } from './plugins/item-status.js'
import type { IdempotencyPluginOptions } from './plugins/idempotency.js'

const Milliseconds = Type.Integer({ minimum: 1, maximum: 600_000 })
const HttpUrl = Type.String({ pattern: '^https?://[^\\s]+$' })
const Sha1Hex = Type.String({ pattern: '^[0-9a-f]{40}$' })
/** A path under BACKEND_URL, relative (no leading slash, no dot segments). */
const UpstreamPath = Type.String({ pattern: '^(?!/)(?!.*(?:^|/)\\.{1,2}(?:/|$))[A-Za-z0-9_\\-./]+$' })

/** Every environment variable (README, Configuration), validated once at start-up. */
export const ConfigSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000 }),
  HOST: Type.String({ default: '127.0.0.1', minLength: 1 }),
  NODE_ENV: Type.Unsafe<'development' | 'test' | 'production'>({
    type: 'string',
    enum: ['development', 'test', 'production'],
    default: 'development'
  }),
  LOG_LEVEL: Type.Unsafe<'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'>({
    type: 'string',
    enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
    default: 'info'
  }),
  JWT_SECRET: Type.Optional(Type.String({ minLength: 1 })),
  JWT_ALGORITHM: Type.Unsafe<JwtAlgorithm>({ type: 'string', enum: [...JWT_ALGORITHMS], default: 'HS256' }),
  JWT_TTL: Type.Integer({ minimum: 1, default: 3600 }),
  JWT_LEEWAY: Type.Integer({ minimum: 0, maximum: 86_400, default: 0 }),
  JWT_DEFAULT_TYPE: Type.Optional(Type.Unsafe<'user' | 'client'>({ type: 'string', enum: ['user', 'client'] })),
  JWT_USER_MODEL: Type.String({ minLength: 1, default: 'App\\Models\\User' }),
  JWT_CLIENT_MODEL: Type.String({ minLength: 1, default: 'App\\Models\\User\\Client' }),
  JWT_USER_PROVIDER_HASH: Type.Optional(Sha1Hex),
  JWT_CLIENT_PROVIDER_HASH: Type.Optional(Sha1Hex),
  API_KEYS: Type.Optional(Type.String({ pattern: '[^,\\s]' })),
  BACKEND_URL: Type.String({ ...HttpUrl, default: 'http://127.0.0.1:8000' }),
  BACKEND_TIMEOUT_MS: Type.Integer({ ...Milliseconds, default: 10_000 }),
  BACKEND_HEALTH_PATH: Type.String({ ...UpstreamPath, default: 'api/health' }),
  BACKEND_ME_PATH: Type.String({ ...UpstreamPath, default: 'api/me' }),
  BACKEND_PROFILE_PATH: Type.String({ ...UpstreamPath, default: 'api/user/profile' }),
  AGGREGATOR_URL: Type.String({ ...HttpUrl, default: 'https://api.pluggy.ai' }),
  AGGREGATOR_CLIENT_ID: Type.Optional(Type.String({ minLength: 1 })),
  AGGREGATOR_CLIENT_SECRET: Type.Optional(Type.String({ minLength: 1 })),
  AGGREGATOR_TIMEOUT_MS: Type.Integer({ ...Milliseconds, default: 10_000 }),
  AGGREGATOR_WEBHOOK_SECRET: Type.Optional(Type.String({ minLength: 1 })),
  AGGREGATOR_ALLOWED_PATHS: Type.String({
    pattern: '^/[A-Za-z0-9_/-]+(?:,/[A-Za-z0-9_/-]+)*$',
    default: '/items,/accounts,/transactions,/v2/transactions,/investments,/identity,/connectors,/categories,/loans'
  }),
  AGGREGATOR_ALLOWED_METHODS: Type.String({
    pattern: '^(?:GET|POST|PUT|PATCH|DELETE)(?:,(?:GET|POST|PUT|PATCH|DELETE))*$',
    default: 'GET'
  }),
  DATABASE_URL: Type.String({ pattern: '^(?:sqlite:.+|postgres(?:ql)?://.+)$', default: 'sqlite:./data/bff.sqlite' }),
  /** Required in production; `offline` elsewhere. */
  QUOTES_PROVIDER: Type.Unsafe<'offline' | 'brapi'>({ type: 'string', enum: ['offline', 'brapi'], default: 'offline' }),
  BRAPI_URL: Type.String({ ...HttpUrl, default: 'https://brapi.dev' }),
  BRAPI_TOKEN: Type.Optional(Type.String({ minLength: 1 })),
  BRAPI_TIMEOUT_MS: Type.Integer({ ...Milliseconds, default: 10_000 }),
  /** Tickers per brapi request (brapi's free plan takes 1). */
  BRAPI_TICKERS_PER_REQUEST: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  QUOTES_TTL: Type.Integer({ minimum: 0, maximum: 86_400, default: 60 }),
  CORS_ORIGINS: Type.Optional(Type.String()),
  /** Which proxies' X-Forwarded-For to believe: `true`, a hop count, or addresses/CIDRs, comma-separated. */
  TRUST_PROXY: Type.Optional(Type.String({ pattern: '^(true|\\d+|[0-9a-fA-F.:/]+(\\s*,\\s*[0-9a-fA-F.:/]+)*)$' })),
  RATE_LIMIT_MAX: Type.Integer({ minimum: 1, default: 600 }),
  RATE_LIMIT_WINDOW_MS: Type.Integer({ minimum: 1000, maximum: 86_400_000, default: 60_000 }),
  /**
   * The Redis every instance shares: item status fan-out, and the rate limit and budgets unless RATE_LIMIT_REDIS_URL
   * names another.
   */
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://.+$' })),
  RATE_LIMIT_REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://.+$' })),
  /** The most a GraphQL operation may cost (see README, GraphQL). */
  GRAPHQL_MAX_COST: Type.Integer({ minimum: 1, maximum: 100_000_000, default: 50_000 }),
  /** The longest GraphQL document in UTF-8 bytes, refused before parsing (at most the 1 MiB body limit). */
  GRAPHQL_MAX_DOCUMENT_BYTES: Type.Integer({ minimum: 1024, maximum: 1_048_576, default: 16_384 }),
  MAX_EVENT_LOOP_DELAY_MS: Type.Integer({ minimum: 0, maximum: 60_000, default: 1000 }),
  AUTH_FAILURES_PER_MINUTE: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 60 }),
  CONNECT_TOKENS_PER_MINUTE: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 10 }),
  AGGREGATOR_REQUESTS_PER_MINUTE: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 300 }),
  /** Each principal's share of AGGREGATOR_REQUESTS_PER_MINUTE, checked before it. */
  AGGREGATOR_REQUESTS_PER_PRINCIPAL_PER_MINUTE: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 60 }),
  /** Failed webhook item verifications: retried from this delay, doubling; looked for this often; until this age. */
  AGGREGATOR_VERIFY_RETRY_MS: Type.Integer({ minimum: 1, maximum: 3_600_000, default: 5000 }),
  AGGREGATOR_VERIFY_POLL_MS: Type.Integer({ minimum: 1, maximum: 600_000, default: 5000 }),
  AGGREGATOR_VERIFY_EXPIRY_SECONDS: Type.Integer({ minimum: 1, maximum: 30 * 86_400, default: 86_400 }),
  /** Unset: 5000 in production (a balancer's checks see `/ready` turn 503), 0 elsewhere. */
  OTEL_EXPORTER_OTLP_ENDPOINT: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$' })),
  METRICS_PORT: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
  METRICS_HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  SHUTDOWN_DRAIN_MS: Type.Optional(Type.Integer({ minimum: 0, maximum: 60_000 })),
  /** The longest a request may take to arrive, headers and body (a client trickling it is cut then). */
  REQUEST_TIMEOUT_MS: Type.Integer({ minimum: 1000, maximum: 600_000, default: 30_000 }),
  /** How long an `Idempotency-Key` and its answer are kept (see docs/api.md, Safe retries). */
  IDEMPOTENCY_TTL_SECONDS: Type.Integer({ minimum: 1, maximum: 30 * 86_400, default: 86_400 })
})

type ConfigValues = Static<typeof ConfigSchema>

/** The validated variables; outside production missing secrets are filled with development values. */
export type Environment = Omit<ConfigValues, 'JWT_SECRET' | 'API_KEYS'> & {
  JWT_SECRET: string
  API_KEYS: string
}

/** The configuration, parsed once: the variables, and each plugin's options ready to register. */
export interface AppConfig {
  /** Every variable, validated and defaulted. */
  env: Environment
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
  store: { url: string, demoData: boolean }
  protection: ProtectionPluginOptions
  upstreams: UpstreamsPluginOptions
  quotes: QuotesPluginOptions
  itemStatus: ItemStatusPluginOptions
  idempotency: IdempotencyPluginOptions
  modules: {
    auth: AuthModuleOptions
    system: SystemModuleOptions
    backendApi: BackendApiModuleOptions
    aggregator: AggregatorModuleOptions
    graphql: GraphqlModuleOptions
  }
}

export interface DevSecrets {
  jwtSecret: string
  apiKey: string
}

export interface LoadConfigOptions {
  /** Where development secrets come from when the environment has none (never used in production). */
  devSecrets?: () => DevSecrets
  /** Called with the development secrets actually used, so the caller can print them. */
  onDevSecrets?: (secrets: Partial<DevSecrets>) => void
}

/** A configuration that cannot start the service; its message is one line naming the variable. */
export class ConfigError extends Error {
  override name = 'ConfigError'
}

/** Production HMAC secrets must carry at least 256 bits (RFC 8725 §3.5). */
const MIN_PRODUCTION_SECRET_LENGTH = 32

export function randomDevSecrets (): DevSecrets {
  return { jwtSecret: randomBytes(32).toString('base64url'), apiKey: `dev-${randomBytes(16).toString('hex')}` }
}

/** The non-empty, trimmed items of a comma-separated variable (`API_KEYS`, `CORS_ORIGINS`, …). */
export function commaList (value: string | undefined): string[] {
  return (value ?? '').split(',').map(item => item.trim()).filter(item => item.length > 0)
}

interface ConfigIssue { keyword: string, instancePath: string, params: Record<string, unknown>, message?: string }

/** One phrase per bad variable, naming it and what it may be; values are never echoed (they may be secrets). */
function configProblems (error: Error & { errors?: ConfigIssue[] }): string {
  if (error.errors === undefined) return error.message
  return error.errors.map(issue => {
    const name = issue.instancePath.replace(/^\//, '')
    if (issue.keyword === 'enum') return `${name} must be one of ${(issue.params.allowedValues as string[]).join(', ')}`
    return `${name} ${issue.message ?? 'is invalid'}`
  }).join('; ')
}

/** Validates `env` (only what it is given, never `process.env` by itself) against {@link ConfigSchema}. */
export function loadConfig (env: Record<string, string | undefined>, options: LoadConfigOptions = {}): AppConfig {
  const defined = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''))
  let values: ConfigValues
  try {
    values = envSchema<ConfigValues>({ schema: structuredClone(ConfigSchema), data: defined, env: false })
  } catch (error) {
    throw new ConfigError(`Invalid configuration: ${configProblems(error as Error & { errors?: ConfigIssue[] })}`)
  }

  const production = values.NODE_ENV === 'production'
  if (production) {
    const missing = ['JWT_SECRET', 'API_KEYS'].filter(name => values[name as 'JWT_SECRET' | 'API_KEYS'] === undefined)
    // The default is the development store of the checkout: production names its own.
    if (defined.DATABASE_URL === undefined) missing.push('DATABASE_URL')
    if (values.AGGREGATOR_CLIENT_ID !== undefined && values.AGGREGATOR_WEBHOOK_SECRET === undefined) {
      missing.push('AGGREGATOR_WEBHOOK_SECRET')
    }
    // Simulated prices must be a choice in production, never a default nobody noticed.
    if (defined.QUOTES_PROVIDER === undefined) missing.push('QUOTES_PROVIDER')
    else if (values.QUOTES_PROVIDER === 'brapi' && values.BRAPI_TOKEN === undefined) {
      missing.push('BRAPI_TOKEN (QUOTES_PROVIDER=brapi)')
    }
    if (missing.length > 0) throw new ConfigError(`Production requires ${missing.join(', ')}`)
    if ((values.JWT_SECRET ?? '').length < MIN_PRODUCTION_SECRET_LENGTH) {
      throw new ConfigError(`JWT_SECRET must be at least ${MIN_PRODUCTION_SECRET_LENGTH} characters in production`)
    }
  }
  if (values.API_KEYS !== undefined && commaList(values.API_KEYS).length === 0) {
    throw new ConfigError('API_KEYS must name at least one key')
  }
  if ((values.AGGREGATOR_CLIENT_ID === undefined) !== (values.AGGREGATOR_CLIENT_SECRET === undefined)) {
    throw new ConfigError('AGGREGATOR_CLIENT_ID and AGGREGATOR_CLIENT_SECRET must be set together')
  }

  let { JWT_SECRET, API_KEYS } = values
  if (JWT_SECRET === undefined || API_KEYS === undefined) {
    const generated = (options.devSecrets ?? randomDevSecrets)()
    const used: Partial<DevSecrets> = {}
    if (JWT_SECRET === undefined) JWT_SECRET = used.jwtSecret = generated.jwtSecret
    if (API_KEYS === undefined) API_KEYS = used.apiKey = generated.apiKey
    options.onDevSecrets?.(used)
  }
  return pluginOptions({ ...values, JWT_SECRET, API_KEYS })
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
function pluginOptions (env: Environment): AppConfig {
  const devRoutes = env.NODE_ENV !== 'production'
  const sharedRedisUrl = env.RATE_LIMIT_REDIS_URL ?? env.REDIS_URL
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
      providers: providerConfig(
        { user: env.JWT_USER_MODEL, client: env.JWT_CLIENT_MODEL },
        { user: env.JWT_USER_PROVIDER_HASH, client: env.JWT_CLIENT_PROVIDER_HASH }
      ),
      apiKeys: commaList(env.API_KEYS),
      authFailuresPerMinute: env.AUTH_FAILURES_PER_MINUTE
    },
    // Demo portfolios only in development: a test or production store starts empty.
    store: { url: env.DATABASE_URL, demoData: env.NODE_ENV === 'development' },
    protection: {
      corsOrigins: commaList(env.CORS_ORIGINS),
      rateLimitMax: env.RATE_LIMIT_MAX,
      rateLimitWindowMs: env.RATE_LIMIT_WINDOW_MS,
      rateLimitRedisUrl: sharedRedisUrl,
      maxEventLoopDelayMs: env.MAX_EVENT_LOOP_DELAY_MS
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
    itemStatus: {
      redisUrl: env.REDIS_URL ?? env.RATE_LIMIT_REDIS_URL,
      postgresUrl: /^postgres(?:ql)?:/.test(env.DATABASE_URL) ? env.DATABASE_URL : undefined
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
        connectTokensPerMinute: env.CONNECT_TOKENS_PER_MINUTE,
        verification: {
          retryMs: env.AGGREGATOR_VERIFY_RETRY_MS,
          pollMs: env.AGGREGATOR_VERIFY_POLL_MS,
          expiryMs: env.AGGREGATOR_VERIFY_EXPIRY_SECONDS * 1000,
          // A claim outlives the slowest verification: key exchange, renewal and two lookups, each up to the timeout.
          leaseMs: 60_000 + 4 * env.AGGREGATOR_TIMEOUT_MS
        }
      },
      // Introspection and GraphiQL outside production only (docs/api.md#development-only-routes).
      graphql: {
        devTools: devRoutes,
        maxCost: env.GRAPHQL_MAX_COST,
        maxDocumentBytes: env.GRAPHQL_MAX_DOCUMENT_BYTES,
        tokenLeewaySeconds: env.JWT_LEEWAY
      }
    }
  }
}
