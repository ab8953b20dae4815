import t from 'tap'
import { mkdtempSync, readFileSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ConfigError, ConfigSchema, loadConfig } from '../../src/config/config.js'
import { loadOrCreateDevSecrets } from '../../src/config/dev-secrets.js'

const strongSecret = 'x'.repeat(64)

t.test('documented defaults', async t => {
  const config = loadConfig({ JWT_SECRET: 's', API_KEYS: 'k' })
  t.match(config.env, {
    PORT: 3000,
    HOST: '127.0.0.1',
    NODE_ENV: 'development',
    LOG_LEVEL: 'info',
    JWT_ALGORITHM: 'HS256',
    JWT_TTL: 3600,
    JWT_LEEWAY: 0,
    JWT_USER_MODEL: 'App\\Models\\User',
    JWT_CLIENT_MODEL: 'App\\Models\\User\\Client',
    BACKEND_URL: 'http://127.0.0.1:8000',
    BACKEND_TIMEOUT_MS: 10000,
    AGGREGATOR_URL: 'https://api.pluggy.ai',
    AGGREGATOR_TIMEOUT_MS: 10000,
    DATABASE_URL: 'sqlite:./data/bff.sqlite',
    QUOTES_PROVIDER: 'offline',
    BRAPI_URL: 'https://brapi.dev'
  })
  t.equal(config.env.JWT_DEFAULT_TYPE, undefined)
  t.equal(config.devRoutes, true)
  t.same(config.store, { url: 'sqlite:./data/bff.sqlite', demoData: true, createFolder: true, waitForDatabase: false })
  t.same(config.modules.aggregator.allowedPaths, [
    '/items',
    '/accounts',
    '/transactions',
    '/v2/transactions',
    '/investments',
    '/identity',
    '/connectors',
    '/categories',
    '/loans',
    '/bills',
    '/consents'
  ])
  t.same(config.modules.aggregator.allowedMethods, ['GET'])
  t.same(config.protection.corsOrigins, [])
  t.same(config.domain.readCache, { ttlMs: 5000 }, 'portfolio reads kept in memory 5 s at most')
  t.same(config.auth.providers, {
    userProviderHash: '23bd5c8949f600adb39e701c400872db7a5976f7',
    clientProviderHash: '92c16d29654705716ae122db976a0fdd7d70873d',
    autoCalculated: true,
    models: { user: 'App\\Models\\User', client: 'App\\Models\\User\\Client' }
  })
})

t.test('numbers and enums are parsed from strings; unrelated variables are ignored', async t => {
  const config = loadConfig({
    PORT: '8080',
    JWT_LEEWAY: '30',
    JWT_ALGORITHM: 'HS512',
    JWT_DEFAULT_TYPE: 'user',
    JWT_SECRET: 's',
    API_KEYS: 'a, b ,,c',
    PATH: '/bin'
  })
  t.equal(config.env.PORT, 8080)
  t.equal(config.env.JWT_LEEWAY, 30)
  t.same(loadConfig({ JWT_SECRET: 's', API_KEYS: 'k', PORTFOLIO_CACHE_TTL_MS: '0' }).domain.readCache, { ttlMs: 0 })
  t.match(config.auth, { leewaySeconds: 30, jwtAlgorithm: 'HS512', defaultType: 'user', apiKeys: ['a', 'b', 'c'] })
  t.notOk('PATH' in config.env)
})

t.test('a wrong value stops start-up and names the variable', async t => {
  const cases: Array<[Record<string, string>, RegExp]> = [
    [{ PORT: 'eighty' }, /PORT/],
    [{ PORT: '70000' }, /PORT/],
    [{ JWT_ALGORITHM: 'RS256' }, /JWT_ALGORITHM/],
    [{ JWT_ALGORITHM: 'none' }, /JWT_ALGORITHM/],
    [{ NODE_ENV: 'staging' }, /NODE_ENV must be one of development, test, production/],
    [{ JWT_LEEWAY: '-1' }, /JWT_LEEWAY/],
    [{ JWT_DEFAULT_TYPE: 'admin' }, /JWT_DEFAULT_TYPE/],
    [{ JWT_USER_PROVIDER_HASH: 'XYZ' }, /JWT_USER_PROVIDER_HASH/],
    [{ BACKEND_URL: 'ftp://example' }, /BACKEND_URL/],
    [{ QUOTES_PROVIDER: 'yahoo' }, /QUOTES_PROVIDER/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent/],
    [{ API_KEYS: ' , ' }, /API_KEYS/],
    [{ AGGREGATOR_CLIENT_ID: 'id' }, /AGGREGATOR_CLIENT_SECRET/]
  ]
  for (const [env, pattern] of cases) {
    t.throws(() => loadConfig({ JWT_SECRET: 's', API_KEYS: 'k', ...env }), pattern, JSON.stringify(env))
    t.throws(() => loadConfig({ JWT_SECRET: 's', API_KEYS: 'k', ...env }), ConfigError)
  }
})

