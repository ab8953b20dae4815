/**
 * The service benchmark: the service in production mode on SQLite, a bare Fastify
 * baseline and an upstream fake, measured in the same run, each figure with its ratio to the
 * baseline. Servers on core 0, the load generator and the fake on core 1. Medians of ROUNDS.
 */
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs'
import { cpus, totalmem, tmpdir } from 'node:os'
import { join } from 'node:path'
import { Store } from '../src/store/store.js'
import {
  addBenchAssets,
  benchUserToken,
  cpuSeconds,
  load,
  median,
  peakRssMb,
  pinSelf,
  ROOT,
  startHelper,
  startService,
  table,
  type Figures
} from './lib.js'

const DURATION = Number(process.env.BENCH_DURATION ?? 5)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
/** Seconds of load per target before the rounds, not counted: V8 and graphql-jit compile the hot paths first. */
const WARMUP = Number(process.env.BENCH_WARMUP ?? 2)
const SECRET = 'bench-secret-bench-secret-bench-secret'
const API_KEY = 'bench-key'
const REST_TARGET = 'GET /portfolios/:id (API key + store)'
const USER_TARGET = 'GET /portfolios/:id (user token + store)'
const GRAPHQL_TARGET = 'POST /graphql portfolio(id) { … assets { … } }'
/** The fields GET /portfolios/:id answers, asked of GraphQL (asked to stay within 2× of the REST route). */
const PORTFOLIO_QUERY = 'query ($id: ID!) { portfolio(id: $id) { ' +
  'id name description userId totalValue assets { id name symbol quantity price } } }'

pinSelf()
const dir = mkdtempSync(join(tmpdir(), 'bff-bench-'))
const file = join(dir, 'bench.sqlite')
const store = await Store.open(`sqlite:${file}`)
/** The reads pick among the portfolios of user 1, the bench token's `sub`: the key and the token read the same ones. */
const ids: string[] = []
for (let i = 0; i < 1000; i++) {
  const userId = i % 10 === 0 ? '1' : `user-${i % 100}`
  const portfolio = await store.portfolios.create({ name: `Carteira ${i}`, userId })
  await addBenchAssets(store, portfolio.id)
  if (userId === '1') ids.push(portfolio.id)
}
await store.close()

const baseline = await startHelper('baseline.ts', 0)
const upstream = await startHelper('fake-upstream.ts', 1)
// What operators run: production, one log line per request (to a file, not this report); the portfolio
// routes take the API key and a user's token (PORTFOLIO_ACCESS=both), so both reads run in one process.
const service = await startService({
  DATABASE_URL: `sqlite:${file}`,
  API_KEYS: API_KEY,
  JWT_SECRET: SECRET,
  BACKEND_URL: upstream.url,
  LOG_LEVEL: 'info',
  PORTFOLIO_ACCESS: 'both'
}, join(dir, 'service.log'))
const token = benchUserToken(SECRET, upstream.url)
const bearer = { authorization: `Bearer ${token}` }
const pick = (): string => ids[Math.floor(Math.random() * ids.length)] ?? ''

interface Target {
  name: string
  compareTo: 'baseline' | 'upstream direct'
  run: (duration?: number) => Promise<Figures>
}
/** `GET /portfolios/:id` of one of user 1's portfolios, picked at random, with `headers`. */
function portfolioRead (name: string, label: string, headers: Record<string, string>): Target {
  return {
    name,
    compareTo: 'baseline',
    run: async (duration = DURATION) => await load(label, {
      url: service.url, duration, headers, setupRequest: request => ({ ...request, path: `/portfolios/${pick()}` })
    })
  }
}
const BASELINE = 'baseline: bare Fastify GET /'
const UPSTREAM_DIRECT = 'upstream fake, direct'
/** Targets that are not the service: their figures are the references of the others. */
const REFERENCES = new Set([BASELINE, UPSTREAM_DIRECT])
const targets: Target[] = [
  {
    name: BASELINE,
    compareTo: 'baseline',
    run: async (duration = DURATION) => await load('baseline', { url: `${baseline.url}/`, duration })
  },
  {
    name: 'GET /auth/health',
    compareTo: 'baseline',
    run: async (duration = DURATION) => await load('health', { url: `${service.url}/auth/health`, duration })
  },
  {
    name: 'GET /auth/profile (JWT)',
    compareTo: 'baseline',
    run: async (duration = DURATION) =>
      await load('profile', { url: `${service.url}/auth/profile`, duration, headers: bearer })
  },
  portfolioRead(REST_TARGET, 'portfolio', { 'x-api-key': API_KEY }),
  portfolioRead(USER_TARGET, 'portfolio-user', bearer),
  {
    name: GRAPHQL_TARGET,
    compareTo: 'baseline',
    run: async (duration = DURATION) =>
      await load('graphql', {
        url: `${service.url}/graphql`,
        duration,
        method: 'POST',
        headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' },
        setupRequest: request => ({
          ...request,
          body: JSON.stringify({ query: PORTFOLIO_QUERY, variables: { id: pick() } })
        })
      })
  },
  {
    name: 'POST /portfolios (create)',
    compareTo: 'baseline',
    run: async (duration = DURATION) =>
      await load('create', {
        url: `${service.url}/portfolios`,
        duration,
        method: 'POST',
        headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Bench', userId: 'bench' })
      })
  },
  {
    name: UPSTREAM_DIRECT,
    compareTo: 'upstream direct',
    run: async (duration = DURATION) =>
      await load('direct', { url: `${upstream.url}/api/user/profile`, duration, headers: bearer })
  },
  {
    name: 'GET /backend-api/user/profile (relay)',
    compareTo: 'upstream direct',
    run: async (duration = DURATION) =>
      await load('relay', { url: `${service.url}/backend-api/user/profile`, duration, headers: bearer })
  }
]

