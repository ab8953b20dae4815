import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon, { type Request, type Result } from 'autocannon'
import { pino } from 'pino'
import type { Store } from '../src/store/store.js'
import { EVERY_PORTFOLIO, type Access } from '../src/domain/access.js'
import { createDomain, type Domain } from '../src/domain/index.js'
import { mintToken, providerConfig } from '../src/schemas/tokens.js'
import { loadConfig, type AppConfig } from '../src/config/config.js'

export const ROOT = fileURLToPath(new URL('..', import.meta.url))

export async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer()
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => {
        typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))
      })
    })
  })
}

/** `taskset -c <cpu>` when the machine has it, so the server and the load generator use separate cores. */
export function pinned (cpu: number, command: string, args: string[]): [string, string[]] {
  return existsSync('/usr/bin/taskset') ? ['taskset', ['-c', String(cpu), command, ...args]] : [command, args]
}

/** Moves the load generator (this process) to core 1, away from the servers on core 0. */
export function pinSelf (): void {
  if (existsSync('/usr/bin/taskset')) {
    execFileSync('taskset', ['-p', '-c', '1', String(process.pid)], { stdio: 'ignore' })
  }
}

/** Peak resident memory of a process (VmHWM), in MB. */
export function peakRssMb (pid: number | undefined): number {
  if (pid === undefined) return 0
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return match?.[1] === undefined ? 0 : Number(match[1]) / 1024
}

/**
 * CPU time (user + system) a process has used, in seconds: /proc/<pid>/stat counts it in
 * USER_HZ ticks, 100 a second on Linux whatever the kernel's own tick.
 */
export function cpuSeconds (pid: number | undefined): number {
  if (pid === undefined) return 0
  // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/** Starts a helper script that prints its port on its first line (baseline, upstream fake). */
export async function startHelper (
  script: string,
  cpu: number,
  env: Record<string, string> = {}
): Promise<{ url: string, stop: () => Promise<void> }> {
  const [command, args] = pinned(cpu, process.execPath, ['--import', 'tsx', `${ROOT}bench/${script}`])
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } })
  const [chunk] = await once(child.stdout, 'data') as [Buffer]
  return {
    url: `http://127.0.0.1:${String(chunk).trim()}`,
    stop: async () => {
      child.kill('SIGTERM')
      await once(child, 'exit')
    }
  }
}

export interface Service {
  child: ChildProcess
  url: string
  stop: () => Promise<void>
}

/** The Node flags the service runs with: the Dockerfile's `CMD` and `npm start` (a test holds the three equal). */
export const IMAGE_NODE_FLAGS = ['--max-semi-space-size=8', '--heap-growing-percent=100']

/** The image's flags, then any in SERVICE_NODE_FLAGS (space-separated, to try others while profiling). */
export const SERVICE_NODE_FLAGS = [
  ...IMAGE_NODE_FLAGS,
  ...(process.env.SERVICE_NODE_FLAGS ?? '').split(' ').filter(Boolean)
]

/**
 * Starts the built service (`dist/server.js`) with `env`, on core 0, and waits until it answers; its stdout goes to
 * `logFile` when given. `nodeFlags` come after the image's.
 */
export async function startService (
  env: Record<string, string>, logFile?: string, nodeFlags: string[] = []
): Promise<Service> {
  const port = await freePort()
  const [command, args] = pinned(0, process.execPath, [
    ...SERVICE_NODE_FLAGS,
    ...nodeFlags,
    `${ROOT}dist/server.js`
  ])
  const child = spawn(command, args, {
    cwd: ROOT,
    // One load generator is one client: the rate limit would measure its refusals, not the routes.
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'production',
      QUOTES_PROVIDER: 'offline',
      LOG_LEVEL: 'warn',
      HOST: '127.0.0.1',
      PORT: String(port),
      RATE_LIMIT_MAX: '1000000000',
      ...env
    },
    stdio: ['ignore', logFile === undefined ? 'inherit' : openSync(logFile, 'a'), 'inherit']
  })
  const url = `http://127.0.0.1:${port}`
  for (let attempt = 0; ; attempt++) {
    try {
      if ((await fetch(`${url}/auth/health`)).ok) break
    } catch {
      if (attempt > 200 || child.exitCode !== null) throw new Error('the service did not start')
      await new Promise(resolve => setTimeout(resolve, 50))
    }
  }
  return {
    child,
    url,
    stop: async () => {
      if (child.exitCode !== null) return
      const exited = new Promise(resolve => child.once('exit', resolve))
      child.kill('SIGTERM')
      await exited
    }
  }
}

/** A user's token as tymon/jwt-auth mints them, issued by the upstream stub at `upstreamUrl`. */
export function benchUserToken (secret: string, upstreamUrl: string, ttlSeconds = 3600): string {
  return mintToken({
    secret,
    algorithm: 'HS256',
    type: 'user',
    sub: 1,
    issuer: `${upstreamUrl}/api/login`,
    ttlSeconds,
    providers: providerConfig({ user: 'App\\Models\\User', client: 'App\\Models\\User\\Client' })
  })
}

