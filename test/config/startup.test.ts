import t from 'tap'
import { loadConfig } from '../../src/config/config.js'
import { configurationSummary, configurationWarnings } from '../../src/config/startup.js'

const secrets = {
  JWT_SECRET: 'jwt-secret-value-that-is-long-enough-for-production',
  API_KEYS: 'api-key-one,api-key-two',
  AGGREGATOR_CLIENT_ID: 'aggregator-client-id-value',
  AGGREGATOR_CLIENT_SECRET: 'aggregator-client-secret-value',
  AGGREGATOR_WEBHOOK_SECRET: 'aggregator-webhook-secret-value',
  BRAPI_TOKEN: 'brapi-token-value'
}

t.test('the start-up summary: what an operator checks, and no secret', async t => {
  const config = loadConfig({
    ...secrets,
    NODE_ENV: 'production',
    DATABASE_URL: 'postgres://bff:database-password-value@db.internal:5432/bff',
    QUOTES_PROVIDER: 'brapi',
    CORS_ORIGINS: 'https://app.example, https://admin.example',
    PORTFOLIO_ACCESS: 'user',
    METRICS_PORT: '9464'
  })
  const summary = configurationSummary(config, 'v24.1.0')
  t.same(summary, {
    environment: 'production',
    nodeVersion: 'v24.1.0',
    store: 'postgres',
    quotesProvider: 'brapi',
    corsOrigins: ['https://app.example', 'https://admin.example'],
    portfolioAccess: 'user',
    aggregatorConfigured: true,
    metricsPort: 9464,
    changeFeed: 'postgres (LISTEN on DATABASE_URL)',
    databaseSchema: null
  })
  const text = JSON.stringify(summary)
  for (const secret of [...Object.values(secrets), 'api-key-one', 'database-password-value', 'db.internal']) {
    t.notMatch(text, secret, 'no secret, and not the database URL')
  }
  t.equal(configurationWarnings(config).length, 0, 'brapi in production: nothing to warn about')
})

t.test('the summary of a development start: the defaults', async t => {
  const summary = configurationSummary(loadConfig({ JWT_SECRET: 's', API_KEYS: 'k' }))
  t.same(summary, {
    environment: 'development',
    nodeVersion: process.version,
    store: 'sqlite',
    quotesProvider: 'offline',
    corsOrigins: [],
    portfolioAccess: 'api-key',
    aggregatorConfigured: false,
    metricsPort: null,
    changeFeed: 'in-process',
    databaseSchema: null
  })
  const memory = loadConfig({ JWT_SECRET: 's', API_KEYS: 'k', DATABASE_URL: 'sqlite::memory:' })
  t.equal(configurationSummary(memory).store, 'sqlite (memory)')
})

t.test('offline quotes in production start with a warning; elsewhere they are the quiet default', async t => {
  const production = loadConfig({
    ...secrets, NODE_ENV: 'production', DATABASE_URL: 'postgres://bff@db/bff', QUOTES_PROVIDER: 'offline'
  })
  const warnings = configurationWarnings(production)
  t.equal(warnings.length, 1)
  t.match(warnings[0], /^QUOTES_PROVIDER=offline in production: .*simulated/)
  t.notMatch(warnings[0], /\n/, 'one line')
  t.same(configurationWarnings(loadConfig({ JWT_SECRET: 's', API_KEYS: 'k' })), [])
})

t.test('a principal\'s aggregator share not below the shared budget starts with a warning', async t => {
  const lowered = loadConfig({ JWT_SECRET: 's', API_KEYS: 'k', AGGREGATOR_REQUESTS_PER_MINUTE: '50' })
  const [warning, ...others] = configurationWarnings(lowered)
  t.same(others, [])
  t.match(warning, /^AGGREGATOR_REQUESTS_PER_PRINCIPAL_PER_MINUTE=60 is not below AGGREGATOR_REQUESTS_PER_MINUTE=50: /)
  const equal = { AGGREGATOR_REQUESTS_PER_MINUTE: '60', AGGREGATOR_REQUESTS_PER_PRINCIPAL_PER_MINUTE: '60' }
  t.equal(configurationWarnings(loadConfig({ JWT_SECRET: 's', API_KEYS: 'k', ...equal })).length, 1, 'equal: the same')
  const below = { AGGREGATOR_REQUESTS_PER_MINUTE: '300', AGGREGATOR_REQUESTS_PER_PRINCIPAL_PER_MINUTE: '299' }
  t.same(configurationWarnings(loadConfig({ JWT_SECRET: 's', API_KEYS: 'k', ...below })), [])
})

t.test('a pooled PostgreSQL: the LISTEN connection\'s own URL and the schema, checked and summed up', async t => {
  const base = { JWT_SECRET: 's', API_KEYS: 'k', DATABASE_URL: 'postgres://bff@pooler:6432/bff' }
  const pooled = loadConfig({ ...base, DATABASE_LISTEN_URL: 'postgres://bff@db:5432/bff', DATABASE_SCHEMA: 'bff' })
  t.match(configurationSummary(pooled), {
    changeFeed: 'postgres (LISTEN on DATABASE_LISTEN_URL)', databaseSchema: 'bff'
  })
  t.same(pooled.store.schema, 'bff')
  t.same(pooled.changeFeed.listenUrl, 'postgres://bff@db:5432/bff')
  t.same(configurationWarnings(pooled), [])
  const redis = loadConfig({ ...base, DATABASE_LISTEN_URL: 'postgres://bff@db/bff', REDIS_URL: 'redis://r:6379' })
  t.equal(configurationSummary(redis).changeFeed, 'redis')
  t.same(configurationWarnings(redis),
    ['DATABASE_LISTEN_URL is not used: the change feed goes through Redis (REDIS_URL)'])
  for (const name of ['DATABASE_LISTEN_URL', 'DATABASE_SCHEMA']) {
    const value = name === 'DATABASE_SCHEMA' ? 'bff' : 'postgres://bff@db/bff'
    t.throws(() => loadConfig({ JWT_SECRET: 's', API_KEYS: 'k', [name]: value }),
      { message: `${name} needs a PostgreSQL DATABASE_URL` })
  }
  t.throws(() => loadConfig({ ...base, DATABASE_SCHEMA: 'Bff; drop' }),
    { message: /DATABASE_SCHEMA must match pattern/ })
})
