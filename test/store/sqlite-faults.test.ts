import { execFileSync, spawnSync } from 'node:child_process'
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, unlinkSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import SqliteDatabase from 'better-sqlite3'
import type { InjectOptions } from 'fastify'
import { Store } from '../../src/store/store.js'
import { startCheckpointer } from '../../src/store/checkpointer.js'
import { DependencyHealth } from '../../src/observability/dependencies.js'
import { apiKey, buildTestApp, testNeeding } from '../helper.js'
import { capturedLog } from '../fixtures/captured-log.js'

/*
 * SQLite's faults under a running app. The disk is really full: a 4 MiB tmpfs mounted for the
 * test (root can mount one here and in CI; elsewhere the test is skipped with that reason).
 */
const NEEDS_ROOT = process.getuid?.() === 0 ? '' : 'root, to mount a small tmpfs and a read-only bind mount'

function mount (t: Test, ...args: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'bff-mount-'))
  execFileSync('mount', [...args, dir])
  t.teardown(() => {
    spawnSync('umount', ['-l', dir])
    rmSync(dir, { recursive: true, force: true })
  })
  return dir
}

/** Fills the file system of `dir` to its last byte; deleting the returned file frees it. */
function fill (dir: string): string {
  const filler = join(dir, 'filler')
  const fd = openSync(filler, 'w')
  const chunk = Buffer.alloc(4096)
  try {
    for (;;) writeSync(fd, chunk)
  } catch { /* ENOSPC: full */ } finally {
    closeSync(fd)
  }
  return filler
}

const post = (url: string, payload: Record<string, unknown>): InjectOptions =>
  ({ method: 'POST', url, headers: apiKey(), payload })

testNeeding(t, 'the disk full: writes answer 503 STORE_UNAVAILABLE, nothing half-written, resumed once space returns',
  [NEEDS_ROOT], async t => {
    const dir = mount(t, '-t', 'tmpfs', '-o', 'size=4m', 'tmpfs')
    const { stream, lines } = capturedLog()
    const app = await buildTestApp(t, { DATABASE_URL: `sqlite:${join(dir, 'bff.sqlite')}` },
      { logger: { level: 'info', stream } })
    const portfolio = (await app.inject(post('/portfolios', { name: 'Cheia', userId: 'full' }))).json<{ id: string }>()
    const filler = fill(dir)

    let created = 1
    let refused: { statusCode: number, json: () => unknown, headers: Record<string, unknown> } | undefined
    for (let attempt = 0; attempt < 5000 && refused === undefined; attempt++) {
      const res = await app.inject(post('/portfolios', { name: `p${attempt} ${'x'.repeat(150)}`, userId: 'full' }))
      if (res.statusCode === 201) created++
      else refused = res
    }
    t.equal(refused?.statusCode, 503, `after ${created} creates the disk is full`)
    t.match(refused?.json(), { statusCode: 503, code: 'STORE_UNAVAILABLE', message: 'Banco de dados indisponível' })
    t.ok(Number(refused?.headers['retry-after']) > 0, 'with Retry-After')

    const asset = await app.inject(post('/portfolio-assets', {
      name: 'Meia escrita', symbol: 'HALF3', type: 'STOCK', quantity: 1, price: 1, portfolioId: portfolio.id
    }))
    t.equal(asset.statusCode, 503, 'a write of several statements is refused whole')
    t.equal((await app.inject({ method: 'GET', url: '/auth/health' })).statusCode, 200, 'the process serves on')

    unlinkSync(filler)
    const resumed = await app.inject(post('/portfolios', { name: 'depois', userId: 'full' }))
    t.equal(resumed.statusCode, 201, 'writes resume once space returns')
    const listed = await app.store.portfolios.list({ userId: 'full' }, { limit: 1_000_000, offset: 0 })
    t.equal(listed.length, created + 1, 'every acknowledged create is there, and no refused one')
    const detail = (await app.inject({ method: 'GET', url: `/portfolios/${portfolio.id}`, headers: apiKey() }))
      .json<{ assets: unknown[] }>()
    t.same(detail.assets, [], 'the refused asset left nothing behind')
    t.equal(lines.filter(line => line.msg === 'dependency unavailable' && line.dependency === 'store').length, 1)
    t.ok(lines.some(line => line.msg === 'dependency available again' && line.dependency === 'store'))
  })

