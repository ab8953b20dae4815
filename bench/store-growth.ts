/**
 * Growth benchmark: read latency of the store-backed routes with 1 000 and with
 * 100 000 portfolios (10 assets each, so about a million at the top), on SQLite.
 * Run with `npm run bench:store` (builds first). Reads by id must stay flat as the store grows.
 */
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import SqliteDatabase from 'better-sqlite3'
import { Store } from '../src/store/store.js'
import { load, startService, summarise, table, type Figures } from './lib.js'

const SIZES = [1_000, 100_000]
const ASSETS_PER_PORTFOLIO = 10
const USERS = 5_000
const DURATION = Number(process.env.BENCH_DURATION ?? 5)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const API_KEY = 'bench-key'
const TYPES = ['STOCK', 'BOND', 'FUND', 'CRYPTO', 'COMMODITY'] as const

/** Fills a migrated SQLite file directly, in one transaction: the benchmark measures reads, not the seeding. */
async function seed (file: string, portfolios: number): Promise<{ ids: string[], users: string[] }> {
  const store = await Store.open(`sqlite:${file}`)
  await store.close()
  const db = new SqliteDatabase(file)
  const insertPortfolio = db.prepare(
    'insert into portfolios (id, name, description, user_id, created_at, updated_at) values (?, ?, ?, ?, ?, ?)'
  )
  const insertAsset = db.prepare(
    'insert into portfolio_assets (id, portfolio_id, name, symbol, type, quantity, price, created_at, updated_at) ' +
    'values (?, ?, ?, ?, ?, ?, ?, ?, ?)'
  )
  const ids: string[] = []
  const start = Date.now()
  db.transaction(() => {
    for (let i = 0; i < portfolios; i++) {
      const id = randomUUID()
      const timestamp = new Date(start + i).toISOString()
      insertPortfolio.run(id, `Carteira ${i}`, null, `user-${i % USERS}`, timestamp, timestamp)
      for (let j = 0; j < ASSETS_PER_PORTFOLIO; j++) {
        insertAsset.run(
          randomUUID(),
          id,
          `Ativo ${j}`,
          `SYM${j}`,
          TYPES[j % TYPES.length],
          1 + (j % 7),
          10 + j,
          timestamp,
          timestamp
        )
      }
      ids.push(id)
    }
  })()
  db.pragma('wal_checkpoint(TRUNCATE)')
  db.close()
  return { ids, users: Array.from({ length: Math.min(USERS, portfolios) }, (_, i) => `user-${i}`) }
}

function pick<T> (values: T[]): T {
  return values[Math.floor(Math.random() * values.length)] as T
}

async function measure (portfolios: number): Promise<Figures[]> {
  const dir = mkdtempSync(join(tmpdir(), 'bff-bench-'))
  const file = join(dir, 'bench.sqlite')
  const seeded = Date.now()
  const { ids, users } = await seed(file, portfolios)
  process.stderr.write(`seeded ${portfolios} portfolios in ${Date.now() - seeded} ms\n`)
  const service = await startService({
    DATABASE_URL: `sqlite:${file}`,
    API_KEYS: API_KEY,
    JWT_SECRET: 'bench-secret-bench-secret-bench-secret'
  })
  const headers = { 'x-api-key': API_KEY }
  const routes: Array<[string, () => string]> = [
    ['GET /portfolios/:id', () => `/portfolios/${pick(ids)}`],
    ['GET /portfolios/:id/value', () => `/portfolios/${pick(ids)}/value`],
    ['GET /portfolios?userId=…', () => `/portfolios?userId=${pick(users)}`],
    ['GET /stats', () => '/stats']
  ]
  const results: Figures[] = []
  try {
    for (const [name, path] of routes) {
      const rounds: Figures[] = []
      for (let round = 0; round < ROUNDS; round++) {
        rounds.push(
          await load(name, {
            url: service.url,
            duration: DURATION,
            headers,
            setupRequest: request => ({ ...request, path: path() })
          })
        )
      }
      results.push(summarise(name, rounds))
    }
  } finally {
    await service.stop()
    rmSync(dir, { recursive: true, force: true })
  }
  return results
}

const bySize = new Map<number, Figures[]>()
for (const size of SIZES) bySize.set(size, await measure(size))

const small = bySize.get(SIZES[0] ?? 0) ?? []
const large = bySize.get(SIZES[1] ?? 0) ?? []
const rows = small.map((figures, index) => {
  const grown = large[index]
  return {
    route: figures.name,
    [`req/s @${SIZES[0]}`]: Math.round(figures.requestsPerSecond),
    [`mean ms @${SIZES[0]}`]: figures.mean.toFixed(2),
    [`p99 ms @${SIZES[0]}`]: figures.p99,
    [`req/s @${SIZES[1]}`]: Math.round(grown?.requestsPerSecond ?? 0),
    [`mean ms @${SIZES[1]}`]: (grown?.mean ?? 0).toFixed(2),
    [`p99 ms @${SIZES[1]}`]: grown?.p99 ?? 0,
    'latency ratio (large/small)': ((grown?.mean ?? 0) / figures.mean).toFixed(2),
    errors: figures.non2xx + (grown?.non2xx ?? 0)
  }
})
process.stdout.write(`\nStore growth on SQLite, ${ASSETS_PER_PORTFOLIO} assets per portfolio, ` +
  `${DURATION}s × ${ROUNDS} rounds (medians), 10 connections\n\n${table(rows)}\n`)