t.test('production refuses to start without its secrets and its database', async t => {
  const database = { DATABASE_URL: 'postgres://bff@db/bff', QUOTES_PROVIDER: 'offline' }
  t.throws(
    () => loadConfig({ NODE_ENV: 'production' }),
    /^Production requires JWT_SECRET, API_KEYS, DATABASE_URL, QUOTES_PROVIDER$/
  )
  t.throws(() => loadConfig({ NODE_ENV: 'production', JWT_SECRET: strongSecret, ...database }), /API_KEYS/)
  t.throws(() => loadConfig({ NODE_ENV: 'production', API_KEYS: 'k', ...database }), /JWT_SECRET/)
  t.throws(
    () => loadConfig({ NODE_ENV: 'production', JWT_SECRET: strongSecret, API_KEYS: 'k', QUOTES_PROVIDER: 'offline' }),
    /^Production requires DATABASE_URL$/,
    'never the development store of the checkout'
  )
  t.throws(() => loadConfig({
    NODE_ENV: 'production',
    JWT_SECRET: 'short',
    API_KEYS: 'k',
    ...database
  }), /JWT_SECRET must be at least 32/)
  t.throws(
    () => loadConfig({
      NODE_ENV: 'production',
      JWT_SECRET: strongSecret,
      API_KEYS: 'k',
      AGGREGATOR_CLIENT_ID: 'i',
      AGGREGATOR_CLIENT_SECRET: 's',
      ...database
    }),
    /AGGREGATOR_WEBHOOK_SECRET/
  )
  const config = loadConfig({ NODE_ENV: 'production', JWT_SECRET: strongSecret, API_KEYS: 'k', ...database }, {
    devSecrets: () => { throw new Error('never asked in production') }
  })
  t.equal(config.env.JWT_SECRET, strongSecret)
})

t.test('production names its quote provider: simulated prices are never a default there', async t => {
  const base = { NODE_ENV: 'production', JWT_SECRET: strongSecret, API_KEYS: 'k', DATABASE_URL: 'postgres://db/bff' }
  const refused = /^Production requires QUOTES_PROVIDER$/
  t.throws(() => loadConfig(base), refused)
  t.throws(() => loadConfig(base), ConfigError)
  t.throws(() => loadConfig({ ...base, QUOTES_PROVIDER: '' }), refused, 'an empty value is no choice')
  const brapiRefused = /^Production requires BRAPI_TOKEN \(QUOTES_PROVIDER=brapi\)$/
  t.throws(() => loadConfig({ ...base, QUOTES_PROVIDER: 'brapi' }), brapiRefused)
  t.throws(() => loadConfig({ ...base, QUOTES_PROVIDER: 'yahoo' }), /QUOTES_PROVIDER must be one of offline, brapi/)
  const brapi = loadConfig({ ...base, QUOTES_PROVIDER: 'brapi', BRAPI_TOKEN: 't' })
  t.match(brapi.quotes, { provider: 'brapi', brapiToken: 't' })
  t.match(loadConfig({ ...base, QUOTES_PROVIDER: 'offline' }).quotes, { provider: 'offline' })

  const development = loadConfig({ JWT_SECRET: 's', API_KEYS: 'k' })
  t.equal(development.quotes.provider, 'offline', 'outside production the default stays offline')
  const tokenless = loadConfig({ NODE_ENV: 'test', JWT_SECRET: 's', API_KEYS: 'k', QUOTES_PROVIDER: 'brapi' })
  t.equal(tokenless.quotes.provider, 'brapi', 'outside production brapi may run without a token (its free tickers)')
})

t.test('outside production, missing secrets come from devSecrets and are reported', async t => {
  const reported: unknown[] = []
  const config = loadConfig({}, {
    devSecrets: () => ({ jwtSecret: 'dev-secret', apiKey: 'dev-key' }),
    onDevSecrets: s => reported.push(s)
  })
  t.equal(config.env.JWT_SECRET, 'dev-secret')
  t.equal(config.env.API_KEYS, 'dev-key')
  t.same(reported, [{ jwtSecret: 'dev-secret', apiKey: 'dev-key' }])

  const partial: unknown[] = []
  const withKey = loadConfig({ API_KEYS: 'mine' }, {
    devSecrets: () => ({ jwtSecret: 'dev-secret', apiKey: 'dev-key' }),
    onDevSecrets: s => partial.push(s)
  })
  t.equal(withKey.env.API_KEYS, 'mine')
  t.same(partial, [{ jwtSecret: 'dev-secret' }], 'only what was generated is reported')

  const random = loadConfig({})
  t.ok(random.env.JWT_SECRET.length >= 32, 'the default generator makes a strong random secret')
})

t.test('development secrets are made once and kept', async t => {
  const dir = join(mkdtempSync(join(tmpdir(), 'bff-dev-')), 'data')
  const first = loadOrCreateDevSecrets(dir)
  const second = loadOrCreateDevSecrets(dir)
  t.same(second, first)
  t.ok(first.jwtSecret.length >= 32)
  t.equal(statSync(join(dir, 'dev-secrets.json')).mode & 0o777, 0o600, 'readable by the owner only')
  t.same(JSON.parse(readFileSync(join(dir, 'dev-secrets.json'), 'utf8')), first)
})

t.test('.env.example lists every variable of the configuration schema, and nothing else', async t => {
  const example = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8')
  const listed = [...example.matchAll(/^([A-Z_]+)=/gm)].map(match => match[1]).sort()
  t.same(listed, Object.keys(ConfigSchema.properties).sort())
})
