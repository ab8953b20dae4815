import { spawn } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import SqliteDatabase from 'better-sqlite3'
import { connect } from '../../src/store/connect.js'
import { migrate } from '../../src/store/migrate.js'
import { MIGRATION_NAMES } from '../../src/store/migrations.js'

/*
 * Several processes opening one SQLite file at the same moment (docs/deploy.md#migrations), a new one
 * and one an earlier release left (migrated to 0009): the migrations' transaction begins immediate,
 * so one process migrates and the others wait for the file's write lock, then find nothing left to
 * run. Each round a new file; every process open, each migration run by one process and recorded once.
 */

const PROCESSES = 4
const ROUNDS = 2
const EARLIER = '0009-versions'
const opener = fileURLToPath(new URL('../fixtures/open-store.ts', import.meta.url))
const tsx = import.meta.resolve('tsx')

interface Opened { code: number | null, lines: Array<Record<string, unknown>> }

/** `count` processes that open `url` once all have loaded, each with its exit code and log lines. */
async function openTogether (url: string, count: number): Promise<Opened[]> {
  const children = Array.from({ length: count }, () =>
    spawn(process.execPath, ['--import', tsx, opener, url], { stdio: ['pipe', 'pipe', 'inherit'] }))
  const outputs = children.map(child => {
    let text = ''
    child.stdout.on('data', chunk => { text += String(chunk) })
    return {
      loaded: new Promise<void>(resolve => {
        child.stdout.on('data', () => { if (text.startsWith('loaded\n')) resolve() })
        child.once('exit', () => { resolve() })
      }),
      exited: new Promise<Opened>(resolve => child.once('exit', code => {
        resolve({ code, lines: text.split('\n').filter(line => line.startsWith('{')).map(line => JSON.parse(line)) })
      }))
    }
  })
  await Promise.all(outputs.map(async output => { await output.loaded }))
  for (const child of children) child.stdin.end('open\n')
  return await Promise.all(outputs.map(async output => await output.exited))
}

/** A new SQLite file, or (`earlier`) one migrated as far as an earlier release did. */
async function storeFile (earlier: boolean): Promise<string> {
  const file = join(mkdtempSync(join(tmpdir(), 'bff-processes-')), 'bff.sqlite')
  if (!earlier) return file
  const { db, release } = await connect(`sqlite:${file}`)
  await migrate(db, 'sqlite', { upTo: EARLIER })
  await db.destroy()
  await release?.()
  return file
}

for (const earlier of [false, true]) {
  const kind = earlier ? `a SQLite file an earlier release migrated (to ${EARLIER})` : 'a new SQLite file'
  t.test(`${ROUNDS} rounds of ${PROCESSES} processes opening ${kind} at once migrate it once`, async t => {
    const expected = MIGRATION_NAMES.slice(earlier ? MIGRATION_NAMES.indexOf(EARLIER) + 1 : 0)
    for (let round = 1; round <= ROUNDS; round++) {
      const file = await storeFile(earlier)
      const opened = await openTogether(`sqlite:${file}`, PROCESSES)
      t.same(opened.map(({ code, lines }) => code === 0 ? 'open' : lines.at(-1)?.failed),
        Array(PROCESSES).fill('open'), `round ${round}: every process open`)
      const ran = opened.flatMap(({ lines }) => lines.filter(line => line.msg === 'store migrations run')
        .flatMap(line => line.migrations as string[]))
      t.same(ran.sort(), expected, `round ${round}: each migration run by one process`)
      const database = new SqliteDatabase(file, { readonly: true })
      const names = database.prepare('select name from kysely_migration order by name').pluck().all()
      database.close()
      t.same(names, MIGRATION_NAMES, `round ${round}: each recorded once`)
    }
  })
}
