import { createServer, connect as connectTcp, type Socket } from 'node:net'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import pg from 'pg'
import SqliteDatabase from 'better-sqlite3'
import { Store, StoreOpenError } from '../../src/store/store.js'
import { DependencyHealth } from '../../src/observability/dependencies.js'
import { MIGRATION_NAMES } from '../../src/store/migrations.js'
import { freshDatabase, NEEDS_POSTGRES, POSTGRES_URL, testNeeding } from '../helper.js'
import { closedPort } from '../fixtures/fake-server.js'
import { capturedLog } from '../fixtures/captured-log.js'
import { until } from '../fixtures/until.js'
import { HOLDER_NAME, holdMigrationLock } from '../fixtures/migration-lock.js'

const WAITING = 'store waiting for another instance to migrate it'

async function rejection (promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error('expected a rejection')
}

t.test('SQLite that cannot open is one line naming DATABASE_URL; a missing folder is refused when asked', async t => {
  const directory = await rejection(Store.open('sqlite:/tmp'))
  t.type(directory, StoreOpenError)
  t.match(directory, { message: /^Cannot open the database of DATABASE_URL \(sqlite\): [^\n]+$/ })

  const folder = join(mkdtempSync(join(tmpdir(), 'bff-start-')), 'missing')
  t.match(await rejection(Store.open(`sqlite:${folder}/bff.sqlite`, { createFolder: false })), {
    name: 'StoreOpenError',
    message: `Cannot open the database of DATABASE_URL (sqlite): the folder ${folder} does not exist`
  })
  const created = await Store.open(`sqlite:${folder}/bff.sqlite`)
  t.teardown(() => created.close())
  t.equal(created.engine, 'sqlite', 'created where the folder may be made')
})

t.test('SQLite whose write lock another process holds past busy_timeout (5 s): the migrations\' start stops with ' +
  'one line', async t => {
  const file = join(mkdtempSync(join(tmpdir(), 'bff-start-')), 'bff.sqlite')
  const other = new SqliteDatabase(file)
  t.teardown(() => other.close())
  other.pragma('journal_mode = WAL')
  other.exec('begin immediate')
  t.match(await rejection(Store.open(`sqlite:${file}`)),
    { name: 'StoreOpenError', message: 'Cannot open the database of DATABASE_URL (sqlite): database is locked' })
  other.exec('rollback')
  const store = await Store.open(`sqlite:${file}`)
  t.teardown(() => store.close())
  t.same(await store.appliedMigrations(), MIGRATION_NAMES, 'migrated once the lock is free')
})

t.test('PostgreSQL unreachable at start: an error without waitForDatabase, a store answering 503 with it', async t => {
  const url = `postgres://bff@127.0.0.1:${await closedPort(t)}/bff`
  t.match(await rejection(Store.open(url)), { name: 'StoreOpenError', message: /\(postgres\): .*ECONNREFUSED/ })
  const { log, lines } = capturedLog()
  const waiting = await Store.open(url, { waitForDatabase: true, log, health: new DependencyHealth('store', log) })
  t.match(await rejection(waiting.ping()), { code: 'BFF_STORE_UNAVAILABLE', cause: { code: 'ECONNREFUSED' } })
  t.match(lines, [{ msg: 'dependency unavailable', dependency: 'store' }])
  await waiting.close()
})

/**
 * A TCP front for the test's PostgreSQL whose behaviour the test sets: `reset` cuts every
 * connection (the server restarting), `pass` forwards to the real server.
 */
async function front (target: URL): Promise<{ port: number, mode: { now: 'reset' | 'pass' }, close: () => void }> {
  const mode: { now: 'reset' | 'pass' } = { now: 'reset' }
  const sockets = new Set<Socket>()
  const server = createServer(socket => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => {})
    if (mode.now === 'reset') {
      socket.destroy()
      return
    }
    const upstream = connectTcp(Number(target.port), target.hostname)
    upstream.on('error', () => socket.destroy())
    socket.pipe(upstream).pipe(socket)
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  return { port, mode, close: () => { for (const socket of sockets) socket.destroy(); server.close() } }
}

