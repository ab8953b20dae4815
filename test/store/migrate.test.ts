import { Migrator, sql, type Kysely } from 'kysely'
import t, { type Test } from 'tap'
import { connect, type Connection } from '../../src/store/connect.js'
import { migrate } from '../../src/store/migrate.js'
import { MIGRATION_NAMES, MIGRATIONS } from '../../src/store/migrations.js'
import { forEachEngine, freshDatabase, NEEDS_POSTGRES, POSTGRES_URL, testNeeding, type Engine } from '../helper.js'

/** A store migrated once, and its statements from now on as the database receives them. */
async function migratedStore (t: Test, engine: Engine): Promise<{ connection: Connection, statements: string[] }> {
  const connection = await connect((await freshDatabase(t, engine)).searchPathUrl)
  t.teardown(async () => {
    await connection.db.destroy()
    await connection.release?.()
  })
  await migrate(connection.db, connection.engine)
  const statements: string[] = []
  const counted = connection.db.withPlugin({
    transformQuery: ({ node }) => {
      statements.push(node.kind)
      return node
    },
    transformResult: async ({ result }) => result
  })
  connection.db = counted
  return { connection, statements }
}

forEachEngine(t, 'a store at the latest migration is checked with one query, not migrated again', async (t, engine) => {
  const { connection, statements } = await migratedStore(t, engine)
  await migrate(connection.db, connection.engine)
  // PostgreSQL first asks for the current schema, which names the bookkeeping table.
  t.equal(statements.length, engine === 'postgres' ? 2 : 1, 'the recorded migrations read, nothing else')
  const { rows } = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(connection.db)
  t.same(rows.map(row => row.name), MIGRATION_NAMES)
})

forEachEngine(t, 'a store missing its last recorded migration runs it, failing it with its name', async (t, engine) => {
  const { connection, statements } = await migratedStore(t, engine)
  const last = MIGRATION_NAMES.at(-1) ?? ''
  await sql`delete from kysely_migration where name = ${last}`.execute(connection.db)
  // The migration's columns are there already: running it again fails, naming it.
  await t.rejects(migrate(connection.db, connection.engine), { message: new RegExp(`migration ${last} failed`) })
  t.ok(statements.length > 3, 'the migrations ran')
})

forEachEngine(t, 'a run migration this build does not know still stops the start', async (t, engine) => {
  const { connection } = await migratedStore(t, engine)
  const unknown = '9999-from-a-newer-build'
  await sql`insert into kysely_migration (name, timestamp) values (${unknown}, ${new Date().toISOString()})`
    .execute(connection.db)
  await t.rejects(migrate(connection.db, connection.engine), { message: /9999-from-a-newer-build/ })
})

forEachEngine(t, 'a store whose recorded migrations have a gap stops the start, naming the missing',
  async (t, engine) => {
    const { connection } = await migratedStore(t, engine)
    await sql`delete from kysely_migration where name = ${'0005-verified-aggregator-items'}`.execute(connection.db)
    await t.rejects(migrate(connection.db, connection.engine),
      { message: /records later migrations but not 0005-verified-aggregator-items/ })
  })

forEachEngine(t, 'a store Kysely\'s Migrator migrated, as every release before this runner did, is migrated on: ' +
  'the same bookkeeping table and names', async (t, engine) => {
  const { url, schema } = await freshDatabase(t, engine)
  const connection = await connect(url, { schema })
  t.teardown(async () => {
    await connection.db.destroy()
    await connection.release?.()
  })
  const earlier = Object.fromEntries(Object.entries(MIGRATIONS).slice(0, -1))
  const provider = { getMigrations: async () => earlier }
  const migrator = new Migrator({ db: connection.db, provider, migrationTableSchema: schema })
  // Kysely's Migrator reads the tables of every schema: another test file dropping its own meanwhile fails it.
  let { error } = await migrator.migrateToLatest()
  for (let retries = 20; retries > 0 && /does not exist/.test(String(error)); retries--) {
    ({ error } = await migrator.migrateToLatest())
  }
  t.error(error)
  t.same(await migrate(connection.db, engine, { schema }), MIGRATION_NAMES.slice(-1), 'the new migration alone runs')
  const bookkeeping = connection.db as unknown as Kysely<{ kysely_migration: { name: string } }>
  const rows = await bookkeeping.selectFrom('kysely_migration').select('name').orderBy('name').execute()
  t.same(rows.map(row => row.name), MIGRATION_NAMES)
})

testNeeding(t, 'PostgreSQL: migrations into a schema that does not exist are refused, naming it', [NEEDS_POSTGRES],
  async t => {
    const connection = await connect(POSTGRES_URL ?? '')
    t.teardown(() => connection.db.destroy())
    await t.rejects(migrate(connection.db, 'postgres', { schema: 'no_such_schema' }),
      { message: 'no schema "no_such_schema" to migrate in' })
  })