export interface Figures {
  name: string
  requestsPerSecond: number
  mean: number
  p50: number
  p99: number
  non2xx: number
  /** Requests answered in all. */
  requests: number
}

/** Runs autocannon; `requests` may set a different path per request (`setupRequest`). */
export async function load (
  name: string,
  options: {
    url: string
    duration: number
    connections?: number
    method?: Request['method']
    headers?: Record<string, string>
    body?: string
    setupRequest?: Request['setupRequest']
  }
): Promise<Figures> {
  const result: Result = await autocannon({
    url: options.url,
    duration: options.duration,
    connections: options.connections ?? 10,
    method: options.method ?? 'GET',
    headers: options.headers,
    body: options.body,
    requests: options.setupRequest === undefined ? undefined : [{ setupRequest: options.setupRequest }]
  })
  return {
    name,
    requestsPerSecond: result.requests.average,
    mean: result.latency.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx + result.errors,
    requests: result.requests.total
  }
}

export function median (values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle] ?? 0 : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2
}

/** One figure per target: the median of its rounds (errors add up). */
export function summarise (name: string, rounds: Figures[]): Figures {
  return {
    name,
    requestsPerSecond: median(rounds.map(r => r.requestsPerSecond)),
    mean: median(rounds.map(r => r.mean)),
    p50: median(rounds.map(r => r.p50)),
    p99: median(rounds.map(r => r.p99)),
    non2xx: rounds.reduce((sum, r) => sum + r.non2xx, 0),
    requests: rounds.reduce((sum, r) => sum + r.requests, 0)
  }
}

export function table (rows: Array<Record<string, string | number>>): string {
  const first = rows[0]
  if (first === undefined) return ''
  const columns = Object.keys(first)
  const line = (cells: Array<string | number>) => `| ${cells.join(' | ')} |`
  return [
    line(columns),
    line(columns.map(() => '---')),
    ...rows.map(row => line(columns.map(column => row[column] ?? '')))
  ].join('\n')
}

/** wrk, when installed: a C load generator that does not saturate its own core before the server's. */
export const WRK = ['/usr/bin/wrk', '/usr/local/bin/wrk'].find(path => existsSync(path))

/** `duration` seconds of GETs from 50 connections with wrk on core 1 (autocannon there when wrk is absent). */
export async function loadGet (
  name: string,
  url: string,
  duration: number,
  headers: Record<string, string> = {}
): Promise<Figures> {
  if (WRK === undefined) return await load(name, { url, duration, connections: 50, headers })
  const args = [
    '-t1',
    '-c50',
    `-d${duration}s`,
    '--latency',
    ...Object.entries(headers).flatMap(([key, value]) => ['-H', `${key}: ${value}`]),
    url
  ]
  const [command, commandArgs] = pinned(1, WRK, args)
  const child = spawn(command, commandArgs, { stdio: ['ignore', 'pipe', 'inherit'] })
  let output = ''
  child.stdout.on('data', chunk => {
    output += String(chunk)
  })
  await once(child, 'exit')
  const number = (pattern: RegExp): number => Number(pattern.exec(output)?.[1] ?? NaN)
  const millis = (label: string): number => {
    const match = new RegExp(`${label}%\\s+([\\d.]+)(us|ms|s)`).exec(output)
    if (match === null) return NaN
    return Number(match[1]) * ({ us: 0.001, ms: 1, s: 1000 }[match[2] as 'us' | 'ms' | 's'])
  }
  return {
    name,
    requestsPerSecond: number(/Requests\/sec:\s+([\d.]+)/),
    mean: NaN,
    p50: millis('50'),
    p99: millis('99'),
    non2xx: number(/Non-2xx or 3xx responses:\s+(\d+)/) || 0,
    requests: number(/(\d+) requests in/)
  }
}

/**
 * The domain over a benchmark's own store, and a trusted server's access (every user's portfolios): the writes
 * that seed a benchmark decide as the service's do. No quotes, aggregator nor change feed: reads go to the store.
 */
export function benchDomain (store: Store): { domain: Domain, access: Access } {
  const none = undefined as never
  const log = pino({ level: 'silent' })
  const domain = createDomain({ store, quotes: none, aggregator: none, changeFeed: none, log })
  const access: Access = {
    apiKey: async () => {},
    principal: async () => { throw new Error('a benchmark writes as a trusted server') },
    portfolioScope: async () => EVERY_PORTFOLIO,
    caller: () => 'bench'
  }
  return { domain, access }
}

/** The five assets every benchmarked portfolio holds (the read answers them with their total). */
export async function addBenchAssets (store: Store, portfolioId: string): Promise<void> {
  const { domain, access } = benchDomain(store)
  for (let j = 0; j < 5; j++) {
    await domain.assets.create(access, {
      name: `Ativo ${j}`,
      symbol: `SYM${j}`,
      type: 'STOCK',
      quantity: 1 + j,
      price: 10 + j,
      portfolioId
    })
  }
}