t.test('the database file removed under a running app: 503 and not ready, one line, no crash', async t => {
  const file = join(mkdtempSync(join(tmpdir(), 'bff-removed-')), 'bff.sqlite')
  const { stream, lines } = capturedLog()
  const app = await buildTestApp(t, { DATABASE_URL: `sqlite:${file}` }, { logger: { level: 'info', stream } })
  t.equal((await app.inject(post('/portfolios', { name: 'antes', userId: 'removed' }))).statusCode, 201)
  unlinkSync(file)
  let status = 201
  for (let attempt = 0; attempt < 100 && status === 201; attempt++) {
    await new Promise(resolve => setTimeout(resolve, 50))
    status = (await app.inject(post('/portfolios', { name: 'depois', userId: 'removed' }))).statusCode
  }
  t.equal(status, 503, 'writes are refused rather than lost in a file no one will open again')
  const ready = await app.inject({ method: 'GET', url: '/ready' })
  t.equal(ready.statusCode, 503)
  t.match(ready.json(), { code: 'STORE_UNAVAILABLE' })
  // The checkpointer thread, whose connection lost the file too, says so on its own line (sqlite_checkpointer).
  t.match(lines.filter(line => line.msg === 'dependency unavailable' && line.dependency === 'store'), [
    { dependency: 'store', err: { message: 'the database file was removed or replaced while open' } }
  ])
})

testNeeding(t, 'a read-only database file at start is one line naming DATABASE_URL', [NEEDS_ROOT], async t => {
  const source = mkdtempSync(join(tmpdir(), 'bff-readonly-'))
  const store = await Store.open(`sqlite:${join(source, 'bff.sqlite')}`)
  await store.close()
  const dir = mount(t, '--bind', '-o', 'ro', source)
  t.teardown(() => rmSync(source, { recursive: true, force: true }))
  try {
    const opened = await Store.open(`sqlite:${join(dir, 'bff.sqlite')}`)
    await opened.close()
    t.fail('opened a read-only file')
  } catch (error) {
    t.match(error, { name: 'StoreOpenError', message: /^Cannot open the database of DATABASE_URL \(sqlite\): [^\n]+$/ })
  }
})

t.test('the checkpointer thread failing is reported once and started again with backoff until it runs', async t => {
  const { log, lines } = capturedLog()
  const health = new DependencyHealth('sqlite_checkpointer', log)
  const folder = join(mkdtempSync(join(tmpdir(), 'bff-checkpointer-')), 'later')
  const database = new SqliteDatabase(':memory:')
  t.teardown(() => database.close())
  // The worker opens a file in a folder that does not exist yet: it fails at once, and again until the folder exists.
  const checkpointer = startCheckpointer(database, join(folder, 'bff.sqlite'), health)
  t.teardown(() => checkpointer.stop())
  const wait = async (): Promise<void> => { await new Promise(resolve => setTimeout(resolve, 25)) }
  for (let attempt = 0; attempt < 200 && lines.length === 0; attempt++) await wait()
  t.match(lines, [{ msg: 'dependency unavailable', dependency: 'sqlite_checkpointer' }])
  t.equal(database.pragma('wal_autocheckpoint', { simple: true }), 1000, 'SQLite\'s own checkpoints are back meanwhile')
  mkdirSync(folder)
  for (let attempt = 0; attempt < 400 && lines.length < 2; attempt++) await wait()
  t.match(lines, [{ msg: 'dependency unavailable' }, { msg: 'dependency available again' }])
  t.equal(database.pragma('wal_autocheckpoint', { simple: true }), 8192, 'the thread checkpoints again')
})
