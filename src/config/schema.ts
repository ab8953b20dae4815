/**
 * The environment variables the service reads (docs/deploy.md#configuration): names, types, bounds and
 * defaults, validated once at start-up by {@link loadConfig} in config.ts.
 */
import { Type, type Static } from '@sinclair/typebox'
import { JWT_ALGORITHMS, PORTFOLIO_ACCESS_MODES, type JwtAlgorithm, type PortfolioAccess } from '../schemas/auth.js'

const Milliseconds = Type.Integer({ minimum: 1, maximum: 600_000 })
const HttpUrl = Type.String({ pattern: '^https?://[^\\s]+$' })
const Sha1Hex = Type.String({ pattern: '^[0-9a-f]{40}$' })
/** A path under BACKEND_URL, relative (no leading slash, no dot segments). */
const UpstreamPath = Type.String({ pattern: '^(?!/)(?!.*(?:^|/)\\.{1,2}(?:/|$))[A-Za-z0-9_\\-./]+$' })

/** Every environment variable (docs/deploy.md#configuration), validated once at start-up. */
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
  /** Which credential opens the portfolio routes (docs/api.md#whose-portfolios): `api-key`, `user` or `both`. */
  PORTFOLIO_ACCESS: Type.Unsafe<PortfolioAccess>({
    type: 'string', enum: [...PORTFOLIO_ACCESS_MODES], default: 'api-key'
  }),
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
    default: '/items,/accounts,/transactions,/v2/transactions,/investments,/identity,/connectors,/categories,/loans,' +
      '/bills,/consents'
  }),
  AGGREGATOR_ALLOWED_METHODS: Type.String({
    pattern: '^(?:GET|POST|PUT|PATCH|DELETE)(?:,(?:GET|POST|PUT|PATCH|DELETE))*$',
    default: 'GET'
  }),
  DATABASE_URL: Type.String({ pattern: '^(?:sqlite:.+|postgres(?:ql)?://.+)$', default: 'sqlite:./data/bff.sqlite' }),
  /**
   * The change feed's LISTEN connection, direct to DATABASE_URL's database when DATABASE_URL goes through a pooler
   * in transaction mode (docs/deploy.md#poolers).
   */
  DATABASE_LISTEN_URL: Type.Optional(Type.String({ pattern: '^postgres(?:ql)?://.+$' })),
  /** The PostgreSQL schema of the service's tables, named in every statement (works through any pooler). */
  DATABASE_SCHEMA: Type.Optional(Type.String({ pattern: '^[a-z_][a-z0-9_]{0,62}$' })),
  /** Required in production; `offline` elsewhere. */
  QUOTES_PROVIDER: Type.Unsafe<'offline' | 'brapi'>({ type: 'string', enum: ['offline', 'brapi'], default: 'offline' }),
  BRAPI_URL: Type.String({ ...HttpUrl, default: 'https://brapi.dev' }),
  BRAPI_TOKEN: Type.Optional(Type.String({ minLength: 1 })),
  BRAPI_TIMEOUT_MS: Type.Integer({ ...Milliseconds, default: 10_000 }),
  /** Tickers per brapi request (brapi's free plan takes 1). */
  BRAPI_TICKERS_PER_REQUEST: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  QUOTES_TTL: Type.Integer({ minimum: 0, maximum: 86_400, default: 60 }),
  /** Live valuations (docs/api.md#valuation): the shortest time between two messages of one stream. */
  VALUATION_MIN_INTERVAL_MS: Type.Integer({ minimum: 0, maximum: 600_000, default: 1000 }),
  /** Open valuation streams per API key (or principal) on an instance; past it, 429. */
  VALUATION_STREAMS_PER_CREDENTIAL: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 100 }),
  /** The longest a portfolio read is answered from an instance's memory (docs/api.md#caching); 0: never. */
  PORTFOLIO_CACHE_TTL_MS: Type.Integer({ minimum: 0, maximum: 60_000, default: 5000 }),
  CORS_ORIGINS: Type.Optional(Type.String()),
  /** Which proxies' X-Forwarded-For to believe: `true`, a hop count, or addresses/CIDRs, comma-separated. */
  TRUST_PROXY: Type.Optional(Type.String({ pattern: '^(true|\\d+|[0-9a-fA-F.:/]+(\\s*,\\s*[0-9a-fA-F.:/]+)*)$' })),
  /** Strict-Transport-Security's max-age, seconds; 0 sends no HSTS header (docs/deploy.md#security-headers). */
  HSTS_MAX_AGE: Type.Integer({ minimum: 0, maximum: 63_072_000, default: 31_536_000 }),
  RATE_LIMIT_MAX: Type.Integer({ minimum: 1, default: 600 }),
  RATE_LIMIT_WINDOW_MS: Type.Integer({ minimum: 1000, maximum: 86_400_000, default: 60_000 }),
  /**
   * The Redis every instance shares: item status fan-out, and the rate limit and budgets unless RATE_LIMIT_REDIS_URL
   * names another.
   */
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://.+$' })),
  RATE_LIMIT_REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://.+$' })),
  /** The most a GraphQL operation may cost (docs/api.md#graphql). */
  GRAPHQL_MAX_COST: Type.Integer({ minimum: 1, maximum: 100_000_000, default: 50_000 }),
  /** The longest GraphQL document in UTF-8 bytes, refused before parsing (at most the 1 MiB body limit). */
  GRAPHQL_MAX_DOCUMENT_BYTES: Type.Integer({ minimum: 1024, maximum: 1_048_576, default: 16_384 }),
  MAX_EVENT_LOOP_DELAY_MS: Type.Integer({ minimum: 0, maximum: 60_000, default: 1000 }),
  AUTH_FAILURES_PER_MINUTE: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 60 }),
  CONNECT_TOKENS_PER_MINUTE: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 10 }),
  AGGREGATOR_REQUESTS_PER_MINUTE: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 300 }),
  /** Each principal's share of AGGREGATOR_REQUESTS_PER_MINUTE, checked before it. */
  AGGREGATOR_REQUESTS_PER_PRINCIPAL_PER_MINUTE: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 60 }),
  /** Failed webhook item verifications: retried from this delay, doubling; until this age. */
  AGGREGATOR_VERIFY_RETRY_MS: Type.Integer({ minimum: 1, maximum: 3_600_000, default: 5000 }),
  AGGREGATOR_VERIFY_EXPIRY_SECONDS: Type.Integer({ minimum: 1, maximum: 30 * 86_400, default: 86_400 }),
  /** The queue of background work (docs/deploy.md#background-work): each instance looks at it this often. */
  JOB_POLL_MS: Type.Integer({ minimum: 1, maximum: 600_000, default: 5000 }),
  /** How long a claim holds a job before another instance may take it; renewed every third of it while it runs. */
  JOB_LEASE_MS: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 60_000 }),
  /** Investment imports (docs/api.md#imports): failed attempts before one ends failed; the first retry's delay. */
  IMPORT_ATTEMPTS: Type.Integer({ minimum: 1, maximum: 100, default: 5 }),
  IMPORT_RETRY_MS: Type.Integer({ minimum: 1, maximum: 3_600_000, default: 30_000 }),
  /** How long after a verified item/updated its import begins: the events of that while make one import. */
  IMPORT_DELAY_MS: Type.Integer({ minimum: 0, maximum: 3_600_000, default: 60_000 }),
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

/** The variables as validated. */
export type ConfigValues = Static<typeof ConfigSchema>
