import t from 'tap'
import { ConfigError, ConfigSchema, loadConfig } from '../../src/config/config.js'
import { editDistance, misspeltVariables } from '../../src/config/misspellings.js'

const SERVICE_VARIABLES = Object.keys(ConfigSchema.properties)
const secrets = { JWT_SECRET: 's', API_KEYS: 'k' }

/** What the service's warnings say each variable stood for. */
function intended (env: Record<string, string>): Record<string, string> {
  const { misspellings } = loadConfig({ ...secrets, ...env })
  return Object.fromEntries(misspellings.map(found => [found.variable, found.intended]))
}

t.test('edit distance: insertions, deletions, replacements and swaps of neighbours count one each', async t => {
  t.equal(editDistance('PORT', 'PORT'), 0)
  t.equal(editDistance('PROT', 'PORT'), 1, 'a swap')
  t.equal(editDistance('CORS_ORIGIN', 'CORS_ORIGINS'), 1, 'a missing letter')
  t.equal(editDistance('DATBASE_URL', 'DATABASE_URL'), 1)
  t.equal(editDistance('PORTS', 'PORT'), 1, 'an extra letter')
  t.equal(editDistance('HOME', 'HOST'), 2, 'two replacements')
  t.equal(editDistance('', 'PORT'), 4)
  t.equal(editDistance('ABC', 'CA'), 3, 'optimal string alignment: a swapped pair is not edited again')
  t.equal(editDistance('HOME', 'HOST', 1), 2, 'past a limit: the limit plus one')
  t.equal(editDistance('SOME_PLATFORM_VARIABLE', 'AGGREGATOR_CLIENT_ID', 2), 3)
  t.equal(editDistance('DATBASE_URL', 'DATABASE_URL', 2), 1, 'within it: the distance')
})

t.test('a variable one slip away from the service\'s is named with the one it likely stands for', async t => {
  t.same(intended({ CORS_ORIGIN: 'https://app.example', PROT: '8080', DATBASE_URL: 'postgres://db/bff' }), {
    CORS_ORIGIN: 'CORS_ORIGINS',
    PROT: 'PORT',
    DATBASE_URL: 'DATABASE_URL'
  })
  t.same(intended({ port: '8080', Log_Level: 'debug', NODE_EVN: 'production', API_KEY: 'k' }), {
    port: 'PORT',
    Log_Level: 'LOG_LEVEL',
    NODE_EVN: 'NODE_ENV',
    API_KEY: 'API_KEYS'
  }, 'in any case, swaps included')
  t.same(intended({ LOGLEVEL: 'debug', QUOTE_PROVIDER: 'brapi', GRAPHQL_MAX_COSTS: '1' }), {
    LOGLEVEL: 'LOG_LEVEL',
    QUOTE_PROVIDER: 'QUOTES_PROVIDER',
    GRAPHQL_MAX_COSTS: 'GRAPHQL_MAX_COST'
  }, 'two edits in names longer than 8 characters')
  t.same(intended({ METRICS_POST: '9464' }), { METRICS_POST: 'METRICS_PORT' },
    'as near to two: the first of the service\'s list')
  t.same(intended({ HOME: '/root', PGHOST: 'db', PGPORT: '5432', HOSTNAME: 'pod-1' }), {},
    'a short name takes one edit only: HOME is not HOST, PGPORT not PORT')
  t.same(misspeltVariables({ PROT: undefined, CORS_ORIGIN: '' }, SERVICE_VARIABLES).map(found => found.variable),
    ['CORS_ORIGIN'], 'an unset variable is not there; one set to nothing is')
})

