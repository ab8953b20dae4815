/**
 * Relay benchmark: first each upstream client alone — got (the service's own calls)
 * and the undici pool (the relays) — in this process on one core; then GET
 * /backend-api/user/profile through the service against the same upstream fake called
 * directly, in the same run. `npm run bench:relay` (builds first).
 */
import { execFileSync, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { pino } from 'pino'
import type { FastifyBaseLogger } from 'fastify'
import { mintToken } from '../src/schemas/tokens.js'
import { providerConfig } from '../src/schemas/tokens.js'
import { UpstreamClient, type UpstreamRequest } from '../src/upstream/client.js'
import { RelayClient } from '../src/upstream/relay.js'
import { load, median, pinned, pinSelf, startService, summarise, table, type Figures } from './lib.js'

const DURATION = Number(process.env.BENCH_DURATION ?? 5)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const SECRET = 'bench-secret-bench-secret-bench-secret'

async function startUpstream (delayMs: number): Promise<{ url: string, stop: () => Promise<void> }> {
  const [command, args] = pinned(1, process.execPath, [
    '--import',
    'tsx',
    fileURLToPath(new URL('./fake-upstream.ts', import.meta.url))
  ])
  const child = spawn(command, args, {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, UPSTREAM_DELAY_MS: String(delayMs) }
  })
  const [chunk] = await once(child.stdout, 'data') as [Buffer]
  return {
    url: `http://127.0.0.1:${String(chunk).trim()}`,
    stop: async () => { child.kill('SIGTERM'); await once(child, 'exit') }
  }
}

const CLIENT_CONCURRENCY = 10

/** Moves this process to `cpu` (so the client under test has one core, the fake the other). */
function pinTo (cpu: number): void {
  if (!existsSync('/usr/bin/taskset')) return
  execFileSync('taskset', ['-p', '-c', String(cpu), String(process.pid)], { stdio: 'ignore' })
}

interface Drive { perSecond: number, cpuMicros: number }

/** Calls for DURATION seconds from CLIENT_CONCURRENCY loops: calls per second, and this process's CPU µs per call. */
async function drive (call: () => Promise<{ status: number }>): Promise<Drive> {
  const until = performance.now() + DURATION * 1000
  let calls = 0
  const cpu = process.cpuUsage()
  const started = performance.now()
  await Promise.all(Array.from({ length: CLIENT_CONCURRENCY }, async () => {
    while (performance.now() < until) {
      if ((await call()).status !== 200) throw new Error('the fake did not answer 200')
      calls++
    }
  }))
  const seconds = (performance.now() - started) / 1000
  const used = process.cpuUsage(cpu)
  return { perSecond: calls / seconds, cpuMicros: (used.user + used.system) / calls }
}

/** got's and undici's cost per call, the same request to the same no-op fake, alternating rounds. */
async function clientCost (): Promise<Array<Record<string, string | number>>> {
  const upstream = await startUpstream(0)
  pinTo(0)
  const log = pino({ level: 'silent' }) as unknown as FastifyBaseLogger
  const options = { name: 'backend' as const, baseUrl: upstream.url, timeoutMs: 10_000 }
  const got = new UpstreamClient(options)
  const relay = new RelayClient(options)
  const headers = { accept: 'application/json', authorization: 'Bearer bench' }
  const request: UpstreamRequest = { method: 'GET', path: 'api/user/profile', headers, log }
  const figures: Record<'got' | 'undici', Drive[]> = { got: [], undici: [] }
  try {
    // A warm-up each: JIT, keep-alive connections.
    await drive(async () => await got.call(request))
    await drive(async () => await relay.call(request))
    for (let round = 0; round < ROUNDS; round++) {
      figures.got.push(await drive(async () => await got.call(request)))
      figures.undici.push(await drive(async () => await relay.call(request)))
    }
  } finally {
    await relay.close()
    await upstream.stop()
    pinSelf()
  }
  const gotPerSecond = median(figures.got.map(f => f.perSecond))
  return Object.entries(figures).map(([client, rounds]) => ({
    client: client === 'got' ? 'got 14 (UpstreamClient.call, own calls)' : 'undici Pool (RelayClient.call, relays)',
    'calls/s on one core': Math.round(median(rounds.map(f => f.perSecond))),
    'CPU µs per call': Math.round(median(rounds.map(f => f.cpuMicros))),
    'ratio to got': (median(rounds.map(f => f.perSecond)) / gotPerSecond).toFixed(2)
  }))
}

/** Direct and relayed throughput against one upstream, alternating rounds so drift touches both alike. */
async function compare (delayMs: number): Promise<Array<Record<string, string | number>>> {
  const upstream = await startUpstream(delayMs)
  const service = await startService({
    BACKEND_URL: upstream.url,
    JWT_SECRET: SECRET,
    API_KEYS: 'bench-key',
    DATABASE_URL: 'sqlite::memory:',
    QUOTES_PROVIDER: 'offline'
  })
    .catch(async (error: unknown) => { await upstream.stop(); throw error })
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
  return [
    [`${label}: fake called directly`, base],
    [`${label}: GET /backend-api/user/profile`, relay]
  ].map(([target, figures]) => {
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

const clients = await clientCost()
const heading = 'Upstream clients alone, ' +
  `${CLIENT_CONCURRENCY} concurrent calls, ${DURATION}s × ${ROUNDS} rounds (medians)`
process.stdout.write(`\n${heading}\n\n${table(clients)}\n`)
const rows = [...await compare(0), ...await compare(Number(process.env.UPSTREAM_DELAY_MS ?? 5))]
process.stdout.write(
  `\nRelay vs upstream direct, ${DURATION}s × ${ROUNDS} rounds (medians), 10 connections\n\n${table(rows)}\n`
)
