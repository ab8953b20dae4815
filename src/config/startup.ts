import type { AppConfig } from './config.js'

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
}

function storeEngine (url: string): string {
  if (/^postgres(?:ql)?:/.test(url)) return 'postgres'
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
    metricsPort: config.metrics.port ?? null
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
  return warnings
}