t.test('a variable of one of the service\'s families is named with the member it likely stands for', async t => {
  t.same(intended({
    AGGREGATOR_SECRET: 'x',
    JWT_ALGO: 'HS256',
    JWT_REFRESH_TTL: '20160',
    DATABASE_PASSWORD: 'x',
    BRAPI_API_TOKEN: 'x',
    RATE_LIMIT: '100'
  }), {
    AGGREGATOR_SECRET: 'AGGREGATOR_CLIENT_SECRET',
    JWT_ALGO: 'JWT_ALGORITHM',
    JWT_REFRESH_TTL: 'JWT_TTL',
    DATABASE_PASSWORD: 'DATABASE_URL',
    BRAPI_API_TOKEN: 'BRAPI_TOKEN',
    RATE_LIMIT: 'RATE_LIMIT_MAX'
  }, 'most words in common, then the longest common beginning, then the nearest')
  const shared = { NODE_OPTIONS: '--max-old-space-size=512', OTEL_SERVICE_NAME: 'bff', REDIS_TLS_URL: 'rediss://r' }
  t.same(intended(shared), {}, 'first words other software shares (NODE_, OTEL_, REDIS_…) are no family')
})

/**
 * What an instance's environment holds besides the service's own variables: the image's (node:24
 * on Debian), npm's when started by `npm run start:prod`, Kubernetes' (its API and the links of
 * the namespace's other services: backend, redis, postgres), a platform's (Cloud Run, Heroku,
 * ECS, Fly), proxies, the PostgreSQL client's and OpenTelemetry's own.
 */
const REALISTIC_ENVIRONMENT: Record<string, string> = {
  PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
  HOME: '/home/node',
  HOSTNAME: 'bff-7d9c8b5f6-x2x9q',
  USER: 'node',
  SHELL: '/bin/sh',
  TERM: 'xterm',
  LANG: 'C.UTF-8',
  LC_ALL: 'C.UTF-8',
  TZ: 'UTC',
  PWD: '/app',
  OLDPWD: '/',
  SHLVL: '1',
  _: '/usr/local/bin/node',
  container: 'podman',
  NODE_VERSION: '24.21.0',
  YARN_VERSION: '1.22.22',
  NODE_OPTIONS: '--max-old-space-size=512',
  NODE_EXTRA_CA_CERTS: '/etc/ssl/certs/internal-ca.pem',
  NODE_COMPILE_CACHE: '/app/.cache',
  NODE_DISABLE_COMPILE_CACHE: '1',
  UV_THREADPOOL_SIZE: '8',
  MALLOC_ARENA_MAX: '2',
  NODE: '/usr/local/bin/node',
  INIT_CWD: '/app',
  COLOR: '0',
  EDITOR: 'vi',
  npm_command: 'run-script',
  npm_config_cache: '/home/node/.npm',
  npm_config_globalconfig: '/usr/local/etc/npmrc',
  npm_config_local_prefix: '/app',
  npm_config_node_gyp: '/usr/local/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js',
  npm_config_noproxy: '',
  npm_config_npm_version: '11.6.2',
  npm_config_prefix: '/usr/local',
  npm_config_user_agent: 'npm/11.6.2 node/v24.21.0 linux x64 workspaces/false',
  npm_config_userconfig: '/home/node/.npmrc',
  npm_execpath: '/usr/local/lib/node_modules/npm/bin/npm-cli.js',
  npm_lifecycle_event: 'start:prod',
  npm_lifecycle_script: 'node --env-file-if-exists=.env dist/server.js',
  npm_node_execpath: '/usr/local/bin/node',
  npm_package_engines_node: '>=22',
  npm_package_json: '/app/package.json',
  npm_package_name: 'bff-service',
  npm_package_version: '1.0.0',
  KUBERNETES_SERVICE_HOST: '10.96.0.1',
  KUBERNETES_SERVICE_PORT: '443',
  KUBERNETES_SERVICE_PORT_HTTPS: '443',
  KUBERNETES_PORT: 'tcp://10.96.0.1:443',
  KUBERNETES_PORT_443_TCP: 'tcp://10.96.0.1:443',
  KUBERNETES_PORT_443_TCP_PROTO: 'tcp',
  KUBERNETES_PORT_443_TCP_PORT: '443',
  KUBERNETES_PORT_443_TCP_ADDR: '10.96.0.1',
  BACKEND_SERVICE_HOST: '10.96.12.7',
  BACKEND_SERVICE_PORT: '80',
  BACKEND_SERVICE_PORT_HTTP: '80',
  BACKEND_PORT: 'tcp://10.96.12.7:80',
  BACKEND_PORT_80_TCP: 'tcp://10.96.12.7:80',
  BACKEND_PORT_80_TCP_PROTO: 'tcp',
  BACKEND_PORT_80_TCP_PORT: '80',
  BACKEND_PORT_80_TCP_ADDR: '10.96.12.7',
  REDIS_SERVICE_HOST: '10.96.40.2',
  REDIS_SERVICE_PORT: '6379',
  REDIS_PORT: 'tcp://10.96.40.2:6379',
  REDIS_PORT_6379_TCP: 'tcp://10.96.40.2:6379',
  REDIS_PORT_6379_TCP_ADDR: '10.96.40.2',
  POSTGRES_SERVICE_HOST: '10.96.33.9',
  POSTGRES_PORT: 'tcp://10.96.33.9:5432',
  POSTGRES_PORT_5432_TCP_PORT: '5432',
  K_SERVICE: 'bff',
  K_REVISION: 'bff-00042-abc',
  K_CONFIGURATION: 'bff',
  DYNO: 'web.1',
  REDIS_TLS_URL: 'rediss://redis.internal:6380',
  AWS_REGION: 'sa-east-1',
  AWS_DEFAULT_REGION: 'sa-east-1',
  AWS_EXECUTION_ENV: 'AWS_ECS_FARGATE',
  ECS_CONTAINER_METADATA_URI_V4: 'http://169.254.170.2/v4/abc',
  FLY_APP_NAME: 'bff',
  FLY_REGION: 'gru',
  HTTP_PROXY: 'http://proxy.internal:3128',
  HTTPS_PROXY: 'http://proxy.internal:3128',
  NO_PROXY: 'localhost,127.0.0.1,.svc',
  http_proxy: 'http://proxy.internal:3128',
  no_proxy: 'localhost',
  PGHOST: 'db.internal',
  PGPORT: '5432',
  PGUSER: 'bff',
  PGDATABASE: 'bff',
  PGSSLMODE: 'verify-full',
  OTEL_SERVICE_NAME: 'bff-service',
  OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=production',
  OTEL_EXPORTER_OTLP_HEADERS: 'x-tenant=a',
  OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
  OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
  CI: 'true',
  DEBUG: '',
  FORCE_COLOR: '0',
  NO_COLOR: '1'
}

