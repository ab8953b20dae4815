/**
 * The cost ladder: a bare Fastify route, then each layer of the production stack
 * added in turn, then the full service — each rung a server of its own on core 0, loaded by
 * wrk (50 connections) on core 1, rounds interleaved, medians. With the server's core saturated,
 * 1 / throughput is the CPU a request costs, so the difference between two rungs is what the
 * layer added costs per request. Writes bench/results/ladder.md.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { build } from 'esbuild'
import { mintToken, providerConfig } from '../src/schemas/tokens.js'
import { Store } from '../src/store/store.js'
import { LADDER, LADDER_API_KEY, LADDER_SECRET } from './ladder-steps.js'
import {
  addBenchAssets, loadGet, median, pinned, pinSelf, ROOT, SERVICE_NODE_FLAGS, startService, table, WRK
} from './lib.js'

const DURATION = Number(process.env.BENCH_DURATION ?? 5)
const WARMUP = Number(process.env.BENCH_WARMUP ?? 2)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)

pinSelf()
const dir = mkdtempSync(join(tmpdir(), 'bff-ladder-'))
const database = `sqlite:${join(dir, 'bench.sqlite')}`
const store = await Store.open(database)
const portfolio = await store.portfolios.create({ name: 'Bench portfolio', description: 'ladder', userId: '1' })
await addBenchAssets(store, portfolio.id)
await store.close()

const token = mintToken({
  secret: LADDER_SECRET,
  algorithm: 'HS256',
  type: 'user',
  sub: 1,
  issuer: 'http://127.0.0.1/api/login',
  ttlSeconds: 3600,
  providers: providerConfig({ user: 'App\\Models\\User', client: 'App\\Models\\User\\Client' })
})

/*
 * The rungs run in the form the service runs: bundled by esbuild without `--keep-names` (whose
 * helper runs on every closure Fastify's hooks make: BENCHMARKS.md) and with the same Node flags
 * as `npm start`; under tsx each rung would carry that helper and the service would not. The
 * bundle is written inside the project, so that its imports resolve to node_modules.
 */
const rungServer = `${ROOT}node_modules/.cache/bff-ladder/ladder-server.mjs`
await build({
  entryPoints: [`${ROOT}bench/ladder-server.ts`],
  outfile: rungServer,
  bundle: true,
  packages: 'external',
  platform: 'node',
  format: 'esm',
  target: 'node22',
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'warning'
})

interface Running { url: string, stop: () => Promise<void> }

async function startRung (step: number): Promise<Running> {
  const log = join(dir, `rung-${step}.log`)
  if (LADDER[step]?.service === true) {
    const service = await startService(
      {
        DATABASE_URL: database,
        API_KEYS: LADDER_API_KEY,
        JWT_SECRET: LADDER_SECRET,
        LOG_LEVEL: 'info',
        CORS_ORIGINS: 'https://app.example'
      },
      log
    )
    return service
  }
  const [command, args] = pinned(0, process.execPath, [...SERVICE_NODE_FLAGS, rungServer])
  const child = spawn(command, args, {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      ...process.env,
      NODE_ENV: 'production',
      LADDER_STEP: String(step),
      LADDER_LOG: log,
      DATABASE_URL: database,
      PORTFOLIO_ID: portfolio.id
    }
  })
  const [chunk] = await once(child.stdout, 'data') as [Buffer]
  return {
    url: `http://127.0.0.1:${String(chunk).trim()}`,
    stop: async () => { child.kill('SIGTERM'); await once(child, 'exit') }
  }
}

async function measure (step: number): Promise<number> {
  const rung = LADDER[step]
  const server = await startRung(step)
  try {
    const url = rung?.branch === 'jwt' ? `${server.url}/auth/profile` : `${server.url}/portfolios/${portfolio.id}`
    const headers: Record<string, string> =
      rung?.branch === 'jwt' ? { authorization: `Bearer ${token}` } : { 'x-api-key': LADDER_API_KEY }
    if (WARMUP > 0) await loadGet('warm-up', url, WARMUP, headers)
    const figures = await loadGet(rung?.layer ?? '', url, DURATION, headers)
    if (figures.non2xx > 0) throw new Error(`rung ${rung?.layer ?? step} answered ${figures.non2xx} non-2xx`)
    return figures.requestsPerSecond
  } finally {
    await server.stop()
  }
}

/** LADDER_STEPS=7,8,9 measures those rungs only (quick checks while profiling). */
const only = process.env.LADDER_STEPS?.split(',').map(Number)
const throughput = LADDER.map(() => [] as number[])
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (let step = 0; step < LADDER.length; step++) {
      if (only === undefined || only.includes(step)) throughput[step]?.push(await measure(step))
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}

const rps = throughput.map(values => median(values))
const micros = rps.map(value => 1e6 / value)
const previousOf = (step: number): number => {
  // The JWT rung stacks on the access-log rung; each full-service rung on the rung before it.
  if (LADDER[step]?.layer === 'JWT guard') return LADDER.findIndex(rung => rung.layer === 'access log at info')
  return step - 1
}
const rows = LADDER.map((rung, step) => {
  const previous = previousOf(step)
  return {
    rung: `${step}. ${rung.layer}`,
    adds: rung.adds,
    'req/s': Math.round(rps[step] ?? 0),
    'µs/request': (micros[step] ?? 0).toFixed(1),
    'µs added': step === 0 ? '—' : ((micros[step] ?? 0) - (micros[previous] ?? 0)).toFixed(1),
    'share of bare': ((rps[step] ?? 0) / (rps[0] ?? 1)).toFixed(2)
  }
})
const loader = WRK === undefined ? 'autocannon, 50 connections' : 'wrk -t1 -c50'
const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}`
const report = `Cost ladder — ${new Date().toISOString()}; ${machine}\n` +
  'Each rung its own server pinned to core 0 (NODE_ENV=production), ' +
  `${loader} on core 1, ${WARMUP}s warm-up + ${DURATION}s, medians of ${ROUNDS} interleaved rounds.\n\n${table(rows)}\n`
mkdirSync(`${ROOT}bench/results`, { recursive: true })
writeFileSync(`${ROOT}bench/results/ladder.md`, report)
process.stdout.write(`\n${report}`)