/**
 * A SQLite file in a directory of its own (`dir`, removed by the caller) holding 100 portfolios of the bench's five
 * assets, `ids` theirs: what the benchmarks of reads by id read.
 */
export async function benchPortfolioFile (prefix: string): Promise<{ dir: string, file: string, ids: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  const file = join(dir, 'bench.sqlite')
  // Loaded here, so that the benchmarks that open no store do not load it.
  const { Store } = await import('../src/store/store.js')
  const store = await Store.open(`sqlite:${file}`)
  const ids: string[] = []
  for (let i = 0; i < 100; i++) {
    const portfolio = await store.portfolios.create({ name: `Carteira ${i}`, userId: '1' })
    await addBenchAssets(store, portfolio.id)
    ids.push(portfolio.id)
  }
  await store.close()
  return { dir, file, ids }
}

/** A store's database for a benchmark: `url` and `schema` as the service takes them, or the schema as search_path. */
export interface BenchDatabase {
  engine: 'SQLite (file)' | 'PostgreSQL'
  url: string
  schema?: string
  searchPathUrl: string
}

/**
 * `measure` on a SQLite file, then on PostgreSQL when DATABASE_URL names one, in a schema of its own (dropped
 * afterwards): the rows of both.
 */
export async function onEachEngine<Row> (
  name: string, measure: (database: BenchDatabase) => Promise<Row[]>
): Promise<Row[]> {
  const rows: Row[] = []
  const dir = mkdtempSync(join(tmpdir(), `bff-${name}-`))
  try {
    const url = `sqlite:${join(dir, 'bench.sqlite')}`
    rows.push(...await measure({ engine: 'SQLite (file)', url, searchPathUrl: url }))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  const base = process.env.DATABASE_URL
  if (base === undefined || !/^postgres(ql)?:\/\//.test(base)) {
    process.stderr.write('PostgreSQL skipped: set DATABASE_URL=postgres://… to measure it too\n')
    return rows
  }
  const { default: pg } = await import('pg')
  const run = async (text: string): Promise<void> => {
    const client = new pg.Client({ connectionString: base })
    await client.connect()
    try { await client.query(text) } finally { await client.end() }
  }
  const schema = `bench_${randomBytes(6).toString('hex')}`
  await run(`create schema ${schema}`)
  try {
    const searchPath = new URL(base)
    searchPath.searchParams.set('options', `-c search_path=${schema}`)
    rows.push(...await measure({ engine: 'PostgreSQL', url: base, schema, searchPathUrl: searchPath.href }))
  } finally {
    await run(`drop schema ${schema} cascade`)
  }
  return rows
}

/** The JWT secret of the apps benchmarks build in process; their BACKEND_URL answers nothing (no relay is measured). */
const BENCH_JWT_SECRET = 'bench-secret-bench-secret-bench-secret'
const BENCH_BACKEND_URL = 'http://127.0.0.1:9'

/** A user's token {@link productionConfig}'s app takes (user 1). */
export function productionUserToken (): string {
  return benchUserToken(BENCH_JWT_SECRET, BENCH_BACKEND_URL)
}

/**
 * An app as operators run it — production, every protection on — on `database`, with the offline quotes, the API
 * key `bench-key` and users' tokens ({@link productionUserToken}), and `settings` over that. The access line is
 * silent (a constant per request, and no terminal to write it to) and the rate limit raised: thousands of requests
 * from one client measure the work, not the limit's refusals.
 */
export function productionConfig ({ url, schema }: BenchDatabase, settings: Record<string, string>): AppConfig {
  return loadConfig({
    NODE_ENV: 'production',
    LOG_LEVEL: 'silent',
    JWT_SECRET: BENCH_JWT_SECRET,
    API_KEYS: 'bench-key',
    BACKEND_URL: BENCH_BACKEND_URL,
    DATABASE_URL: url,
    ...(schema === undefined ? {} : { DATABASE_SCHEMA: schema }),
    QUOTES_PROVIDER: 'offline',
    RATE_LIMIT_MAX: '1000000000',
    ...settings
  })
}

/** An app measured in process: a SQLite file in `dir`, quotes from the fake brapi at `brapiUrl`. */
export function inProcessConfig (dir: string, brapiUrl: string, apiKey: string): AppConfig {
  return loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    MAX_EVENT_LOOP_DELAY_MS: '0',
    JWT_SECRET: BENCH_JWT_SECRET,
    API_KEYS: apiKey,
    DATABASE_URL: `sqlite:${join(dir, 'bench.sqlite')}`,
    QUOTES_PROVIDER: 'brapi',
    BRAPI_URL: brapiUrl,
    BRAPI_TOKEN: 'bench',
    // Thousands of requests a round: this measures a request's CPU, not the rate limit's refusals.
    RATE_LIMIT_MAX: '100000000'
  })
}