t.test('a realistic environment, beside every variable of the service, makes no warning', async t => {
  const service = Object.fromEntries(SERVICE_VARIABLES.map(name => [name, '']))
  t.same(misspeltVariables({ ...REALISTIC_ENVIRONMENT, ...service }, SERVICE_VARIABLES), [])
  const config = loadConfig({ ...REALISTIC_ENVIRONMENT, ...secrets, DATABASE_URL: 'sqlite::memory:' })
  t.same(config.misspellings, [])
})

t.test('the warning names both variables and never the value', async t => {
  const [found, ...more] = loadConfig({ ...secrets, CORS_ORIGIN: 'https://secret-looking.example' }).misspellings
  t.same(more, [])
  t.same(found, {
    variable: 'CORS_ORIGIN',
    intended: 'CORS_ORIGINS',
    message: 'CORS_ORIGIN is not a variable of the service and is ignored: did you mean CORS_ORIGINS?'
  })
})

t.test('a refusal names the misspelt variables that may explain it, in its one line', async t => {
  const production = { NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(40), API_KEYS: 'k', QUOTES_PROVIDER: 'offline' }
  const misspelt = { ...production, DATBASE_URL: 'postgres://db/bff' }
  t.throws(() => loadConfig(misspelt), new ConfigError(
    'Production requires DATABASE_URL; DATBASE_URL is not a variable of the service and is ignored: did you mean ' +
    'DATABASE_URL?'
  ))
  t.throws(() => loadConfig({ PROT: '1', PORT: 'abc' }), /^Invalid configuration: PORT .*; PROT is not a variable/)
  const reasonAlone = /^Production requires JWT_SECRET, API_KEYS, DATABASE_URL, QUOTES_PROVIDER$/
  t.throws(() => loadConfig({ NODE_ENV: 'production' }), reasonAlone, 'without a misspelling, the reason alone')
})
