import t, { type Test } from 'tap'
import pg from 'pg'
import { DependencyHealth } from '../../src/observability/dependencies.js'
import { GuardedPool } from '../../src/store/postgres-pool.js'
import { NEEDS_POSTGRES, POSTGRES_URL, testNeeding } from '../helper.js'
import { closedPort } from '../fixtures/fake-server.js'
import { capturedLog } from '../fixtures/captured-log.js'
import { until } from '../fixtures/until.js'

/*
 * The pool against a real server: sessions are ended with pg_terminate_backend, as a restart or a
 * failover ends them — only this test's own sessions, found by their application_name.
 */

function watched (): { health: DependencyHealth, lines: Array<Record<string, unknown>> } {
  const { log, lines } = capturedLog()
  return { health: new DependencyHealth('store', log), lines }
}

function poolOn (t: Test, name: string, size = 2): { pool: GuardedPool, lines: Array<Record<string, unknown>> } {
  const url = new URL(POSTGRES_URL ?? '')
  url.searchParams.set('application_name', name)
  const { health, lines } = watched()
  const pool = new GuardedPool(url.href, { size, health })
  t.teardown(() => pool.end())
  return { pool, lines }
}

/** Ends this test's sessions (running `like` when given), waiting until there is one; how many. */
async function terminate (name: string, like?: string): Promise<number> {
  const admin = new pg.Client({ connectionString: POSTGRES_URL })
  await admin.connect()
  try {
    let ended = 0
    await until(`a session of ${name}${like === undefined ? '' : ` running ${like}`}`, async () => {
      const { rows } = await admin.query(
        'select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1 and ' +
        '($2::text is null or (state = \'active\' and query like $2))', [name, like ?? null])
      ended = rows.length
      return ended > 0
    })
    return ended
  } finally {
    await admin.end()
  }
}

/** An advisory lock of a session of the test's own: the statements that ask for it wait until it is let go. */
async function heldLock (t: Test, key: number): Promise<{ release: () => Promise<void> }> {
  const holder = new pg.Client({ connectionString: POSTGRES_URL })
  await holder.connect()
  t.teardown(async () => { await holder.end() })
  await holder.query('select pg_advisory_lock($1)', [key])
  return { release: async () => { await holder.query('select pg_advisory_unlock($1)', [key]) } }
}

async function settled (promise: Promise<unknown>): Promise<unknown> {
  try {
    return await promise
  } catch (error) {
    return error
  }
}

const unavailable = { code: 'BFF_STORE_UNAVAILABLE', statusCode: 503, retryAfterSeconds: Number }

testNeeding(t, 'an idle connection ended by the server is dropped without an unhandled error; the next query works',
  [NEEDS_POSTGRES], async t => {
    const { pool, lines } = poolOn(t, 'bff-idle-ended')
    const client = await pool.connect()
    await client.query('select 1', [])
    client.release()
    t.equal(await terminate('bff-idle-ended'), 1)
    await until('the ended connection out of the pool', () => pool.state().total === 0, () => pool.state())
    const again = await pool.connect()
    t.match((await again.query<{ one: number }>('select 1 as one', [])).rows, [{ one: 1 }])
    again.release()
    t.match(lines, [{ msg: 'dependency unavailable' }, { msg: 'dependency available again' }])
  })

testNeeding(t, 'a read whose connection is ended under it runs once more on a fresh one; a write is refused 503',
  [NEEDS_POSTGRES], async t => {
    const { pool } = poolOn(t, 'bff-ended-under', 4)
    // Each statement below waits on the test's lock, so it is in flight when its session is ended;
    // the lock is let go before its answer is awaited, so a statement sent again would succeed.
    const KEY = 5454
    const waiting = `select pg_advisory_xact_lock_shared(${KEY})`
    let lock = await heldLock(t, KEY)
    const reader = await pool.connect()
    const read = settled(reader.query<{ done: string }>(`${waiting}::text as done`, []))
    t.equal(await terminate('bff-ended-under', `${waiting}%`), 1, 'the read\'s session ended while it waited')
    await lock.release()
    t.match(await read, { rows: [{ done: '' }] }, 'the read answered, from a fresh connection')
    reader.release()

    lock = await heldLock(t, KEY)
    const writer = await pool.connect()
    const write = settled(writer.query(`do $$ begin perform pg_advisory_xact_lock_shared(${KEY}); end $$`, []))
    t.equal(await terminate('bff-ended-under', 'do $$%'), 1, 'the write\'s session ended while it waited')
    await lock.release()
    t.match(await write, unavailable, 'a write is never sent twice: 503')
    writer.release()

    lock = await heldLock(t, KEY)
    const inTransaction = await pool.connect()
    await inTransaction.query('begin', [])
    const readInTransaction = settled(inTransaction.query(waiting, []))
    t.equal(await terminate('bff-ended-under', waiting), 1, 'the session in a transaction ended while it waited')
    await lock.release()
    t.match(await readInTransaction, unavailable, 'a read inside a transaction is not repeated either')
    t.match(await settled(inTransaction.query('rollback', [])), unavailable)
    inTransaction.release()

    const after = await Promise.all(Array.from({ length: 8 }, async () => {
      const client = await pool.connect()
      try {
        return (await client.query<{ one: number }>('select 1 as one', [])).rows[0]?.one
      } finally {
        client.release()
      }
    }))
    t.same(after, [1, 1, 1, 1, 1, 1, 1, 1], 'no broken connection was kept')
  })

t.test('an unreachable server is 503 at once, then the breaker refuses new connections without trying', async t => {
  const port = await closedPort(t)
  const { health, lines } = watched()
  const pool = new GuardedPool(`postgres://bff@127.0.0.1:${port}/bff`, { size: 2, health })
  t.teardown(() => pool.end())
  const first = await settled(pool.connect())
  t.match(first, { ...unavailable, cause: { code: 'ECONNREFUSED' } })
  const second = await settled(pool.connect())
  t.match(second, { ...unavailable, cause: { code: 'ECONNREFUSED' } }, 'refused by the open breaker, same cause')
  t.equal(lines.length, 1, 'one line for the outage')
})

testNeeding(t, 'a pool refusing until the store is migrated; a wait for a busy pool is 503 without an outage',
  [NEEDS_POSTGRES], async t => {
    const { pool, lines } = poolOn(t, 'bff-refusing', 1)
    pool.refuse(new Error('not migrated'))
    t.match(await settled(pool.connect()), { ...unavailable, cause: { message: 'not migrated' } })
    pool.accept()
    const held = await pool.connect()
    await held.query('select 1', [])
    t.match(await settled(pool.connect()), { ...unavailable, cause: { message: /timeout exceeded/ } })
    held.release()
    t.notOk(lines.some(line => line.msg === 'dependency unavailable'), 'a busy pool is not an outage')
  })
