import t from 'tap'
import { execFile } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { apiKey, tymon } from './helper.js'
import { startFakeBrapi } from './fixtures/fake-brapi.js'
import { startFakeLaravel } from './fixtures/fake-laravel.js'
import { startFakePluggy } from './fixtures/fake-pluggy.js'
import { copyProject, startServer, type StartedServer } from './fixtures/processes.js'
import { readmeProductionCommand } from './fixtures/readme.js'

/**
 * The README's production command, run as an operator runs it, in a copy of the project laid out
 * like a fresh clone after `npm ci` that followed the Quick start (`.env` copied from
 * `.env.example`): it builds, starts and serves. The same `.env` with what an operator might try
 * instead (`NODE_ENV=production JWT_SECRET=… API_KEYS=k1 npm run start:prod`) does not start.
 */
t.setTimeout(600_000)

const scratch = mkdtempSync(join(tmpdir(), 'bff-production-'))
t.teardown(() => { rmSync(scratch, { recursive: true, force: true }) })
const project = copyProject(join(scratch, 'project'))
copyFileSync(join(project, '.env.example'), join(project, '.env'))
// The operator's volume exists: production never creates a missing folder for its SQLite file.
mkdirSync(join(scratch, 'volume'))

/** npm and node as an operator's shell has them: the PATH (Node 24 first) and HOME, nothing of the tests. */
const shellEnv = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' }

/** What the test puts where the README writes `…`: the secrets and addresses an operator has. */
const PLACEHOLDERS: Record<string, string> = {
  JWT_SECRET: tymon.secret,
  API_KEYS: 'readme-key-1,readme-key-2',
  DATABASE_URL: `sqlite:${join(scratch, 'volume', 'bff.sqlite')}`,
  BRAPI_TOKEN: 'readme-brapi-token'
}

/** The README's lines with each `NAME=…` (or `NAME=postgres://…`) given the test's value: nothing else changes. */
function withValues (lines: string[]): string {
  return lines.map(line => line.replace(/\b([A-Z][A-Z0-9_]*)=(\S*…\S*)/g, (_, name: string) => {
    const value = PLACEHOLDERS[name]
    if (value === undefined) throw new Error(`the README's command has ${name}=… and this test has no value for it`)
    return `${name}='${value}'`
  })).join('\n')
}

t.test('the README\'s production command builds, starts in production and serves', async t => {
  const script = withValues(readmeProductionCommand())
  const brapi = await startFakeBrapi(t)
  brapi.prices.set('PETR4', 37.5)
  const laravel = await startFakeLaravel(t)
  const pluggy = await startFakePluggy(t)
  // Where to listen (a free port) and the upstreams (fakes on 127.0.0.1) come from the environment,
  // as a container's would: the README's text is run as it is written.
  const env = {
    ...shellEnv,
    HOST: '127.0.0.1',
    PORT: '0',
    SHUTDOWN_DRAIN_MS: '0',
    BRAPI_URL: brapi.url,
    BACKEND_URL: laravel.url,
    AGGREGATOR_URL: pluggy.url
  }
  const server = await startServer(t, 'sh', ['-ec', script], project, env)
  t.equal((await fetch(`${server.url}/ready`)).status, 200, 'ready')
  const key = { 'x-api-key': 'readme-key-2' }
  const created = await fetch(`${server.url}/portfolios`, {
    method: 'POST',
    headers: { ...key, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'README', userId: 'operator' })
  })
  t.equal(created.status, 201, 'the API keys of the command are the ones accepted')
  const quote = await fetch(`${server.url}/portfolio-assets/price/PETR4`, { headers: key })
  t.match(await quote.json(), { symbol: 'PETR4', price: 37.5 }, 'market prices from brapi')
  t.equal(brapi.received.at(-1)?.headers.authorization, 'Bearer readme-brapi-token', 'with the token of the command')
  t.equal((await fetch(`${server.url}/portfolios?userId=operator`, { headers: apiKey() })).status, 401,
    'and only those')
  t.equal((await fetch(`${server.url}/reset`, { method: 'POST' })).status, 404, 'no development route')
  const lines = server.output().split('\n').filter(line => line.startsWith('{'))
    .map(line => JSON.parse(line) as { level: number, msg: string, configuration?: unknown })
  t.match(lines.find(line => line.msg === 'configuration'), {
    configuration: { environment: 'production', store: 'sqlite', quotesProvider: 'brapi' }
  }, 'production, on the store and the quote provider of the command, whatever .env says')
  t.same(lines.filter(line => line.level >= 40).map(line => line.msg), [], 'no warning: nothing of .env looks misspelt')
})

t.test('a .env copied from .env.example does not make production start', async t => {
  const run = promisify(execFile)('sh', ['-c', `NODE_ENV=production JWT_SECRET='${tymon.secret}' API_KEYS=k1 ` +
    'npm run --silent start:prod'], { cwd: project, env: shellEnv })
  const failed = await run.then(() => undefined, (error: { code: number, stderr: string }) => error)
  t.equal(failed?.code, 1, 'exit 1')
  t.equal(failed?.stderr.trim(), 'Production requires DATABASE_URL, QUOTES_PROVIDER', 'one line naming what is missing')
})

/** Whether any process of the group `pgid` is left (signal 0 checks without sending anything). */
function groupAlive (pgid: number): boolean {
  try {
    process.kill(-pgid, 0)
    return true
  } catch {
    return false
  }
}

/** What the service logged of its shutdown, once the command exited. */
function shutdownLines (server: StartedServer): Array<{ msg: string, signal?: string }> {
  return server.output().split('\n').filter(line => line.startsWith('{'))
    .map(line => JSON.parse(line) as { msg: string, signal?: string })
    .filter(line => line.msg.startsWith('shutting down') || line.msg === 'shutdown complete')
}

/**
 * The npm scripts an operator may start with a process manager drain like `node dist/server.js`: the
 * signal reaches node whether the manager signals npm alone (Docker, Kubernetes: npm is PID 1) or
 * the whole process group (systemd's default, pm2's tree kill, a terminal's Ctrl-C), and nothing is
 * left running after npm exits.
 */
const productionEnv = {
  ...shellEnv,
  NODE_ENV: 'production',
  HOST: '127.0.0.1',
  PORT: '0',
  SHUTDOWN_DRAIN_MS: '200',
  JWT_SECRET: tymon.secret,
  API_KEYS: 'k1',
  DATABASE_URL: 'sqlite::memory:',
  QUOTES_PROVIDER: 'offline'
}
for (const [script, target, signal] of [
  ['start:prod', 'npm alone', 'SIGTERM'],
  ['start:prod', 'the process group', 'SIGTERM'],
  ['start', 'the process group', 'SIGINT']
] as const) {
  t.test(`npm run ${script}: ${signal} to ${target} drains, exits 0 and leaves no process`, async t => {
    const env = script === 'start' ? { ...productionEnv, NODE_ENV: 'development' } : productionEnv
    const server = await startServer(t, 'npm', ['run', script], project, env)
    t.equal((await fetch(`${server.url}/ready`)).status, 200, 'ready')
    process.kill(target === 'npm alone' ? server.pid : -server.pid, signal)
    t.equal(await server.exited, 0, 'npm exits 0, node\'s status')
    t.notOk(groupAlive(server.pid), 'no node left behind')
    await t.rejects(fetch(`${server.url}/ready`), 'nothing listens any more')
    t.match(shutdownLines(server), [
      { msg: 'shutting down: draining, then finishing in-flight requests', signal },
      { msg: 'shutdown complete', signal }
    ], 'one shutdown, drained, then complete')
  })
}
