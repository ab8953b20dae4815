import t from 'tap'
import { spawn } from 'node:child_process'
import { mkdtempSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Agent, request } from 'undici'
import SqliteDatabase from 'better-sqlite3'
import { Store } from '../../src/store/store.js'
import { TEST_API_KEYS, tymon } from '../helper.js'
import { listeningPort } from '../fixtures/processes.js'

const serverEntry = fileURLToPath(new URL('../../src/server.ts', import.meta.url))
const tsx = import.meta.resolve('tsx')
const CLIENTS = 20

t.test('SQLite file: every create acknowledged before a kill -9 is in the store after it ' +
  '(checkpoints run in their own thread)', async t => {
  const file = join(mkdtempSync(join(tmpdir(), 'bff-kill-')), 'bff.sqlite')
  const child = spawn(process.execPath, ['--import', tsx, serverEntry], {
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'test',
      PORT: '0',
      LOG_LEVEL: 'info',
      JWT_SECRET: tymon.secret,
      API_KEYS: TEST_API_KEYS.join(','),
      DATABASE_URL: `sqlite:${file}`,
      MAX_EVENT_LOOP_DELAY_MS: '0',
      RATE_LIMIT_MAX: '1000000000'
    }
  })
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  const exited = new Promise<void>(resolve => child.once('exit', () => { resolve() }))
  const port = await listeningPort(child)

  const dispatcher = new Agent({ connections: CLIENTS })
  t.teardown(() => dispatcher.close())
  const acknowledged: string[] = []
  let stop = false
  async function client (index: number): Promise<void> {
    // eslint-disable-next-line no-unmodified-loop-condition -- the test sets `stop` while the clients run
    for (let sequence = 0; !stop; sequence++) {
      try {
        const { statusCode, body } = await request(`http://127.0.0.1:${port}/portfolios`, {
          method: 'POST',
          dispatcher,
          headers: { 'x-api-key': TEST_API_KEYS[0] ?? '', 'content-type': 'application/json' },
          body: JSON.stringify({ name: `kill ${index}-${sequence}`, userId: 'kill' })
        })
        const answer = await body.json() as { id?: string }
        if (statusCode === 201 && typeof answer.id === 'string') acknowledged.push(answer.id)
      } catch {
        return // the server is gone: what was not acknowledged may or may not be stored
      }
    }
  }
  const clients = Array.from({ length: CLIENTS }, async (_, index) => { await client(index) })
  // Killed once enough writes went through for the WAL to have been checkpointed several times over.
  while (acknowledged.length < 3000 && child.exitCode === null) await new Promise(resolve => setTimeout(resolve, 20))
  child.kill('SIGKILL')
  await exited
  stop = true
  await Promise.all(clients)

  // Read as the next start would: a plain connection recovers the WAL the killed process left.
  const database = new SqliteDatabase(file)
  t.teardown(() => database.close())
  const rows = database.prepare("select id from portfolios where user_id = 'kill'").all() as Array<{ id: string }>
  const stored = new Set(rows.map(row => row.id))
  t.ok(acknowledged.length >= 3000, `${acknowledged.length} creates acknowledged before the kill`)
  const lost = acknowledged.filter(id => !stored.has(id))
  t.same(lost, [], 'no acknowledged create lost')
})

t.test('SQLite file: under writes that never pause the WAL is rewound near its limit, emptied at close', async t => {
  const file = join(mkdtempSync(join(tmpdir(), 'bff-wal-')), 'bff.sqlite')
  const store = await Store.open(`sqlite:${file}`)
  const walSize = (): number => { try { return statSync(`${file}-wal`).size } catch { return 0 } }
  const CREATES = 20_000
  let created = 0
  let largest = 0
  // 50 writers at once: a write always begins before the checkpointer catches up with the last one.
  await Promise.all(Array.from({ length: 50 }, async () => {
    while (created < CREATES) {
      created++
      await store.portfolios.create({ name: `WAL ${created}`, userId: 'wal' })
      largest = Math.max(largest, walSize())
    }
  }))
  // Unbounded, 20 000 creates leave about 160 MB of WAL; rewound, it stays near its 32 MiB limit.
  t.ok(largest < 96 * 1024 * 1024, `the WAL peaked at ${(largest / 1048576).toFixed(1)} MiB`)
  await store.close()
  t.equal(walSize(), 0, 'a closed store leaves no WAL behind')
})
