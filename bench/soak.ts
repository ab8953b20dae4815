/**
 * The soak (`npm run soak`, docs in BENCHMARKS.md "Soak"): the built service in production on
 * SQLite and on PostgreSQL under a mixed load at 80 % of the capacity measured first, for
 * SOAK_MINUTES. Every SOAK_SAMPLE_SECONDS it samples the service's resident memory, V8 heap,
 * event-loop delay (p99), open descriptors and the load's p99 latency; at the end it compares
 * the last third of the samples after the warm-up with the first third, and exits 1 when one
 * of them grew past its allowance.
 *
 * SOAK_ENGINE=sqlite|postgres|both (both), SOAK_MINUTES (30), SOAK_SAMPLE_SECONDS (60),
 * SOAK_WARMUP_SAMPLES (2), SOAK_LOAD (0.8), SOAK_CAPACITY_SECONDS (10).
 * PostgreSQL: DATABASE_URL=postgres://… (a fresh schema in it, named by DATABASE_SCHEMA, so a pooler's
 * URL works; DATABASE_LISTEN_URL, when set, is passed on), else a cluster of its own via .ci/start-postgres.
 * SOAK_INJECT_LEAK_MB_PER_MINUTE=<n> makes the service keep n MiB more every minute (bench/soak-leak.mjs):
 * a run that must fail, to show the check can.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon, { type Request } from 'autocannon'
import { createClient } from 'graphql-ws'
import WebSocket from 'ws'
import pg from 'pg'
import { Store } from '../src/store/store.js'
import {
  benchDomain, benchUserToken, freePort, median, pinSelf, ROOT, startHelper, startService, table
} from './lib.js'
import { judge, type Sample } from './soak-judge.js'

const MINUTES = Number(process.env.SOAK_MINUTES ?? 30)
const SAMPLE_SECONDS = Number(process.env.SOAK_SAMPLE_SECONDS ?? 60)
const WARMUP_SAMPLES = Number(process.env.SOAK_WARMUP_SAMPLES ?? 2)
const LOAD = Number(process.env.SOAK_LOAD ?? 0.8)
const CAPACITY_SECONDS = Number(process.env.SOAK_CAPACITY_SECONDS ?? 10)
const LEAK = Number(process.env.SOAK_INJECT_LEAK_MB_PER_MINUTE ?? 0)
const ENGINE = process.env.SOAK_ENGINE ?? 'both'
const ENGINES = ENGINE === 'both' ? ['sqlite', 'postgres'] : [ENGINE]
const SECRET = 'soak-secret-soak-secret-soak-secret-0123'
const API_KEY = 'soak-key'
const CONNECTIONS = 50
const QUERY = 'query ($id: ID!) { portfolio(id: $id) { id name totalValue assets { id symbol quantity price } } }'

pinSelf()

/** A database for `engine`, with 200 portfolios to read; `done` removes what was made for the run. */
interface SoakDatabase {
  url: string
  /** DATABASE_SCHEMA (and DATABASE_LISTEN_URL) of the service on PostgreSQL. */
  env: Record<string, string>
  ids: string[]
  done: () => Promise<void>
}

async function database (engine: string): Promise<SoakDatabase> {
  const cleanups: Array<() => Promise<void> | void> = []
  let url: string
  const env: Record<string, string> = {}
  if (engine === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'bff-soak-'))
    cleanups.push(() => { rmSync(dir, { recursive: true, force: true }) })
    url = `sqlite:${join(dir, 'soak.sqlite')}`
  } else {
    let server = process.env.DATABASE_URL ?? ''
    if (!/^postgres(ql)?:/.test(server)) {
      const dir = mkdtempSync(join(tmpdir(), 'bff-soak-pg-'))
      server = execFileSync('bash', [`${ROOT}.ci/start-postgres`, dir], { encoding: 'utf8' }).trim()
      cleanups.push(() => { execFileSync('bash', [`${ROOT}.ci/stop-postgres`, dir]) })
    }
    const schema = `soak_${process.pid}`
    const admin = new pg.Client({ connectionString: server })
    await admin.connect()
    await admin.query(`create schema ${schema}`)
    await admin.end()
    cleanups.unshift(async () => {
      const cleanup = new pg.Client({ connectionString: server })
      await cleanup.connect()
      await cleanup.query(`drop schema ${schema} cascade`)
      await cleanup.end()
    })
    url = server
    env.DATABASE_SCHEMA = schema
    if (process.env.DATABASE_LISTEN_URL !== undefined) env.DATABASE_LISTEN_URL = process.env.DATABASE_LISTEN_URL
  }
  const store = await Store.open(url, env.DATABASE_SCHEMA === undefined ? {} : { schema: env.DATABASE_SCHEMA })
  const { domain, access } = benchDomain(store)
  const ids: string[] = []
  for (let i = 0; i < 200; i++) {
    const portfolio = await store.portfolios.create({ name: `Carteira ${i}`, userId: `user-${i % 20}` })
    for (let j = 0; j < 3; j++) {
      await domain.assets.create(access, {
        name: `Ativo ${j}`, symbol: `SYM${j}`, type: 'STOCK', quantity: 1 + j, price: 10 + j, portfolioId: portfolio.id
      })
    }
    ids.push(portfolio.id)
  }
  await store.close()
  return { url, env, ids, done: async () => { for (const cleanup of cleanups) await cleanup() } }
}

