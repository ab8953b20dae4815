import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import t, { type Test } from 'tap'
import pg from 'pg'
import { buildApp, type App } from '../../src/app.js'
import { MIGRATION_LOCK_KEY } from '../../src/store/migrate.js'
import { MIGRATION_NAMES } from '../../src/store/migrations.js'
import { NEEDS_POSTGRES, POSTGRES_URL, testConfig, testNeeding } from '../helper.js'
import { call } from '../fixtures/instance-reads.js'
import { until } from '../fixtures/until.js'
import { capturedLog } from '../fixtures/captured-log.js'
import { NEEDS_PGBOUNCER, startPgBouncer } from '../fixtures/pgbouncer.js'
import { HOLDER_NAME, TAKE_MIGRATION_LOCK } from '../fixtures/migration-lock.js'

/*
 * Production instances started at the same moment on an empty database (docs/deploy.md#migrations):
 * through PgBouncer in transaction mode, as managed services run it, in session mode, and straight to
 * PostgreSQL. Each round a new database: every instance ready, each migration run by one instance and
 * recorded once, a write on one instance read on another. Then an instance started while another
 * holds the migrations' lock: listening and not ready, one line naming the holder, ready once the
 * holder commits or is killed. Every wait is a bounded poll or the event itself.
 */

const needs = [NEEDS_POSTGRES, NEEDS_PGBOUNCER]
const ROUNDS = 3
const INSTANCES = 4
const WAITING = 'store waiting for another instance to migrate it'

