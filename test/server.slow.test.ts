import t, { type Test } from 'tap'
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { fixtureToken, tymon } from './helper.js'
import { startFakeLaravel } from './fixtures/fake-laravel.js'
import { closedPort, sendJson } from './fixtures/fake-server.js'
import { Store } from '../src/store/store.js'
import { listeningPort } from './fixtures/processes.js'

const serverEntry = fileURLToPath(new URL('../src/server.ts', import.meta.url))
const tokenEntry = fileURLToPath(new URL('../src/cli/token.ts', import.meta.url))
const tsx = import.meta.resolve('tsx')

/** Every process a test started; whatever still runs when the file ends (a failed or timed-out test) is killed. */
const started = new Set<ChildProcessWithoutNullStreams>()
t.teardown(() => { for (const child of started) if (child.exitCode === null) child.kill('SIGKILL') })

function run (entry: string, env: Record<string, string>, args: string[] = []): ChildProcessWithoutNullStreams {
  const cwd = mkdtempSync(join(tmpdir(), 'bff-server-'))
  const child = spawn(process.execPath, ['--import', tsx, entry, ...args], {
    cwd,
    env: {
      PATH: process.env.PATH ?? '',
      LOG_LEVEL: 'info',
      DATABASE_URL: 'sqlite::memory:',
      MAX_EVENT_LOOP_DELAY_MS: '0',
      ...env
    }
  })
  started.add(child)
  return child
}

function collect (
  child: ChildProcessWithoutNullStreams
): { out: () => string, err: () => string, exit: Promise<number | null> } {
  let out = ''
  let err = ''
  child.stdout.on('data', chunk => { out += String(chunk) })
  child.stderr.on('data', chunk => { err += String(chunk) })
  const exit = new Promise<number | null>(resolve => child.on('exit', code => resolve(code)))
  return { out: () => out, err: () => err, exit }
}

const listening = listeningPort

interface LogLine { level: number, msg: string, [field: string]: unknown }

/** Waits until `child` listens, stops it with SIGTERM (exit 0), and gives what it printed and its log lines. */
async function startAndStop (
  t: Test, child: ChildProcessWithoutNullStreams
): Promise<{ out: () => string, lines: LogLine[] }> {
  const { out, exit } = collect(child)
  await listening(child)
  child.kill('SIGTERM')
  t.equal(await exit, 0, 'exit 0 on SIGTERM')
  const lines = out().split('\n').filter(line => line.startsWith('{')).map(line => JSON.parse(line) as LogLine)
  return { out, lines }
}

t.test('production without secrets refuses to start with a one-line reason', async t => {
  const child = run(serverEntry, { NODE_ENV: 'production' })
  const { err, exit } = collect(child)
  t.equal(await exit, 1)
  t.equal(err().trim(), 'Production requires JWT_SECRET, API_KEYS, QUOTES_PROVIDER')
})

t.test('production: brapi without its token is refused naming BRAPI_TOKEN', async t => {
  const env = { NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(40), API_KEYS: 'k', QUOTES_PROVIDER: 'brapi' }
  const child = run(serverEntry, env)
  const { err, exit } = collect(child)
  t.equal(await exit, 1)
  t.equal(err().trim(), 'Production requires BRAPI_TOKEN (QUOTES_PROVIDER=brapi)')
})

t.test('start-up logs a configuration summary without secrets, and warns of offline quotes in production', async t => {
  const secret = 'production-jwt-secret-of-enough-length'
  const child = run(serverEntry, {
    NODE_ENV: 'production',
    PORT: '0',
    JWT_SECRET: secret,
    API_KEYS: 'production-api-key',
    QUOTES_PROVIDER: 'offline',
    CORS_ORIGINS: 'https://app.example',
    SHUTDOWN_DRAIN_MS: '0'
  })
  const { out, lines } = await startAndStop(t, child)
  const summaries = lines.filter(line => line.msg === 'configuration')
  t.equal(summaries.length, 1, 'one summary line')
  t.match(summaries[0], {
    level: 30,
    configuration: {
      environment: 'production',
      nodeVersion: process.version,
      store: 'sqlite (memory)',
      quotesProvider: 'offline',
      corsOrigins: ['https://app.example'],
      aggregatorConfigured: false,
      metricsPort: null
    }
  })
  const warnings = lines.filter(line => line.level === 40)
  t.equal(warnings.length, 1, 'one warning')
  t.match(warnings[0]?.msg, /^QUOTES_PROVIDER=offline in production: .*simulated/)
  t.notMatch(out(), secret)
  t.notMatch(out(), 'production-api-key')
})