testNeeding(t, 'waiting for PostgreSQL at start: a refused database is logged once and retried; ' +
  'ready once it exists', [NEEDS_POSTGRES], async t => {
  const real = new URL(POSTGRES_URL ?? '')
  const proxy = await front(real)
  t.teardown(proxy.close)
  const database = `bff_late_${process.pid}`
  const url = new URL(real.href)
  url.port = String(proxy.port)
  url.pathname = `/${database}`
  const { log, lines } = capturedLog()
  const store = await Store.open(url.href, { waitForDatabase: true, log, health: new DependencyHealth('store', log) })
  t.match(await rejection(store.ping()), { code: 'BFF_STORE_UNAVAILABLE' }, 'not ready while the server is away')

  proxy.mode.now = 'pass'
  const refused = 'store cannot start: retrying'
  for (let attempt = 0; attempt < 300 && !lines.some(line => line.msg === refused); attempt++) {
    await new Promise(resolve => setTimeout(resolve, 50))
  }
  t.match(lines.find(line => line.msg === refused), { err: { message: `database "${database}" does not exist` } })

  const admin = new pg.Client({ connectionString: POSTGRES_URL })
  await admin.connect()
  await admin.query(`create database ${database}`)
  t.teardown(async () => {
    await store.close()
    await admin.query(`drop database if exists ${database} with (force)`)
    await admin.end()
  })
  for (let attempt = 0; attempt < 300; attempt++) {
    if (await store.ping().then(() => true, () => false)) break
    await new Promise(resolve => setTimeout(resolve, 50))
  }
  await store.ping()
  t.equal(lines.filter(line => line.msg === refused).length, 1, 'the same reason is logged once')
  t.match(lines.at(-1), { msg: 'store migrated: ready' })
  t.ok(lines.some(line => line.msg === 'dependency available again'))
})

testNeeding(t, 'a start while another instance migrates the store waits for it, saying once whose lock it waits for',
  [NEEDS_POSTGRES], async t => {
    const { url, schema } = await freshDatabase(t, 'postgres')
    const holder = await holdMigrationLock(t, url, schema ?? '')
    const { log, lines } = capturedLog()
    let opened = false
    const opening = Store.open(url, { schema, log }).then(store => {
      opened = true
      t.teardown(() => store.close())
      return store
    })
    const waiting = (): unknown[] => lines.filter(line => line.msg === WAITING)
    await until('the start says whom it waits for', () => waiting().length > 0)
    t.match(waiting(), [{ holder: { pid: holder.pid, applicationName: HOLDER_NAME, since: String } }])
    t.equal(opened, false, 'not open while the other holds the lock')
    await holder.commit()
    const store = await opening
    t.same(await store.appliedMigrations(), MIGRATION_NAMES, 'then migrated')
    t.match(lines.map(line => line.msg), [WAITING, 'store migrations run'])
  })

testNeeding(t, 'a store closed while it waits for another instance\'s migrations ends its wait and migrates nothing',
  [NEEDS_POSTGRES], async t => {
    const { url, schema } = await freshDatabase(t, 'postgres')
    const holder = await holdMigrationLock(t, url, schema ?? '')
    const { log, lines } = capturedLog()
    const store = await Store.open(url, { schema, log, waitForDatabase: true })
    await until('waiting', () => lines.length > 0)
    t.match(await rejection(store.ping()), { code: 'BFF_STORE_UNAVAILABLE' }, 'not ready meanwhile')
    await store.close()
    await holder.commit()
    const admin = new pg.Client({ connectionString: POSTGRES_URL })
    await admin.connect()
    t.teardown(async () => { await admin.end() })
    // Its backend notices the closed connection once the lock is granted, and ends, its transaction rolled back.
    await until('its migration connection gone', async () => (await admin.query(
      'select count(*)::int as n from pg_stat_activity where application_name like $1',
      [`bff-migrations ${process.pid}@%`])).rows[0].n === 0)
    const { rows } = await admin.query('select count(*)::int as n from pg_tables where schemaname = $1', [schema])
    t.equal(rows[0].n, 0, 'no table made')
    t.same(lines.map(line => line.msg), [WAITING])
  })
