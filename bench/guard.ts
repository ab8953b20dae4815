/**
 * The regression guard (`npm run bench:guard`): the CPU this process spends per request
 * on the JWT route (`GET /auth/profile`) and the portfolio read (`GET /portfolios/:id`, the read
 * cache's hit) of the service as production runs it — every protection on, the access line at
 * `info` written through the service's own log destination — against bare Fastify's `GET /` in
 * the same process. Requests are injected (`app.inject`: every hook, guard, serializer and header,
 * no socket) one after another, in blocks of 100: in each round the three targets take turns
 * block by block, in alternating order, a target's cost in the round is the median of its blocks,
 * and the round gives two ratios (JWT / bare, read / bare). Their medians over the rounds are
 * compared with the committed ones of bench/guard-baseline.json: a ratio more than 15 % away,
 * either way, fails (exit 1); `npm test` runs it after the suites under CI=true (test/run.mjs).
 * Ratios, not times: a faster or slower machine moves the three alike.
 * `npm run bench:guard -- --update` writes the medians as the new baseline (after a change that
 * is meant to move them; say why in the commit). BENCHMARKS.md gives the noise this
 * was sized on.
 */
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify from 'fastify'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config/config.js'
import { loggingOptions } from '../src/observability/logging.js'
import { standardOutputLines } from '../src/observability/log-destination.js'
import { judgeRatios } from './guard-judge.js'
import { benchUserToken, median, ROOT, table } from './lib.js'

const REQUESTS = Number(process.env.GUARD_REQUESTS ?? 2_000)
const ROUNDS = Number(process.env.GUARD_ROUNDS ?? 15)
/** Requests of one target in a row within a round. */
const BLOCK = 100
const WARMUP_BLOCKS = Number(process.env.GUARD_WARMUP_BLOCKS ?? 60)
/** The largest change of a ratio, either way, that passes. */
const TOLERANCE = 0.15
const BASELINE_FILE = join(ROOT, 'bench', 'guard-baseline.json')
const SECRET = 'guard-secret-guard-secret-guard-secret'
const API_KEY = 'guard-key'

interface Baseline {
  /** JWT route's CPU per request over bare Fastify's, median of the rounds. */
  jwt: number
  /** The portfolio read's, likewise. */
  read: number
  /** When, where and on what it was measured: for the reader, never compared. */
  measured: string
}

const dir = mkdtempSync(join(tmpdir(), 'bff-guard-'))
const logs = openSync('/dev/null', 'w')
const config = loadConfig({
  NODE_ENV: 'production',
  LOG_LEVEL: 'info',
  JWT_SECRET: SECRET,
  API_KEYS: API_KEY,
  DATABASE_URL: `sqlite:${join(dir, 'guard.sqlite')}`,
  QUOTES_PROVIDER: 'offline',
  RATE_LIMIT_MAX: '1000000000'
})
const service = await buildApp(config, loggingOptions('info', standardOutputLines(logs)))
const bare = Fastify({ logger: false })
bare.get('/', async () => ({ hello: 'world' }))

type Send = () => Promise<void>

/** One request, refused unless it answers 200 (a guard measuring an error path measures nothing). */
function request (app: typeof bare | typeof service, url: string, headers: Record<string, string> = {}): Send {
  return async () => {
    const res = await app.inject({ method: 'GET', url, headers })
    if (res.statusCode !== 200) throw new Error(`${url} answered ${res.statusCode}: ${res.body}`)
  }
}

/** CPU µs (user + system, every thread) this process spent on `count` requests, one after another. */
async function cpuOf (send: Send, count: number): Promise<number> {
  const before = process.cpuUsage()
  for (let i = 0; i < count; i++) await send()
  const used = process.cpuUsage(before)
  return used.user + used.system
}