/** The mix each connection cycles through: JWT, two reads, a create, a relay, a GraphQL query. */
function mix (bearer: string, ids: string[]): Request[] {
  const pick = (): string => ids[Math.floor(Math.random() * ids.length)] ?? ''
  const key = { 'x-api-key': API_KEY }
  const json = { 'content-type': 'application/json' }
  const read: Request = {
    method: 'GET',
    path: '/portfolios/0',
    setupRequest: request => ({ ...request, path: `/portfolios/${pick()}`, headers: key })
  }
  return [
    { method: 'GET', path: '/auth/profile', headers: { authorization: bearer } },
    read,
    read,
    {
      method: 'POST',
      path: '/portfolios',
      headers: { ...key, ...json },
      body: JSON.stringify({ name: 'Soak', userId: 'soak' })
    },
    { method: 'GET', path: '/backend-api/user/profile', headers: { authorization: bearer } },
    {
      method: 'POST',
      path: '/graphql',
      setupRequest: request => ({
        ...request, headers: { ...key, ...json }, body: JSON.stringify({ query: QUERY, variables: { id: pick() } })
      })
    }
  ]
}

async function run (url: string, requests: Request[], seconds: number, overallRate?: number) {
  return await autocannon({
    url, requests, duration: seconds, connections: CONNECTIONS, ...(overallRate === undefined ? {} : { overallRate })
  })
}

/** ` (503: 120, timeout: 4)`, or nothing when every answer was a 2xx. */
function failuresByKind (failures: Map<string, number>): string {
  if (failures.size === 0) return ''
  return ` (${[...failures].map(([kind, count]) => `${kind}: ${count}`).join(', ')})`
}

function procStatus (pid: number, field: string): number {
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return Number(match?.[1] ?? NaN) / 1024
}

/** One scrape of the service's metrics (one: prom-client restarts its event-loop histogram at each). */
async function scrape (metricsUrl: string): Promise<(name: string) => number> {
  const lines = (await (await fetch(`${metricsUrl}/metrics`)).text()).split('\n')
  return name => Number(lines.find(line => line.startsWith(`${name} `))?.split(' ')[1] ?? NaN)
}