t.test('an unreachable database stops start-up with one line naming DATABASE_URL, no stack, no password', async t => {
  const port = await closedPort(t)
  const child = run(serverEntry, {
    NODE_ENV: 'test',
    JWT_SECRET: 's',
    API_KEYS: 'k',
    DATABASE_URL: `postgres://bff:secret-password@127.0.0.1:${port}/bff`
  })
  const { err, exit } = collect(child)
  t.equal(await exit, 1)
  const lines = err().trim().split('\n')
  t.equal(lines.length, 1, 'one line')
  t.match(lines[0], /^Cannot open the database of DATABASE_URL \(postgres\): .*ECONNREFUSED/)
  t.notMatch(err(), 'secret-password')
})

t.test('a SQLite path that cannot be opened stops start-up with one line naming DATABASE_URL, no stack', async t => {
  const child = run(serverEntry, { NODE_ENV: 'test', JWT_SECRET: 's', API_KEYS: 'k', DATABASE_URL: 'sqlite:/tmp' })
  const { err, exit } = collect(child)
  t.equal(await exit, 1)
  t.match(err().trim().split('\n'), [/^Cannot open the database of DATABASE_URL \(sqlite\): \S.*$/])
  t.equal(err().trim().split('\n').length, 1, 'one line')
})

t.test('a SQLite file in a missing folder: created in development, refused in production', async t => {
  const folder = join(mkdtempSync(join(tmpdir(), 'bff-folder-')), 'missing', 'deeper')
  const production = run(serverEntry, {
    NODE_ENV: 'production',
    JWT_SECRET: tymon.secret,
    API_KEYS: 'k',
    QUOTES_PROVIDER: 'offline',
    DATABASE_URL: `sqlite:${folder}/bff.sqlite`
  })
  const refused = collect(production)
  t.equal(await refused.exit, 1)
  t.equal(refused.err().trim(),
    `Cannot open the database of DATABASE_URL (sqlite): the folder ${folder} does not exist`)

  const development = run(serverEntry, {
    NODE_ENV: 'development',
    PORT: '0',
    JWT_SECRET: tymon.secret,
    API_KEYS: 'k',
    DATABASE_URL: `sqlite:${folder}/bff.sqlite`
  })
  const created = collect(development)
  await listening(development)
  development.kill('SIGTERM')
  t.equal(await created.exit, 0, 'started on a folder it made')
})

t.test('a bad value stops start-up naming the variable', async t => {
  const child = run(serverEntry, { NODE_ENV: 'test', PORT: 'abc', JWT_SECRET: 's', API_KEYS: 'k' })
  const { err, exit } = collect(child)
  t.equal(await exit, 1)
  t.match(err(), /PORT/)
})

t.test('a misspelt variable is a warning at start naming the one it likely stands for, in development too', async t => {
  const child = run(serverEntry, {
    NODE_ENV: 'development',
    PORT: '0',
    SHUTDOWN_DRAIN_MS: '0',
    CORS_ORIGIN: 'https://app.example',
    DATBASE_URL: 'postgres://bff:database-password@db/bff'
  })
  const { out, lines } = await startAndStop(t, child)
  const warnings = lines.filter(line => line.level === 40)
  t.match(warnings, [
    { variable: 'CORS_ORIGIN', intended: 'CORS_ORIGINS', msg: /^CORS_ORIGIN is not a variable of the service/ },
    { variable: 'DATBASE_URL', intended: 'DATABASE_URL', msg: /did you mean DATABASE_URL\?$/ }
  ])
  t.equal(warnings.length, 2)
  t.notMatch(out(), 'database-password', 'never the value')
})

t.test('SIGTERM lets an in-flight request finish, then exits 0', async t => {
  const child = run(serverEntry, { NODE_ENV: 'test', PORT: '0', JWT_SECRET: tymon.secret, API_KEYS: 'k' })
  const { exit } = collect(child)
  const port = await listening(child)

  // A request whose body is still arriving when the signal comes.
  const body = JSON.stringify({ token: '' })
  const answer = new Promise<{ status: number, text: string }>((resolve, reject) => {
    const req = request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/auth/validate-token',
      headers: { 'content-type': 'application/json', 'content-length': body.length }
    }, res => {
      let text = ''
      res.on('data', chunk => { text += String(chunk) })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }))
    })
    req.on('error', reject)
    req.write(body.slice(0, 3))
    setTimeout(() => {
      child.kill('SIGTERM')
      setTimeout(() => req.end(body.slice(3)), 300)
    }, 200)
  })
  const res = await answer
  t.equal(res.status, 200)
  t.same(JSON.parse(res.text), { valid: false, error: 'Token não fornecido' })
  t.equal(await exit, 0)
})

