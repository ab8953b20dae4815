import t, { type Test } from 'tap'
import { execFile, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { fileURLToPath } from 'node:url'
import {
  NEEDS_POSTGRES,
  TEST_API_KEYS,
  apiKey,
  fixtureToken,
  freshDatabase,
  imageCommand,
  testNeeding,
  tymon,
  type Engine
} from './helper.js'
import { LARAVEL_USER, startFakeLaravel } from './fixtures/fake-laravel.js'
import { IMAGE_NODE_FLAGS } from '../bench/lib.js'

/**
 * What operators run: the compiled `dist/server.js`, started exactly as the Docker image's CMD
 * says, on the project's Node (the Node the Dockerfile pins), in production, on each engine.
 */
const root = fileURLToPath(new URL('..', import.meta.url))
const dockerfile = readFileSync(`${root}Dockerfile`, 'utf8')
const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as {
  devDependencies: Record<string, string>
  scripts: Record<string, string>
}

t.test('the Dockerfile, package.json and the Node running the tests are one Node 24 release', async t => {
  const pinned = /^FROM node:(\d+\.\d+\.\d+)-/m.exec(dockerfile)?.[1]
  t.equal(pinned, pkg.devDependencies.node, 'the image pins the node package of package.json')
  t.equal(process.version, `v${pkg.devDependencies.node}`, 'npm scripts run on that Node')
  t.equal(process.versions.node.split('.')[0], '24')
  for (const from of dockerfile.matchAll(/^FROM node:(\S+)/gm)) {
    t.equal(from[1]?.split('-')[0], pinned, `every stage: ${from[0]}`)
  }
})

t.test('npm start and the benchmarks start Node with the flags of the image', async t => {
  const [command, ...args] = imageCommand()
  t.equal(command, 'node', 'the image runs node')
  t.equal(args.at(-1), 'dist/server.js', 'on the bundled entry')
  const flags = args.slice(0, -1)
  t.ok(flags.length > 0, 'the image sets its heap flags')
  // `exec`: npm's child is node itself, which a process manager's signal reaches (docs/deploy.md#build-and-run).
  const startProd = ['exec', 'node', '--env-file-if-exists=.env', ...flags, 'dist/server.js'].join(' ')
  t.equal(pkg.scripts['start:prod'], startProd, 'npm run start:prod (and npm start after its build)')
  t.same(IMAGE_NODE_FLAGS, flags, 'the benchmarks (bench/lib.ts)')
})

// Built once for both engines by the image's build command, in place: dist/ beside node_modules, as in /app.
let built: Promise<unknown> | undefined
async function buildImageLayout (): Promise<void> {
  built ??= promisify(execFile)('npm', ['run', '--silent', 'build'], { cwd: root })
  await built
}

async function startStop (t: Test, engine: Engine): Promise<void> {
  await buildImageLayout()
  const database =
    engine === 'sqlite'
      ? { DATABASE_URL: `sqlite:${join(mkdtempSync(join(tmpdir(), 'bff-image-')), 'bff.sqlite')}` }
      : (await freshDatabase(t, engine)).env
  const laravel = await startFakeLaravel(t)
  const [command, ...args] = imageCommand()
  t.equal(command, 'node', 'the image runs node')
  t.ok(args.includes('dist/server.js'), 'the bundled entry')
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'info',
      JWT_SECRET: tymon.secret,
      API_KEYS: TEST_API_KEYS.join(','),
      ...database,
      BACKEND_URL: laravel.url,
      QUOTES_PROVIDER: 'offline',
      SHUTDOWN_DRAIN_MS: '0'
    }
  })
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  let out = ''
  let err = ''
  child.stderr.on('data', chunk => { err += String(chunk) })
  const exit = new Promise<number | null>(resolve => child.on('exit', code => resolve(code)))
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.on('data', chunk => {
      out += String(chunk)
      const match = /Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(out)
      if (match !== null) resolve(Number(match[1]))
    })
    child.on('exit', code => reject(new Error(`exited ${String(code)} before listening: ${err}`)))
  })

  const base = `http://127.0.0.1:${port}`
  t.equal((await fetch(`${base}/ready`)).status, 200, 'ready')
  const created = await fetch(`${base}/portfolios`, {
    method: 'POST',
    headers: { ...apiKey(), 'content-type': 'application/json' },
    body: JSON.stringify({ name: `Image ${engine}`, userId: 'image' })
  })
  t.equal(created.status, 201, 'a write is served')
  const { id } = await created.json() as { id: string }
  const read = await fetch(`${base}/portfolios/${id}`, { headers: apiKey() })
  t.equal(read.status, 200, 'and read back')
  t.match(await read.json(), { id, name: `Image ${engine}`, totalValue: 0, assets: [] })

  // The parts of the bundle loaded on demand or from their packages: the relay client, GraphQL.
  const relayed = await fetch(`${base}/backend-api/user/profile`, {
    headers: { authorization: `Bearer ${fixtureToken('valid_user').token}` }
  })
  t.equal(relayed.status, 200, 'a relay is served')
  t.match(await relayed.json(), LARAVEL_USER)
  const graphql = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { ...apiKey(), 'content-type': 'application/json' },
    body: JSON.stringify({ query: `{ portfolio(id: "${id}") { name assets { id } } }` })
  })
  t.equal(graphql.status, 200, 'GraphQL is served')
  t.same(await graphql.json(), { data: { portfolio: { name: `Image ${engine}`, assets: [] } } })

  child.kill('SIGTERM')
  t.equal(await exit, 0, 'SIGTERM: exit 0')
  t.notMatch(err, /Assertion failed|Aborted|Segmentation/, 'no native crash on the way out')
  t.match(out, /"msg":"shutting down/, 'the shutdown is logged')
}

t.test('the build bundles dist/server.js: one file and lazy chunks, no import of the sources it bundles', async t => {
  await buildImageLayout()
  const entry = readFileSync(`${root}dist/server.js`, 'utf8')
  t.notMatch(entry, /from ["']\.\/app\.js["']/, 'the app is inside the entry, not imported file by file')
  t.match(entry, /import\(["']\.\/chunks\//, 'what only some configurations use stays in chunks loaded on demand')
})

t.test('dist/server.js as the image starts it, on a SQLite file: serves, takes SIGTERM, exits 0', async t => {
  await startStop(t, 'sqlite')
})
testNeeding(
  t,
  'dist/server.js as the image starts it, on PostgreSQL: serves, takes SIGTERM, exits 0',
  [NEEDS_POSTGRES],
  async t => {
    await startStop(t, 'postgres')
  }
)
