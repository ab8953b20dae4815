import { sql } from 'kysely'
import t, { type Test } from 'tap'
import { connect } from '../../src/store/connect.js'
import { GroupCommit } from '../../src/store/group-commit.js'
import { StoreHandle } from '../../src/store/handle.js'
import { forEachEngine, freshDatabase, type Engine } from '../helper.js'

async function openHandle (t: Test, engine: Engine): Promise<StoreHandle> {
  const connection = await connect((await freshDatabase(t, engine)).searchPathUrl)
  t.teardown(async () => {
    await connection.release?.()
    await connection.db.destroy()
  })
  await sql`create table notes (id text primary key)`.execute(connection.db)
  return new StoreHandle(connection.db, connection.engine)
}

async function storedIds (handle: StoreHandle): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`select id from notes order by id`.execute(handle.db)
  return rows.map(row => row.id)
}

forEachEngine(t, 'writes asked for in one turn are all written and acknowledged', async (t, engine) => {
  const handle = await openHandle(t, engine)
  const writes = new GroupCommit(handle)
  const insert = handle.statement('insert into notes (id) values (?)')
  const ids = Array.from({ length: 100 }, (_, n) => `n${String(n).padStart(3, '0')}`)
  const before = handle.generation

  await Promise.all(ids.map(async id => { await writes.run(insert, [id]) }))

  t.same(await storedIds(handle), ids)
  // One committed transaction on SQLite (its generation bumps once); each write alone on PostgreSQL.
  t.equal(handle.generation - before, engine === 'sqlite' ? 1 : ids.length)
})

forEachEngine(t, 'a failing write of a group is refused alone; the others are written', async (t, engine) => {
  const handle = await openHandle(t, engine)
  const writes = new GroupCommit(handle)
  const insert = handle.statement('insert into notes (id) values (?)')
  await writes.run(insert, ['taken'])

  const results = await Promise.allSettled(['a', 'taken', 'c'].map(async id => { await writes.run(insert, [id]) }))

  t.same(results.map(result => result.status), ['fulfilled', 'rejected', 'fulfilled'])
  t.same(await storedIds(handle), ['a', 'c', 'taken'])
})
