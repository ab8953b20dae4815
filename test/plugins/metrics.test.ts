import { readdirSync, readFileSync } from 'node:fs'
import t from 'tap'
import { startFakeLaravel } from '../fixtures/fake-laravel.js'
import { PLUGGY_CLIENT_ID, PLUGGY_CLIENT_SECRET, startFakePluggy } from '../fixtures/fake-pluggy.js'
import { sendJson } from '../fixtures/fake-server.js'
import { apiKey, bearer, buildDataApp, buildTestApp, forEachEngine, userToken } from '../helper.js'

/** `name{labels} value` lines of a Prometheus text exposition, by series. */
function series (text: string): Map<string, number> {
  const found = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue
    const at = line.lastIndexOf(' ')
    found.set(line.slice(0, at), Number(line.slice(at + 1)))
  }
  return found
}

t.test('GET /metrics on its own listener: requests by route pattern, upstreams by outcome, budgets, failures, ' +
  'caches, process', async t => {
  const laravel = await startFakeLaravel(t)
  laravel.on('/api/broken', (_req, res) => sendJson(res, 500, { boom: true }))
  const pluggy = await startFakePluggy(t)
  const app = await buildTestApp(t, {
    METRICS_PORT: '0',
    BACKEND_URL: laravel.url,
    AGGREGATOR_URL: pluggy.url,
    AGGREGATOR_CLIENT_ID: PLUGGY_CLIENT_ID,
    AGGREGATOR_CLIENT_SECRET: PLUGGY_CLIENT_SECRET,
    AUTH_FAILURES_PER_MINUTE: '2'
  })
  const user = bearer(userToken())
  for (let call = 0; call < 3; call++) await app.inject({ method: 'GET', url: '/portfolios', headers: apiKey() })
  await app.inject({ method: 'GET', url: '/portfolios/no-such-id', headers: apiKey() })
  await app.inject({ method: 'GET', url: '/no/such/route' })
  await app.inject({ method: 'GET', url: '/auth/profile', headers: user })
  await app.inject({ method: 'GET', url: '/auth/profile', headers: user })
  for (let call = 0; call < 3; call++) {
    await app.inject({
      method: 'GET',
      url: '/auth/profile',
      headers: bearer('bad.token.here'),
      remoteAddress: '203.0.113.5'
    })
  }
  await app.inject({ method: 'GET', url: '/backend-api/user/profile', headers: user })
  await app.inject({ method: 'POST', url: '/backend-api/proxy/api/broken', headers: user, payload: { method: 'GET' } })
  for (let call = 0; call < 2; call++) {
    await app.inject({
      method: 'POST',
      url: '/aggregator',
      headers: user,
      payload: { endpoint: '/connectors', method: 'GET' }
    })
  }
  for (let call = 0; call < 2; call++) {
    await app.inject({ method: 'GET', url: '/portfolio-assets/price/PETR4', headers: apiKey() })
  }

  t.equal(
    (await app.inject({ method: 'GET', url: '/metrics' })).statusCode,
    404,
    'the public port does not serve the metrics'
  )
  const address = app.metricsAddress()
  t.match(address, /^http:\/\/127\.0\.0\.1:\d+$/, 'on 127.0.0.1 by default')
  const scraped = await fetch(`${address ?? ''}/metrics`)
  t.equal(scraped.status, 200)
  t.match(scraped.headers.get('content-type'), /^text\/plain/)
  const found = series(await scraped.text())
  const expect = (name: string, value: number): void => {
    t.equal(found.get(name), value, name)
  }
  expect('http_request_duration_seconds_count{method="GET",route="/portfolios",status_code="200"}', 3)
  expect('http_request_duration_seconds_count{method="GET",route="/portfolios/:id",status_code="404"}', 1)
  // with GET /metrics on the public port
  expect('http_request_duration_seconds_count{method="GET",route="unmatched",status_code="404"}', 2)
  expect('http_request_duration_seconds_count{method="GET",route="/auth/profile",status_code="200"}', 2)
  expect('http_request_duration_seconds_count{method="GET",route="/auth/profile",status_code="401"}', 2)
  expect('http_request_duration_seconds_count{method="GET",route="/auth/profile",status_code="429"}', 1)
  t.notOk(
    [...found.keys()].some(name => name.includes('no-such-id')),
    'no raw URL in a label'
  )
  expect('bff_upstream_request_duration_seconds_count{upstream="backend",outcome="ok"}', 1)
  expect('bff_upstream_request_duration_seconds_count{upstream="backend",outcome="5xx"}', 1)
  expect('bff_upstream_request_duration_seconds_count{upstream="aggregator",outcome="ok"}', 3)
  expect('bff_auth_failures_total{reason="token_invalid"}', 3)
  expect('bff_rate_limited_total{limit="auth_failures"}', 1)
  // The first valid token and the three bad ones miss; the valid token's five later uses hit.
  expect('bff_cache_requests_total{cache="verified_tokens",result="miss"}', 4)
  expect('bff_cache_requests_total{cache="verified_tokens",result="hit"}', 5)
  expect('bff_cache_requests_total{cache="aggregator_key",result="miss"}', 1)
  expect('bff_cache_requests_total{cache="aggregator_key",result="hit"}', 1)
  expect('bff_cache_requests_total{cache="quotes",result="miss"}', 1)
  expect('bff_cache_requests_total{cache="quotes",result="hit"}', 1)
  // The unknown portfolio: looked up, read from the store, and not kept.
  expect('bff_cache_requests_total{cache="portfolio_reads",result="miss"}', 1)
  t.notOk(found.has('bff_cache_requests_total{cache="portfolio_reads",result="hit"}'))
  t.ok(found.has('process_cpu_user_seconds_total'), 'Node default process series')
  t.ok([...found.keys()].some(name => name.startsWith('nodejs_eventloop_lag_seconds')))
  t.equal((await fetch(`${address ?? ''}/other`)).status, 404)
})

