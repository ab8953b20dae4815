/**
 * Query styles: the CPU time this process spends per call on the same read (a portfolio by id with
 * its total) and the same insert (a portfolio), each written with the Kysely builder and as a
 * `StoreHandle.statement` (SQL text compiled once). The store is opened as the service opens it (connect, then
 * migrate, one StoreHandle): SQLite on a temporary file, and PostgreSQL too when DATABASE_URL is a postgres URL
 * (in a schema of its own, dropped afterwards). Calls run one after another, the two styles in alternating
 * rounds; each figure is the median of the rounds. The rule it justifies: docs/style.md#query-style.
 *
 * CPU µs per call, medians of four runs of 7 rounds of 2 000 calls on a shared two-core machine (PostgreSQL
 * on the same machine); the last column is the range over the runs:
 *
 * | Engine        | Query                     | Builder µs | Statement µs | Builder − statement µs |
 * |---------------|---------------------------|-----------:|-------------:|------------------------|
 * | SQLite (file) | read by id with its total |       10.0 |          4.8 | 4.5–5.6                |
 * | SQLite (file) | insert                    |       33.1 |         27.5 | 3.7–7.2                |
 * | PostgreSQL    | read by id with its total |       72.4 |         52.2 | 15.0–27.5              |
 * | PostgreSQL    | insert                    |       46.2 |         29.3 | 8.4–20.2               |
 *
 * A statement was cheaper in every run on both engines; on SQLite the builder doubles a read by id.
 * PostgreSQL's figures move more from run to run (its server shares the two cores); the order never changed.
 *
 * Run with `npx node --import tsx bench/query-styles.ts` (the project's Node 24, for which better-sqlite3 is
 * installed; no build needed); it stops by itself.
 */
import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import { connect } from '../src/store/connect.js'
import { migrate } from '../src/store/migrate.js'
import { StoreHandle } from '../src/store/handle.js'
import { median, onEachEngine, table } from './lib.js'

const CALLS = Number(process.env.BENCH_CALLS ?? 2_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7)
const ASSETS = 10

const TOTAL_SQL =
  'coalesce((select sum(pa.value_cents) from portfolio_assets pa where pa.portfolio_id = portfolios.id), 0)'
const BY_ID_SQL = `select portfolios.*, ${TOTAL_SQL} as total_value from portfolios where id = ?`
const INSERT_SQL =
  'insert into portfolios (id, name, description, user_id, created_at, updated_at) values (?, ?, ?, ?, ?, ?)'

type Call = () => Promise<unknown>

/** CPU µs (user + system) of this process per call, over CALLS calls made one after another. */
async function cpuPerCall (call: Call): Promise<number> {
  const before = process.cpuUsage()
  for (let i = 0; i < CALLS; i++) await call()
  const used = process.cpuUsage(before)
  return (used.user + used.system) / CALLS
}

/** The two styles of one query, alternating rounds after a warm-up each: the median µs of each. */
async function compare (builder: Call, statement: Call): Promise<{ builder: number, statement: number }> {
  await cpuPerCall(builder)
  await cpuPerCall(statement)
  const rounds = { builder: [] as number[], statement: [] as number[] }
  for (let round = 0; round < ROUNDS; round++) {
    rounds.builder.push(await cpuPerCall(builder))
    rounds.statement.push(await cpuPerCall(statement))
  }
  return { builder: median(rounds.builder), statement: median(rounds.statement) }
}

async function measure (engine: string, url: string): Promise<Array<Record<string, string | number>>> {
  const { db, engine: opened, release } = await connect(url)
  try {
    await migrate(db, opened)
    const handle = new StoreHandle(db, opened)
    const timestamp = new Date().toISOString()
    const id = randomUUID()
    await db.insertInto('portfolios').values({
      id, name: 'Bench', description: null, user_id: 'bench', created_at: timestamp, updated_at: timestamp
    }).execute()
    for (let i = 0; i < ASSETS; i++) {
      await db.insertInto('portfolio_assets').values({
        id: randomUUID(),
        portfolio_id: id,
        name: `Ativo ${i}`,
        symbol: `SYM${i}`,
        type: 'STOCK',
        quantity: i + 1,
        price: 10,
        value_cents: (i + 1) * 1000,
        created_at: timestamp,
        updated_at: timestamp
      }).execute()
    }
    const byId = handle.statement(BY_ID_SQL)
    const insert = handle.statement(INSERT_SQL)
    const row = () => ({
      id: randomUUID(), name: 'Bench', description: null, user_id: 'bench', created_at: timestamp, updated_at: timestamp
    })
    const read = await compare(
      async () => await db.selectFrom('portfolios').selectAll()
        .select(sql.raw<number | string>(TOTAL_SQL).as('total_value'))
        .where('id', '=', id)
        .executeTakeFirst(),
      async () => (await byId([id]))[0]
    )
    const write = await compare(
      async () => await db.insertInto('portfolios').values(row()).execute(),
      async () => {
        const values = row()
        await insert([values.id, values.name, values.description, values.user_id, timestamp, timestamp])
      }
    )
    return [['read by id with total', read], ['insert', write]].map(([query, figures]) => {
      const { builder, statement } = figures as { builder: number, statement: number }
      return {
        engine,
        query: query as string,
        'builder CPU µs/call': builder.toFixed(1),
        'statement CPU µs/call': statement.toFixed(1),
        'builder − statement µs': (builder - statement).toFixed(1)
      }
    })
  } finally {
    await db.destroy()
    await release?.()
  }
}

const rows = await onEachEngine('query-styles', async ({ engine, searchPathUrl }) =>
  await measure(engine, searchPathUrl))
process.stdout.write(
  `\nCPU µs of this process per call, ${CALLS} calls × ${ROUNDS} rounds (medians), one at a time\n\n${table(rows)}\n`
)
