/**
 * Whose portfolios: the CPU this process spends per `GET /portfolios/:id` read with a
 * user's token against the same read with the API key (docs/api.md#whose-portfolios), through the
 * whole app (`app.inject`: every hook, guard and serializer, no socket), the read cache hit as in
 * production. Two apps on one SQLite file: PORTFOLIO_ACCESS=both (the key and the token, each
 * measured) and the default `api-key` (the key's read as servers had it). Requests one after
 * another, the reads in alternating rounds after a warm-up; each figure is the median of the
 * rounds, and the token's cost is also given round by round against the key's of the same round.
 * Run with `npx node --import tsx bench/portfolio-access.ts` (part of `npm run bench`); it stops by itself.
 */
import { rmSync } from 'node:fs'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config/config.js'
import { benchPortfolioFile, benchUserToken, median, table } from './lib.js'

const CALLS = Number(process.env.BENCH_CALLS ?? 4_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9)
const SECRET = 'bench-secret-bench-secret-bench-secret'
const API_KEY = 'bench-key'

const { dir, file, ids } = await benchPortfolioFile('bff-access-')

/** The service as production runs it, on the bench's file, with `portfolioAccess`. */
async function service (portfolioAccess: string) {
  const config = loadConfig({
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    JWT_SECRET: SECRET,
    API_KEYS: API_KEY,
    DATABASE_URL: `sqlite:${file}`,
    QUOTES_PROVIDER: 'offline',
    RATE_LIMIT_MAX: '1000000000',
    PORTFOLIO_ACCESS: portfolioAccess
  })
  const app = await buildApp(config, { logger: false })
  await app.ready()
  return app
}

const both = await service('both')
const keyOnly = await service('api-key')
const token = benchUserToken(SECRET, 'http://127.0.0.1:8000')

type Read = () => Promise<void>
function reads (app: typeof both, headers: Record<string, string>): Read {
  let next = 0
  return async () => {
    const res = await app.inject({ method: 'GET', url: `/portfolios/${ids[next++ % ids.length] ?? ''}`, headers })
    if (res.statusCode !== 200) throw new Error(`the read answered ${res.statusCode}: ${res.body}`)
  }
}

const targets: Record<string, Read> = {
  'API key (PORTFOLIO_ACCESS=api-key)': reads(keyOnly, { 'x-api-key': API_KEY }),
  'API key (PORTFOLIO_ACCESS=both)': reads(both, { 'x-api-key': API_KEY }),
  'user token (PORTFOLIO_ACCESS=both)': reads(both, { authorization: `Bearer ${token}` })
}
const KEY = 'API key (PORTFOLIO_ACCESS=both)'
const USER = 'user token (PORTFOLIO_ACCESS=both)'

/** CPU µs (user + system) of this process per read, over CALLS reads made one after another. */
async function cpuPerRead (read: Read): Promise<number> {
  const before = process.cpuUsage()
  for (let i = 0; i < CALLS; i++) await read()
  const used = process.cpuUsage(before)
  return (used.user + used.system) / CALLS
}

try {
  for (const read of Object.values(targets)) await cpuPerRead(read)
  const rounds = new Map<string, number[]>(Object.keys(targets).map(name => [name, []]))
  const names = Object.keys(targets)
  for (let round = 0; round < ROUNDS; round++) {
    // Each round in another order, so drift on a shared machine touches every read alike.
    for (const name of round % 2 === 0 ? names : [...names].reverse()) {
      rounds.get(name)?.push(await cpuPerRead(targets[name] as Read))
    }
  }
  const of = (name: string): number[] => rounds.get(name) ?? []
  const rows = names.map(name => ({
    read: `GET /portfolios/:id, ${name}`,
    'CPU µs/read (median)': median(of(name)).toFixed(1),
    'range µs': `${Math.min(...of(name)).toFixed(1)}–${Math.max(...of(name)).toFixed(1)}`
  }))
  const ratios = of(USER).map((user, round) => user / (of(KEY)[round] ?? user))
  process.stdout.write(`Portfolio access — ${new Date().toISOString()}, Node ${process.version}; ` +
    `${ROUNDS} rounds of ${CALLS} reads each, alternated\n\n${table(rows)}\n\n` +
    `the user token's read costs ${(median(of(USER)) / median(of(KEY))).toFixed(3)}× the API key's ` +
    `(median of the rounds' ratios ${median(ratios).toFixed(3)}, range ${Math.min(...ratios).toFixed(3)}–` +
    `${Math.max(...ratios).toFixed(3)}; target: within 1.10)\n`)
} finally {
  await both.close()
  await keyOnly.close()
  rmSync(dir, { recursive: true, force: true })
}