async function soak (engine: string): Promise<boolean> {
  const db = await database(engine)
  const upstream = await startHelper('fake-upstream.ts', 1)
  const metricsPort = await freePort()
  const logDir = mkdtempSync(join(tmpdir(), 'bff-soak-log-'))
  const service = await startService({
    DATABASE_URL: db.url,
    ...db.env,
    API_KEYS: API_KEY,
    JWT_SECRET: SECRET,
    BACKEND_URL: upstream.url,
    AGGREGATOR_URL: upstream.url,
    AGGREGATOR_CLIENT_ID: 'soak',
    AGGREGATOR_CLIENT_SECRET: 'soak',
    AGGREGATOR_WEBHOOK_SECRET: 'soak-webhook',
    METRICS_PORT: String(metricsPort),
    LOG_LEVEL: 'info',
    SOAK_LEAK_MB_PER_MINUTE: String(LEAK)
  }, join(logDir, 'service.log'), LEAK > 0 ? [`--import=${ROOT}bench/soak-leak.mjs`] : [])
  const pid = service.child.pid ?? 0
  const metricsUrl = `http://127.0.0.1:${metricsPort}`
  const token = benchUserToken(SECRET, upstream.url, 4 * 3600)
  // The open subscription: held for the whole run, as a dashboard tab left open.
  const subscriptions = createClient({
    url: `${service.url.replace('http', 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${token}` },
    lazy: false
  })
  const subscription = subscriptions.subscribe({
    query: 'subscription { aggregatorItem(itemId: "soak-item") { itemId status } }'
  }, { next: () => {}, error: () => {}, complete: () => {} })
  const requests = mix(`Bearer ${token}`, db.ids)

  const capacity = (await run(service.url, requests, CAPACITY_SECONDS)).requests.average
  const rate = Math.round(capacity * LOAD)
  process.stdout.write(`\n## ${engine}: capacity ${capacity.toFixed(0)} requests/s (mix), soak at ${rate}/s ` +
    `for ${MINUTES} min, a sample every ${SAMPLE_SECONDS} s${LEAK > 0 ? `, ${LEAK} MiB/min leak injected` : ''}\n`)
  const samples: Sample[] = []
  const deadline = Date.now() + MINUTES * 60_000
  let errors = 0
  // Which answers failed, by status (and `timeout`/`error` for no answer): load shed with 503 by a
  // starved instance reads differently from a 500.
  const failures = new Map<string, number>()
  const failed = new Array<number>()
  while (Date.now() < deadline) {
    const result = await run(service.url, requests, SAMPLE_SECONDS, rate)
    errors += result.errors + result.non2xx
    failed.push(result.errors + result.non2xx)
    for (const [status, { count }] of Object.entries(result.statusCodeStats ?? {})) {
      if (!status.startsWith('2')) failures.set(status, (failures.get(status) ?? 0) + (count ?? 0))
    }
    if (result.timeouts > 0) failures.set('timeout', (failures.get('timeout') ?? 0) + result.timeouts)
    const unanswered = result.errors - result.timeouts
    if (unanswered > 0) failures.set('error', (failures.get('error') ?? 0) + unanswered)
    const metric = await scrape(metricsUrl)
    const sample: Sample = {
      minute: (samples.length + 1) * SAMPLE_SECONDS / 60,
      requestsPerSecond: result.requests.average,
      p99Ms: result.latency.p99,
      rssMiB: procStatus(pid, 'VmRSS'),
      heapMiB: metric('nodejs_heap_size_used_bytes') / 2 ** 20,
      eventLoopP99Ms: metric('nodejs_eventloop_lag_p99_seconds') * 1000,
      descriptors: readdirSync(`/proc/${pid}/fd`).length
    }
    samples.push(sample)
    process.stdout.write(`  ${JSON.stringify(sample)}\n`)
  }
  subscription()
  await subscriptions.dispose()
  await service.stop()
  await upstream.stop()
  await db.done()
  rmSync(logDir, { recursive: true, force: true })

  const verdicts = judge(samples, WARMUP_SAMPLES)
  const round = (value: number): string => value.toFixed(1)
  process.stdout.write(`\n${table(samples.map((sample, index) => ({
    minute: round(sample.minute),
    'requests/s': sample.requestsPerSecond.toFixed(0),
    'p99 ms': round(sample.p99Ms),
    'RSS MiB': round(sample.rssMiB),
    'heap MiB': round(sample.heapMiB),
    'event-loop p99 ms': round(sample.eventLoopP99Ms),
    descriptors: sample.descriptors,
    failed: failed[index] ?? 0
  })))}\n\n${table(verdicts.map(verdict => ({
    measure: verdict.measure,
    'first third (median)': round(verdict.first),
    'last third (median)': round(verdict.last),
    allowance: verdict.allowance,
    verdict: verdict.grew ? 'GREW' : 'flat'
  })))}\n\n${engine}: ${samples.length} samples, median ${median(samples.map(s => s.requestsPerSecond)).toFixed(0)} ` +
    `requests/s, ${errors} errors or non-2xx${failuresByKind(failures)}\n`)
  return verdicts.every(verdict => !verdict.grew) && errors === 0
}

let flat = true
for (const engine of ENGINES) flat = await soak(engine) && flat
process.stdout.write(flat ? '\nsoak: flat\n' : '\nsoak: FAILED (growth or errors, above)\n')
process.exit(flat ? 0 : 1)
