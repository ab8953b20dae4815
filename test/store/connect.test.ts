import { sql } from 'kysely'
import t, { type Test } from 'tap'
import { connect, migrate, type Connection } from '../../src/store/connect.js'
import { MIGRATION_NAMES } from '../../src/store/migrations.js'
import { forEachEngine, freshDatabase, type Engine } from '../helper.js'

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

forEachEngine(t, 'a store missing a recorded migration goes to the migrator, which runs it', async (t, engine) => {
  const { connection, statements } = await migratedStore(t, engine)
  const last = MIGRATION_NAMES.at(-1) ?? ''
  await sql`delete from kysely_migration where name = ${last}`.execute(connection.db)
  // The migration's columns are there already: running it again fails, naming it.
  await t.rejects(migrate(connection.db, connection.engine), { message: new RegExp(`migration ${last} failed`) })
  t.ok(statements.length > 3, 'the migrator ran')
})

forEachEngine(t, 'a run migration this build does not know still stops the start', async (t, engine) => {
  const { connection } = await migratedStore(t, engine)
  const unknown = '9999-from-a-newer-build'
  await sql`insert into kysely_migration (name, timestamp) values (${unknown}, ${new Date().toISOString()})`
    .execute(connection.db)
  await t.rejects(migrate(connection.db, connection.engine), { message: /9999-from-a-newer-build/ })
})