t.test('docs/deploy.md names every cache whose lookups are counted, and each is a cache of the service', async t => {
  const read = (file: string): string => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8')
  const union = /export type CacheName =([^/]*)/.exec(read('src/observability/telemetry.ts'))?.[1] ?? ''
  const counted = [...union.matchAll(/'(\w+)'/g)].map(([, name]) => name).sort()
  t.ok(counted.length >= 9, `${counted.length} names`)
  const listed = /\| `bff_cache_requests_total` \| `cache` \(([^)]*)\)/.exec(read('docs/deploy.md'))?.[1] ?? ''
  t.same([...listed.matchAll(/`(\w+)`/g)].map(([, name]) => name).sort(), counted)
  const sources = readdirSync(new URL('../../src', import.meta.url), { recursive: true, encoding: 'utf8' })
    .filter(file => file.endsWith('.ts') && !file.endsWith('telemetry.ts')).map(file => read(`src/${file}`)).join('\n')
  t.same(counted.filter(name => !sources.includes(`name: '${name}'`)), [], 'each the name of a use of the mechanism')
})

forEachEngine(t, 'store statements are timed; a PostgreSQL pool reports its connections', async (t, engine) => {
  const app = await buildDataApp(t, engine, { METRICS_PORT: '0' })
  await app.inject({ method: 'POST', url: '/portfolios', headers: apiKey(), payload: { name: 'Timed', userId: 'm' } })
  await app.inject({ method: 'GET', url: '/portfolios?userId=m', headers: apiKey() })
  const found = series(await (await fetch(`${app.metricsAddress() ?? ''}/metrics`)).text())
  t.ok((found.get('bff_store_query_duration_seconds_count{outcome="ok"}') ?? 0) >= 2, 'statements timed')
  if (engine === 'postgres') {
    t.ok((found.get('bff_store_pool_connections{state="total"}') ?? 0) >= 1)
    t.equal(found.get('bff_store_pool_connections{state="waiting"}'), 0)
  }
})

t.test('without METRICS_PORT there is no metrics listener and nothing is counted', async t => {
  const app = await buildTestApp(t)
  t.equal(app.metricsAddress(), undefined)
  t.equal((await app.inject({ method: 'GET', url: '/metrics' })).statusCode, 404)
})

forEachEngine(t, 'the Grafana dashboard in docs/ uses only series the service exports', async (t, engine) => {
  const dashboard = JSON.parse(readFileSync(new URL('../../docs/grafana-dashboard.json', import.meta.url), 'utf8')) as {
    panels: Array<{
      title: string
      targets: Array<{ expr: string }>
    }>
  }
  const app = await buildDataApp(t, engine, { METRICS_PORT: '0' })
  await app.inject({ method: 'GET', url: '/portfolios', headers: apiKey() })
  const text = await (await fetch(`${app.metricsAddress() ?? ''}/metrics`)).text()
  const exported = new Set([...text.matchAll(/^# HELP (\S+)/gm)].map(match => match[1]))
  const used = new Set(
    dashboard.panels.flatMap(panel =>
      panel.targets.flatMap(target =>
        [...target.expr.matchAll(/\b((?:http|bff|nodejs|process)_[a-z0-9_]+)\b/g)].map(match =>
          (match[1] ?? '').replace(/_(bucket|count|sum)$/, '')
        )
      )
    )
  )
  t.ok(used.size >= 9, `${used.size} series used`)
  for (const name of used) {
    if (name === 'bff_store_pool_connections' && engine === 'sqlite') continue
    t.ok(exported.has(name), `${name} is exported`)
  }
})