t.test('development start prints its generated secrets with a warning, and npm run token uses them', async t => {
  const cwd = mkdtempSync(join(tmpdir(), 'bff-dev-'))
  const env = { PATH: process.env.PATH ?? '', PORT: '0', DATABASE_URL: 'sqlite::memory:' }
  const server = spawn(process.execPath, ['--import', tsx, serverEntry], { cwd, env })
  started.add(server)
  const { err, exit } = collect(server)
  const port = await listening(server)
  t.match(err(), /WARNING: development secrets/)
  t.match(err(), /JWT_SECRET=\S{32,}/)
  t.match(err(), /API_KEYS=dev-\S+/)

  const minted = spawn(process.execPath, ['--import', tsx, tokenEntry, '--type', 'client'], { cwd, env })
  const token = collect(minted)
  t.equal(await token.exit, 0)
  const res = await fetch(`http://127.0.0.1:${port}/auth/client/dashboard`, {
    headers: { authorization: `Bearer ${token.out().trim()}` }
  })
  t.equal(res.status, 200)
  t.match(await res.json(), { clientId: '1', userType: 'client' })

  const userToken = spawn(process.execPath, ['--import', tsx, tokenEntry, '--type', 'user'], { cwd, env })
  const user = collect(userToken)
  await user.exit
  const forbidden = await fetch(`http://127.0.0.1:${port}/auth/client/dashboard`, {
    headers: { authorization: `Bearer ${user.out().trim()}` }
  })
  t.equal(forbidden.status, 403)

  const bad = spawn(process.execPath, ['--import', tsx, tokenEntry, '--type', 'admin'], { cwd, env })
  const badRun = collect(bad)
  t.equal(await badRun.exit, 1)
  t.match(badRun.err(), /--type must be user or client/)

  server.kill('SIGINT')
  t.equal(await exit, 0)
})

function send (
  port: number, method: string, path: string, headers: Record<string, string>, body?: string, holdBody = false
): { done: Promise<{ status: number, text: string }>, finish: () => void } {
  let finish = (): void => {}
  const done = new Promise<{ status: number, text: string }>((resolve, reject) => {
    const req = request({
      host: '127.0.0.1',
      port,
      method,
      path,
      headers: {
        ...headers,
        ...(body === undefined
          ? {}
          : {
              'content-type': 'application/json',
              'content-length': String(Buffer.byteLength(body))
            })
      }
    }, res => {
      let text = ''
      res.on('data', chunk => { text += String(chunk) })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }))
    })
    req.on('error', reject)
    if (body === undefined) { req.end(); return }
    if (!holdBody) { req.end(body); return }
    req.write(body.slice(0, 5))
    finish = () => { req.end(body.slice(5)) }
  })
  return { done, finish }
}

/** Polls /ready until its status is no longer `from` (the child handles signals when the machine lets it). */
async function readyStatusOnceChanged (port: number, from: number): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const { status } = await send(port, 'GET', '/ready', {}).done
    if (status !== from) return status
    await new Promise(resolve => setTimeout(resolve, 20))
  }
  return from
}

t.test('SIGTERM: /ready turns 503, a slow relay and a write in flight complete, ' +
  'the write is stored, exit 0', async t => {
  const laravel = await startFakeLaravel(t)
  laravel.on('/api/user/profile', async (_req, res) => {
    await new Promise(resolve => setTimeout(resolve, 1500))
    sendJson(res, 200, { slow: true })
  })
  const file = join(mkdtempSync(join(tmpdir(), 'bff-shutdown-')), 'bff.sqlite')
  const child = run(serverEntry, {
    NODE_ENV: 'test',
    PORT: '0',
    JWT_SECRET: tymon.secret,
    API_KEYS: 'k',
    BACKEND_URL: laravel.url,
    DATABASE_URL: `sqlite:${file}`,
    SHUTDOWN_DRAIN_MS: '2000'
  })
  const { exit } = collect(child)
  const port = await listening(child)
  t.equal((await send(port, 'GET', '/ready', {}).done).status, 200)

  const slow = send(port, 'GET', '/backend-api/user/profile', {
    authorization: `Bearer ${fixtureToken('valid_user').token}`
  })
  const write = send(
    port,
    'POST',
    '/portfolios',
    { 'x-api-key': 'k' },
    JSON.stringify({ name: 'Written during shutdown', userId: 'sig' }),
    true
  )
  await new Promise(resolve => setTimeout(resolve, 300))
  child.kill('SIGTERM')
  t.equal(await readyStatusOnceChanged(port, 200), 503, 'draining: the balancer is told to stop sending')
  write.finish()

  const [slowAnswer, writeAnswer] = await Promise.all([slow.done, write.done])
  t.equal(slowAnswer.status, 200, 'the slow relay finished')
  t.same(JSON.parse(slowAnswer.text), { slow: true })
  t.equal(writeAnswer.status, 201, 'the write finished')
  t.equal(await exit, 0, 'exit 0: the shutdown finished before its 10 s deadline')

  const store = await Store.open(`sqlite:${file}`)
  t.teardown(() => store.close())
  const stored = await store.portfolios.list({ userId: 'sig' }, { limit: 10, offset: 0 })
  t.same(stored.map(p => p.name), ['Written during shutdown'], 'the acknowledged write is in the store')
})
