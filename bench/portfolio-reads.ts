/**
 * The reads of a portfolio by id through the read cache (BENCHMARKS.md#one-read-per-portfolio: one read
 * per portfolio, the portfolio with its whole assets and its version, against three kept apart — REST's
 * detail, the portfolio alone, the valuations' inputs): the CPU this process spends per
 * request through the whole app (`app.inject`, production settings, every protection on, the API
 * key, the offline quotes), on a SQLite file of 100 portfolios of five assets. Warm: every read
 * answered from memory. Cold: the read cache off (PORTFOLIO_CACHE_TTL_MS=0), each request's statement
 * on the database. After a change: the cache dropped (a change of every portfolio, as the feed tells
 * it), then each portfolio's detail, value and valuation asked once, as a frontend does after a write
 * — the three requests counted as one. Targets alternate round by round; each figure is the median
 * of the rounds. Run it in two checkouts, one after the other, several times, to compare them:
 * `npx node --import tsx bench/portfolio-reads.ts` (it stops by itself).
 */
import { rmSync } from 'node:fs'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config/config.js'
import { benchPortfolioFile, median, table } from './lib.js'

const CALLS = Number(process.env.BENCH_CALLS ?? 2_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9)
const API_KEY = 'bench-key'

const { dir, file, ids } = await benchPortfolioFile('bff-reads-')

async function service (cacheTtlMs: number) {
  const app = await buildApp(loadConfig({
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    JWT_SECRET: 'bench-secret-bench-secret-bench-secret',
    API_KEYS: API_KEY,
    DATABASE_URL: `sqlite:${file}`,
    QUOTES_PROVIDER: 'offline',
    RATE_LIMIT_MAX: '1000000000',
    PORTFOLIO_CACHE_TTL_MS: String(cacheTtlMs)
  }), { logger: false })
  await app.ready()
  return app
}

const warm = await service(60_000)
const cold = await service(0)
type App = typeof warm

async function get (app: App, url: string): Promise<void> {
  const res = await app.inject({ method: 'GET', url, headers: { 'x-api-key': API_KEY } })
  if (res.statusCode !== 200) throw new Error(`${url} answered ${res.statusCode}: ${res.body}`)
}

type Read = (call: number) => Promise<void>
const path = (call: number, tail = ''): string => `/portfolios/${ids[call % ids.length] ?? ''}${tail}`
const targets: Record<string, Read> = {
  'GET /portfolios/:id, warm': async call => { await get(warm, path(call)) },
  'GET /portfolios/:id, cold': async call => { await get(cold, path(call)) },
  'GET /portfolios/:id/value, warm': async call => { await get(warm, path(call, '/value')) },
  'GET /portfolios/:id/value, cold': async call => { await get(cold, path(call, '/value')) },
  'GET /portfolios/:id/valuation, warm': async call => { await get(warm, path(call, '/valuation')) },
  'GET /portfolios/:id/valuation, cold': async call => { await get(cold, path(call, '/valuation')) },
  'detail + value + valuation after a change': async call => {
    if (call % ids.length === 0) await warm.changeFeed.publishPortfolioChange({ kind: 'all' })
    await get(warm, path(call))
    await get(warm, path(call, '/value'))
    await get(warm, path(call, '/valuation'))
  }
}

/** CPU µs (user + system) of this process per request, over CALLS requests one after another. */
async function cpuPerCall (read: Read): Promise<number> {
  const before = process.cpuUsage()
  for (let call = 0; call < CALLS; call++) await read(call)
  const used = process.cpuUsage(before)
  return (used.user + used.system) / CALLS
}

try {
  for (const read of Object.values(targets)) await cpuPerCall(read)
  const names = Object.keys(targets)
  const rounds = new Map<string, number[]>(names.map(name => [name, []]))
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of round % 2 === 0 ? names : [...names].reverse()) {
      rounds.get(name)?.push(await cpuPerCall(targets[name] as Read))
    }
  }
  const of = (name: string): number[] => rounds.get(name) ?? []
  const rows = names.map(name => ({
    read: name,
    'CPU µs (median)': median(of(name)).toFixed(1),
    'range µs': `${Math.min(...of(name)).toFixed(1)}–${Math.max(...of(name)).toFixed(1)}`
  }))
  process.stdout.write(`Portfolio reads — ${new Date().toISOString()}, Node ${process.version}; ` +
    `${ROUNDS} rounds of ${CALLS} requests each, alternated\n\n${table(rows)}\n`)
} finally {
  await warm.close()
  await cold.close()
  rmSync(dir, { recursive: true, force: true })
}
