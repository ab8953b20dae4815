/**
 * What naming the schema and announcing changes inside transactions cost, on PostgreSQL
 * (DATABASE_URL, a schema of its own dropped afterwards), the store opened as the service opens it:
 *
 * - CPU µs per build of a builder query (the asset list's), plain and through Kysely's `withSchema`;
 * - the detail read alone, and wrapped as `SET LOCAL search_path` would need it outside a transaction
 *   (`begin`, `set local search_path`, the read, `commit`): ms per read, one at a time;
 * - a portfolio's create (POST /portfolios' write: it announces nothing) and an asset's update (it
 *   announces its portfolio's change), with and without the change feed's `pg_notify` in the
 *   transaction: ms per write, one at a time.
 *
 * Each figure is the median of ROUNDS rounds of CALLS calls, the variants in alternating rounds.
 * Run with `DATABASE_URL=postgres://… npx node --import tsx bench/feed-costs.ts`; it stops by itself.
 */
import { randomBytes } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import pg from 'pg'
import { CompiledQuery } from 'kysely'
import { connect } from '../src/store/connect.js'
import { migrate } from '../src/store/migrate.js'
import { Store } from '../src/store/store.js'
import { StoreHandle } from '../src/store/handle.js'
import { PortfolioRepository } from '../src/store/portfolios.js'
import type { PortfolioChange } from '../src/change-feed/change-events.js'
import { benchDomain, median, table } from './lib.js'

const CALLS = Number(process.env.BENCH_CALLS ?? 1000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7)

type Call = () => Promise<unknown>

async function perCall (call: Call, clock: 'cpu' | 'wall'): Promise<number> {
  const cpu = process.cpuUsage()
  const start = performance.now()
  for (let i = 0; i < CALLS; i++) await call()
  if (clock === 'wall') return (performance.now() - start) / CALLS
  const used = process.cpuUsage(cpu)
  return (used.user + used.system) / CALLS
}

async function compare (variants: Record<string, Call>, clock: 'cpu' | 'wall'): Promise<Record<string, number>> {
  const rounds: Record<string, number[]> = {}
  for (const [name, call] of Object.entries(variants)) {
    await perCall(call, clock)
    rounds[name] = []
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, call] of Object.entries(variants)) rounds[name]?.push(await perCall(call, clock))
  }
  return Object.fromEntries(Object.entries(rounds).map(([name, values]) => [name, median(values)]))
}

const fixed = (value: number | undefined, digits = 3): string => (value ?? Number.NaN).toFixed(digits)

const base = process.env.DATABASE_URL ?? ''
if (!/^postgres(ql)?:\/\//.test(base)) throw new Error('DATABASE_URL must name a PostgreSQL server')
const schema = `bench_${randomBytes(6).toString('hex')}`
const admin = new pg.Client({ connectionString: base })
await admin.connect()
await admin.query(`create schema ${schema}`)
const rows: Array<Record<string, string>> = []
try {
  const store = await Store.open(base, { schema, poolSize: 2 })
  const { db, engine } = await connect(base, { schema, poolSize: 2 })
  await migrate(db, engine, { schema })
  const plain = (await connect(base, { poolSize: 1 })).db
  const listQuery = (on: typeof db) => on.selectFrom('portfolio_assets').selectAll().where('portfolio_id', '=', 'x')
    .orderBy('created_at').orderBy('id').limit(50).offset(0)
  const build = await compare({
    plain: async () => listQuery(plain).compile(),
    withSchema: async () => listQuery(db).compile()
  }, 'cpu')
  rows.push({ measure: 'query built, CPU µs', without: fixed(build.plain, 1), with: fixed(build.withSchema, 1) })

  const { domain, access } = benchDomain(store)
  const portfolio = await store.portfolios.create({ name: 'Bench', userId: 'bench' })
  const asset = await domain.assets.create(access, {
    name: 'A', symbol: 'A', type: 'STOCK', quantity: 1, price: 1, portfolioId: portfolio.id
  })
  const handle = new StoreHandle(db, engine, schema)
  const repository = new PortfolioRepository(handle)
  const read = await compare({
    alone: async () => await repository.portfolioAndAssets(portfolio.id),
    setLocal: async () => await db.transaction().execute(async trx => {
      await trx.executeQuery(CompiledQuery.raw(`set local search_path to ${schema}`))
      return await new PortfolioRepository(handle).portfolioAndAssets(portfolio.id)
    })
  }, 'wall')
  rows.push({ measure: 'detail read, ms (with: SET LOCAL)', without: fixed(read.alone), with: fixed(read.setLocal) })

  const announcer = (changes: readonly PortfolioChange[]) => ({
    sql: `select ${changes.map((_, i) => `pg_notify($1, $${i + 2})`).join(', ')}`,
    parameters: ['bff_bench', ...changes.map(change => JSON.stringify({ origin: 'bench', kind: 'portfolio', change }))]
  })
  const announced = async (call: Call): Promise<unknown> => {
    store.announceChangesWith(announcer)
    try { return await call() } finally { store.announceChangesWith(undefined) }
  }
  const create = async (): Promise<unknown> => await store.portfolios.create({ name: 'B', userId: 'bench' })
  let quantity = 1
  const update = async (): Promise<unknown> => await domain.assets.update(access, asset.id, { quantity: ++quantity })
  const creates = await compare({ without: create, with: async () => await announced(create) }, 'wall')
  rows.push({ measure: 'portfolio create, ms', without: fixed(creates.without), with: fixed(creates.with) })
  const updates = await compare({ without: update, with: async () => await announced(update) }, 'wall')
  rows.push({ measure: 'asset update, ms', without: fixed(updates.without), with: fixed(updates.with) })
  await store.close()
  await db.destroy()
  await plain.destroy()
} finally {
  await admin.query(`drop schema ${schema} cascade`)
  await admin.end()
}
console.log(table(rows))