const results = new Map<string, Figures[]>()
/**
 * The service's CPU time per answered request, µs, per round (what a request costs, whatever the load generator's
 * pace).
 */
const cpuMicros = new Map<string, number[]>()

try {
  if (WARMUP > 0) for (const target of targets) await target.run(WARMUP)
  // Rounds interleave the targets, so drift on a shared machine touches all alike.
  for (let round = 0; round < ROUNDS; round++) {
    for (const target of targets) {
      const cpuBefore = cpuSeconds(service.child.pid)
      const figures = await target.run()
      results.set(target.name, [...(results.get(target.name) ?? []), figures])
      cpuMicros.set(target.name, [
        ...(cpuMicros.get(target.name) ?? []),
        ((cpuSeconds(service.child.pid) - cpuBefore) * 1e6) / figures.requests
      ])
    }
  }
} finally {
  const rss = peakRssMb(service.child.pid)
  await service.stop()
  await baseline.stop()
  await upstream.stop()
  rmSync(dir, { recursive: true, force: true })
  const rps = (name: string): number => median((results.get(name) ?? []).map(r => r.requestsPerSecond))
  const micros = (name: string): number => median(cpuMicros.get(name) ?? [])
  const rows = targets.map(target => {
    const runs = results.get(target.name) ?? []
    const reference = rps(target.compareTo === 'baseline' ? BASELINE : UPSTREAM_DIRECT)
    return {
      target: target.name,
      'req/s': Math.round(rps(target.name)),
      'p50 ms': median(runs.map(r => r.p50)),
      'p99 ms': median(runs.map(r => r.p99)),
      ratio: `${(rps(target.name) / reference).toFixed(2)} of ${target.compareTo}`,
      'service CPU µs/req': REFERENCES.has(target.name) ? '—' : micros(target.name).toFixed(0),
      errors: runs.reduce((sum, r) => sum + r.non2xx, 0)
    }
  })
  const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, ` +
    `Node ${process.version}`
  const graphqlCost = `GraphQL portfolio(id) costs ${(micros(GRAPHQL_TARGET) / micros(REST_TARGET)).toFixed(2)}× ` +
    'the service CPU of GET /portfolios/:id per request, ' +
    `and serves ${(rps(REST_TARGET) / rps(GRAPHQL_TARGET)).toFixed(2)}× fewer requests a second (target: within 2×)`
  const userRatios = (cpuMicros.get(USER_TARGET) ?? []).map((user, round) =>
    user / (cpuMicros.get(REST_TARGET)?.[round] ?? user))
  const userCost = `GET /portfolios/:id with a user's token costs ${(micros(USER_TARGET) / micros(REST_TARGET))
    .toFixed(3)}× the service CPU per request of the same read with the API key (median of the rounds' ratios ` +
    `${median(userRatios).toFixed(3)}: ${userRatios.map(ratio => ratio.toFixed(3)).join(', ')}; target: within 1.10)`
  const report = `Service benchmark — ${new Date().toISOString()}\n${machine}; ` +
    `${WARMUP}s warm-up, then ${DURATION}s × ${ROUNDS} rounds (medians), 10 connections; ` +
    `service peak RSS ${rss.toFixed(0)} MB\n\n${table(rows)}\n\n${graphqlCost}\n${userCost}\n`
  mkdirSync(`${ROOT}bench/results`, { recursive: true })
  writeFileSync(`${ROOT}bench/results/service.md`, report)
  process.stdout.write(`\n${report}`)
}
