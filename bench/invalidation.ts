/**
 * The read cache across instances: two built instances in production mode share one
 * PostgreSQL, their change feed through Redis, then through PostgreSQL's LISTEN/NOTIFY. For each of
 * BENCH_CHANGES renames written on A, it measures the time from A's answer to the first read of B
 * that answers the new name — B reads in a loop, so it holds the old state in its cache when the
 * write lands — and checks that A's own next read answers it at once. Reports the median, p99 and
 * largest delays, and one read's round trip (the resolution of the measure).
 *
 * PostgreSQL: `DATABASE_URL` when it is one (a schema of its own, dropped at the end), else a
 * throwaway cluster (`.ci/start-postgres`). Redis: `/usr/bin/redis-server` on a free port.
 */
import { spawn, execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { Pool } from 'undici'
import { freePort, pinSelf, ROOT, startService, table, type Service } from './lib.js'

const CHANGES = Number(process.env.BENCH_CHANGES ?? 300)
const API_KEY = 'bench-key'
const headers = { 'x-api-key': API_KEY, 'content-type': 'application/json' }

pinSelf()
const dir = mkdtempSync(join(tmpdir(), 'bff-bench-invalidation-'))

/** A PostgreSQL to share: DATABASE_URL's, else a cluster of this run's own. */
async function postgres (): Promise<{ url: string, stop: () => Promise<void> }> {
  let base = process.env.DATABASE_URL ?? ''
  let stopCluster = (): void => {}
  if (!base.startsWith('postgres')) {
    const data = join(dir, 'pg')
    base = execFileSync('bash', [`${ROOT}.ci/start-postgres`, data], { encoding: 'utf8' }).trim()
    stopCluster = () => { execFileSync('bash', [`${ROOT}.ci/stop-postgres`, data]) }
  }
  const schema = `bench_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: base })
  await admin.connect()
  await admin.query(`create schema ${schema}`)
  await admin.end()
  const url = new URL(base)
  url.searchParams.set('options', `-c search_path=${schema}`)
  return {
    url: url.href,
    stop: async () => {
      const cleanup = new pg.Client({ connectionString: base })
      await cleanup.connect()
      await cleanup.query(`drop schema ${schema} cascade`)
      await cleanup.end()
      stopCluster()
    }
  }
}

async function redis (): Promise<{ url: string, stop: () => void }> {
  const server = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find(path => existsSync(path))
  if (server === undefined) throw new Error('redis-server is not installed')
  const port = await freePort()
  const child = spawn(server, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' })
  const url = `redis://127.0.0.1:${port}`
  const { Redis } = await import('ioredis')
  const probe = new Redis(url, { lazyConnect: true, retryStrategy: () => 50 })
  await probe.connect()
  probe.disconnect()
  return { url, stop: () => { child.kill('SIGTERM') } }
}

async function call (pool: Pool, method: 'GET' | 'PATCH' | 'POST', path: string, body?: unknown): Promise<any> {
  const response = await pool.request({
    method, path, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const answer = await response.body.json() as { name?: string }
  if (response.statusCode >= 300) throw new Error(`${method} ${path}: ${response.statusCode}`)
  return answer
}

function percentile (values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN
}

const ms = (value: number): string => value.toFixed(2)

async function measure (transport: 'redis' | 'postgres', databaseUrl: string, redisUrl?: string) {
  const env = {
    DATABASE_URL: databaseUrl,
    API_KEYS: API_KEY,
    JWT_SECRET: 'bench-secret-bench-secret-bench-secret',
    LOG_LEVEL: 'info',
    ...(redisUrl === undefined ? {} : { REDIS_URL: redisUrl })
  }
  const services: Service[] = []
  try {
    for (const name of ['a', 'b']) services.push(await startService(env, join(dir, `${transport}-${name}.log`)))
    const [a, b] = services.map(service => new Pool(service.url, { connections: 1 })) as [Pool, Pool]
    const { id } = await call(a, 'POST', '/portfolios', { name: 'n0', userId: 'bench' }) as { id: string }
    const path = `/portfolios/${id}`
    for (let i = 0; i < 200; i++) await call(b, 'GET', path)
    const started = performance.now()
    for (let i = 0; i < 200; i++) await call(b, 'GET', path)
    const roundTrip = (performance.now() - started) / 200
    const delays: number[] = []
    let stale = 0
    for (let change = 1; change <= CHANGES; change++) {
      await call(b, 'GET', path)
      await call(a, 'PATCH', path, { name: `n${change}` })
      const written = performance.now()
      if ((await call(a, 'GET', path)).name !== `n${change}`) stale++
      for (let poll = 0; (await call(b, 'GET', path)).name !== `n${change}`; poll++) {
        if (poll > 100_000) throw new Error(`B never answered change ${change}`)
      }
      delays.push(performance.now() - written)
    }
    await Promise.all([a.close(), b.close()])
    return {
      'change feed': transport,
      changes: CHANGES,
      'median (ms)': ms(percentile(delays, 50)),
      'p99 (ms)': ms(percentile(delays, 99)),
      'max (ms)': ms(Math.max(...delays)),
      'one read (ms)': ms(roundTrip),
      "A's own read stale": stale
    }
  } finally {
    for (const service of services) await service.stop()
  }
}

const database = await postgres()
const cache = await redis()
try {
  const rows = [await measure('redis', database.url, cache.url), await measure('postgres', database.url)]
  console.log('\nA write on instance A, then reads on instance B until B answers it (from A\'s answer):\n')
  console.log(table(rows))
} finally {
  cache.stop()
  await database.stop()
}
