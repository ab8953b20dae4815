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
import { NEEDS_POSTGRES, POSTGRES_URL, testNeeding } from '../helper.js'
import { closedPort } from '../fixtures/fake-server.js'
import { capturedLog } from '../fixtures/captured-log.js'

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
