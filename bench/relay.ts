/**
 * Relay benchmark (issue 4): GET /backend-api/user/profile through the service against the same
 * upstream fake called directly, in the same run. `npm run bench:relay` (builds first).
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { mintToken } from '../src/tokens.js'
import { providerConfig } from '../src/tokens.js'
import { load, pinned, startService, summarise, table, type Figures } from './lib.js'

const DURATION = Number(process.env.BENCH_DURATION ?? 5)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const SECRET = 'bench-secret-bench-secret-bench-secret'

async function startUpstream (delayMs: number): Promise<{ url: string, stop: () => Promise<void> }> {
  const [command, args] = pinned(1, process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./fake-upstream.ts', import.meta.url))])
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, UPSTREAM_DELAY_MS: String(delayMs) } })
  const [chunk] = await once(child.stdout, 'data') as [Buffer]
  return {
    url: `http://127.0.0.1:${String(chunk).trim()}`,
    stop: async () => { child.kill('SIGTERM'); await once(child, 'exit') }
  }
}

/** Direct and relayed throughput against one upstream, alternating rounds so drift touches both alike. */
async function compare (delayMs: number): Promise<Array<Record<string, string | number>>> {
  const upstream = await startUpstream(delayMs)
  const service = await startService({ BACKEND_URL: upstream.url, JWT_SECRET: SECRET, API_KEYS: 'bench-key', DATABASE_URL: 'sqlite::memory:' })
  const token = mintToken({
    secret: SECRET,
    algorithm: 'HS256',
    providers: providerConfig({ user: 'App\\Models\\User', client: 'App\\Models\\User\\Client' }),
    type: 'user',
    sub: 1,
    issuer: `${upstream.url}/api/login`,
    ttlSeconds: 3600
  })
  const headers = { authorization: `Bearer ${token}` }
  const direct: Figures[] = []
  const relayed: Figures[] = []
  try {
    for (let round = 0; round < ROUNDS; round++) {
      direct.push(await load('direct', { url: `${upstream.url}/api/user/profile`, duration: DURATION, headers }))
      relayed.push(await load('relay', { url: `${service.url}/backend-api/user/profile`, duration: DURATION, headers }))
    }
  } finally {
    await service.stop()
    await upstream.stop()
  }
  const base = summarise('direct', direct)
  const relay = summarise('relay', relayed)
  const label = delayMs === 0 ? 'no-op upstream' : `upstream with ${delayMs} ms service time`
  return [[`${label}: fake called directly`, base], [`${label}: GET /backend-api/user/profile`, relay]].map(([target, figures]) => {
    const f = figures as Figures
    return {
      target: target as string,
      'req/s': Math.round(f.requestsPerSecond),
      'mean ms': f.mean.toFixed(2),
      'p99 ms': f.p99,
      'ratio to direct': (f.requestsPerSecond / base.requestsPerSecond).toFixed(2),
      errors: f.non2xx
    }
  })
}

const rows = [...await compare(0), ...await compare(Number(process.env.UPSTREAM_DELAY_MS ?? 5))]
process.stdout.write(`\nRelay vs upstream direct, ${DURATION}s × ${ROUNDS} rounds (medians), 10 connections\n\n${table(rows)}\n`)
