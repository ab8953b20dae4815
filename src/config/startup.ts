import type { AppConfig } from './config.js'
import { isPostgresUrl } from '../store/database-url.js'

/** What an operator checks of a starting instance, logged once at `info`: never a secret or a URL's password. */
export interface ConfigurationSummary {
  environment: AppConfig['env']['NODE_ENV']
  nodeVersion: string
  /** `sqlite` (a file), `sqlite (memory)` or `postgres`; never the URL, which may hold a password. */
  store: string
  quotesProvider: AppConfig['quotes']['provider']
  corsOrigins: string[]
  /** PORTFOLIO_ACCESS: which credential opens the portfolio routes. */
  portfolioAccess: AppConfig['env']['PORTFOLIO_ACCESS']
  /** Aggregator credentials are set (its routes answer instead of 503 NOT_CONFIGURED). */
  aggregatorConfigured: boolean
  /** The port of the metrics listener, `null` when metrics are off. */
  metricsPort: number | null
  /** How instances tell each other of changes: `redis`, `postgres (LISTEN on …)` (which URL), `in-process`. */
  changeFeed: string
  /** DATABASE_SCHEMA, `null` when unset (the connection's own search_path). */
  databaseSchema: string | null
}

function changeFeedTransport ({ changeFeed }: AppConfig): string {
  if (changeFeed.redisUrl !== undefined) return 'redis'
  if (changeFeed.postgresUrl === undefined) return 'in-process'
  return `postgres (LISTEN on ${changeFeed.listenUrl === undefined ? 'DATABASE_URL' : 'DATABASE_LISTEN_URL'})`
}

function storeEngine (url: string): string {
  if (isPostgresUrl(url)) return 'postgres'
  return url === 'sqlite::memory:' ? 'sqlite (memory)' : 'sqlite'
}

/** The start-up summary of `config`, made of settings only: secrets and URLs stay out. */
export function configurationSummary (config: AppConfig, nodeVersion = process.version): ConfigurationSummary {
  return {
    environment: config.env.NODE_ENV,
    nodeVersion,
    store: storeEngine(config.store.url),
    quotesProvider: config.quotes.provider,
    corsOrigins: [...config.protection.corsOrigins],
    portfolioAccess: config.env.PORTFOLIO_ACCESS,
    aggregatorConfigured: config.upstreams.aggregator.credentials !== undefined,
    metricsPort: config.metrics.port ?? null,
    changeFeed: changeFeedTransport(config),
    databaseSchema: config.store.schema ?? null
  }
}

/** Settings that start the service but that an operator should hear about: one log line each, at `warn`. */
export function configurationWarnings (config: AppConfig): string[] {
  const warnings: string[] = []
  if (config.env.NODE_ENV === 'production' && config.quotes.provider === 'offline') {
    warnings.push('QUOTES_PROVIDER=offline in production: quotes, and the dashboard values computed from them, are ' +
      'simulated, not market prices')
  }
  const { AGGREGATOR_REQUESTS_PER_MINUTE: budget, AGGREGATOR_REQUESTS_PER_PRINCIPAL_PER_MINUTE: share } = config.env
  if (share >= budget) {
    // Not refused: the service works, but one principal can spend the whole shared budget.
    warnings.push(`AGGREGATOR_REQUESTS_PER_PRINCIPAL_PER_MINUTE=${share} is not below AGGREGATOR_REQUESTS_PER_MINUTE=` +
      `${budget}: one principal can spend the whole aggregator budget and leave the others 429`)
  }
  if (config.changeFeed.redisUrl !== undefined && config.changeFeed.listenUrl !== undefined) {
    warnings.push('DATABASE_LISTEN_URL is not used: the change feed goes through Redis (REDIS_URL)')
  }
  return warnings
}