try {
  await Promise.all([service.ready(), bare.ready()])
  const created = await service.inject({
    method: 'POST',
    url: '/portfolios',
    headers: { 'x-api-key': API_KEY },
    payload: { name: 'Carteira guarda', userId: '1', description: 'bench:guard' }
  })
  const { id } = created.json<{ id: string }>()
  const targets: Record<'bare' | 'jwt' | 'read', Send> = {
    bare: request(bare, '/'),
    jwt: request(service, '/auth/profile', { authorization: `Bearer ${benchUserToken(SECRET, 'http://127.0.0.1')}` }),
    read: request(service, `/portfolios/${id}`, { 'x-api-key': API_KEY })
  }
  const names = Object.keys(targets) as Array<keyof typeof targets>
  // Warm-up, not counted: V8 compiles the hot paths, the read cache fills.
  for (let block = 0; block < WARMUP_BLOCKS; block++) for (const name of names) await cpuOf(targets[name], BLOCK)
  // A round is many short blocks of each target in turn, and its cost per target the median of
  // its blocks: a neighbour's burst on a shared machine, a full garbage collection or a log write
  // lands in one block of one target, which the median leaves out. Each round gives one ratio per route.
  const costs = { bare: [] as number[], jwt: [] as number[], read: [] as number[] }
  for (let round = 0; round < ROUNDS; round++) {
    const blocks = { bare: [] as number[], jwt: [] as number[], read: [] as number[] }
    for (let block = 0; block < REQUESTS / BLOCK; block++) {
      for (const name of block % 2 === 0 ? names : names.toReversed()) {
        blocks[name].push(await cpuOf(targets[name], BLOCK) / BLOCK)
      }
    }
    for (const name of names) costs[name].push(median(blocks[name]))
  }
  const ratios = (name: 'jwt' | 'read'): number[] =>
    costs[name].map((cost, round) => cost / (costs.bare[round] ?? cost))
  const measured = { jwt: median(ratios('jwt')), read: median(ratios('read')) }

  if (process.argv.includes('--update')) {
    const baseline: Baseline = {
      ...measured,
      measured: `${new Date().toISOString()}, Node ${process.version}, ${ROUNDS} rounds of ${REQUESTS} requests`
    }
    writeFileSync(BASELINE_FILE, `${JSON.stringify(baseline, null, 2)}\n`)
  }
  const baseline = JSON.parse(readFileSync(BASELINE_FILE, 'utf8')) as Baseline
  const verdicts = judgeRatios(measured, { jwt: baseline.jwt, read: baseline.read }, TOLERANCE)
  const rows = verdicts.map(({ route, measured: ratio, baseline: committed, change }) => {
    const rounds = ratios(route as 'jwt' | 'read')
    return {
      target: route === 'jwt' ? 'GET /auth/profile (JWT)' : 'GET /portfolios/:id (API key, cached)',
      'CPU µs/request (median)': median(costs[route as 'jwt' | 'read']).toFixed(1),
      'ratio to bare Fastify': `${ratio.toFixed(3)} (rounds ${Math.min(...rounds).toFixed(3)}–` +
        `${Math.max(...rounds).toFixed(3)})`,
      baseline: committed.toFixed(3),
      change: `${change >= 0 ? '+' : ''}${(change * 100).toFixed(1)} %`
    }
  })
  process.stdout.write(`bench:guard — ${ROUNDS} rounds of ${REQUESTS} injected requests per target; ` +
    `bare Fastify GET / ${median(costs.bare).toFixed(1)} µs/request\n\n${table(rows)}\n`)
  const failed = verdicts.filter(verdict => verdict.failed)
  if (failed.length > 0) {
    process.stdout.write(`\nbench:guard FAILED: ${failed.map(({ route }) => route).join(', ')} moved more than ` +
      `${TOLERANCE * 100} % from bench/guard-baseline.json. Slower: find what the change added to the route ` +
      '(BENCHMARKS.md, the cost ladder). Faster, or meant: `npm run bench:guard -- --update`, and commit the ' +
      'baseline with the reason.\n')
    process.exitCode = 1
  }
} finally {
  await Promise.all([service.close(), bare.close()])
  rmSync(dir, { recursive: true, force: true })
}