/** A new, empty database of the test's server (dropped when the test ends): its URL through `base`'s server. */
async function emptyDatabase (t: Test, base: string): Promise<{ url: string, direct: string }> {
  const name = `bff_start_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: POSTGRES_URL })
  await admin.connect()
  await admin.query(`create database ${name}`)
  await admin.end()
  t.teardown(async () => {
    const cleanup = new pg.Client({ connectionString: POSTGRES_URL })
    await cleanup.connect()
    await cleanup.query(`drop database ${name} with (force)`)
    await cleanup.end()
  })
  const url = new URL(base)
  url.pathname = `/${name}`
  const direct = new URL(POSTGRES_URL ?? '')
  direct.pathname = `/${name}`
  return { url: url.href, direct: direct.href }
}

interface Started { app: App, lines: Array<Record<string, unknown>> }

/** A production instance on `url` in this process, its log lines kept; closed when the test ends. */
async function production (t: Test, url: string): Promise<Started> {
  const { stream, lines } = capturedLog()
  const app = await buildApp(testConfig({
    NODE_ENV: 'production', DATABASE_URL: url, SHUTDOWN_DRAIN_MS: '0', RATE_LIMIT_MAX: '1000000000'
  }), { logger: { level: 'info', stream } })
  t.teardown(() => app.close())
  await app.ready()
  return { app, lines }
}

const ready = async (app: App): Promise<boolean> => (await app.inject('/ready')).statusCode === 200
const said = (started: Started, msg: string): Array<Record<string, unknown>> =>
  started.lines.filter(line => line.msg === msg)

/** The names recorded in the bookkeeping table, each as often as recorded. */
async function recorded (direct: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: direct })
  await client.connect()
  try {
    return (await client.query<{ name: string }>('select name from kysely_migration order by name')).rows
      .map(row => row.name)
  } finally {
    await client.end()
  }
}

for (const through of ['PgBouncer in transaction mode', 'PgBouncer in session mode', 'PostgreSQL direct'] as const) {
  testNeeding(t, `${ROUNDS} rounds of ${INSTANCES} production instances started at once on an empty database, ` +
    `${through}: every instance ready, the schema migrated once, a write on one read on another`, needs, async t => {
    const mode = /in (\w+) mode/.exec(through)?.[1] as 'transaction' | 'session' | undefined
    const bouncer = mode === undefined ? undefined : await startPgBouncer(t, POSTGRES_URL ?? '', mode)
    for (let round = 1; round <= ROUNDS; round++) {
      const { url, direct } = await emptyDatabase(t, bouncer?.url ?? POSTGRES_URL ?? '')
      const outcomes = await Promise.allSettled(Array.from({ length: INSTANCES }, async () => await production(t, url)))
      const failed = outcomes.flatMap(outcome => outcome.status === 'rejected' ? [String(outcome.reason)] : [])
      t.same(failed, [], `round ${round}: every instance started`)
      const instances = outcomes.flatMap(outcome => outcome.status === 'fulfilled' ? [outcome.value] : [])
      if (instances.length < 2) return
      await until(`round ${round}: every instance ready`, async () =>
        (await Promise.all(instances.map(async ({ app }) => await ready(app)))).every(Boolean))
      t.same(await recorded(direct), MIGRATION_NAMES, `round ${round}: each migration recorded once`)
      const ran = instances.flatMap(started => said(started, 'store migrations run').flatMap(line => line.migrations))
      t.same(ran.sort(), MIGRATION_NAMES, `round ${round}: each migration run by one instance`)
      // Who waited depends on the moment each asked: each that did names an instance's migration connection.
      const waits = instances.flatMap(started => said(started, WAITING))
      t.match(waits, waits.map(() => ({ holder: { applicationName: /^bff-migrations \d+@/, pid: Number } })),
        `round ${round}: ${waits.length} waited, each naming the instance it waited for`)

      const [writer, reader] = [instances[round % instances.length], instances[(round + 1) % instances.length]]
      const written = await call(writer?.app as App, 'POST', '/portfolios', { name: `round ${round}`, userId: 'start' })
      const read = await call(reader?.app as App, 'GET', `/portfolios/${String(written.id)}`)
      t.same([read.id, read.name], [written.id, `round ${round}`], `round ${round}: written on one, read on another`)
      await Promise.all(instances.map(async ({ app }) => { await app.close() }))
    }
  })
}

/**
 * A process holding the migrations' lock through `url` in a transaction, as an instance does while it
 * migrates, until it is told to commit or killed: its backend's pid once it holds it.
 */
async function lockHolder (t: Test, url: string): Promise<{ pid: number, commit: () => void, kill: () => void }> {
  const script = `
    const pg = require('pg')
    const client = new pg.Client({
      connectionString: process.argv[1], application_name: ${JSON.stringify(HOLDER_NAME)}
    })
    client.connect()
      .then(() => client.query('begin'))
      .then(() => client.query(${JSON.stringify(TAKE_MIGRATION_LOCK)}, ['public', Number(process.argv[2])]))
      .then(({ rows }) => { console.log(rows[0].pid) })
    process.stdin.once('data', () => { client.query('commit').then(() => client.end()) })`
  const child = spawn(process.execPath, ['-e', script, url, String(MIGRATION_LOCK_KEY)],
    { stdio: ['pipe', 'pipe', 'inherit'] })
  t.teardown(() => { child.kill('SIGKILL') })
  const [pid] = await once(child.stdout, 'data') as [Buffer]
  return {
    pid: Number(String(pid)),
    commit: () => { child.stdin.write('commit\n') },
    kill: () => { child.kill('SIGKILL') }
  }
}

testNeeding(t, 'through PgBouncer in transaction mode, an instance started while another migrates listens, answers ' +
  '/ready 503 and says once whom it waits for; ready once the other commits, or once it is killed mid-migration',
needs, async t => {
  const bouncer = await startPgBouncer(t, POSTGRES_URL ?? '', 'transaction')
  for (const end of ['commits', 'is killed'] as const) {
    const { url, direct } = await emptyDatabase(t, bouncer.url)
    const holder = await lockHolder(t, url)
    // Started and listening: the store plugin does not wait for the lock, so no plugin timeout however long.
    const waiter = await production(t, url)
    await until('the waiter says whom it waits for', () => said(waiter, WAITING).length > 0)
    t.match(said(waiter, WAITING), [{ holder: { pid: holder.pid, applicationName: HOLDER_NAME } }],
      `one line naming the holder (its application_name and backend pid), which then ${end}`)
    const answer = await waiter.app.inject('/ready')
    t.match([answer.statusCode, answer.json()], [503, { code: 'STORE_UNAVAILABLE' }], 'not ready while it waits')
    t.same(await recorded(direct).catch(() => []), [], 'nothing migrated meanwhile')

    if (end === 'commits') holder.commit()
    else holder.kill()
    await until(`ready once the holder ${end}`, async () => await ready(waiter.app))
    t.same(await recorded(direct), MIGRATION_NAMES, 'migrated by the waiter')
    t.equal(said(waiter, WAITING).length, 1, 'still that one line')
    t.same(waiter.lines.map(line => String(line.msg)).filter(msg => msg.startsWith('store')),
      [WAITING, 'store migrations run', 'store migrated: ready'])
  }
})

testNeeding(t, 'through PgBouncer in statement mode, where no transaction runs, a production start stops with ' +
  'one line that names the mode', needs, async t => {
  const bouncer = await startPgBouncer(t, POSTGRES_URL ?? '', 'statement')
  const { url } = await emptyDatabase(t, bouncer.url)
  await t.rejects(production(t, url), {
    name: 'StoreOpenError',
    message: new RegExp('^Cannot open the database of DATABASE_URL \\(postgres\\): transaction blocks not allowed in ' +
      'statement pooling mode \\(.* transaction or session mode')
  })
})
