import t from 'tap'
import { execFile, spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { promisify } from 'node:util'
import { setTimeout } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { imageCommand, testNeeding, tymon } from './helper.js'
import { copyProject, startServer } from './fixtures/processes.js'
import { readmeReuseExample } from './fixtures/readme.js'
import { checkDocument, checkHostRoutes, checkPortfolioRoutes } from './fixtures/reused-routes.js'

/**
 * The project as others get it: `npm pack`'s tarball installed in a host app, the start scripts
 * reading `.env`, and dist/ on production dependencies alone. Everything runs in a copy of the
 * project laid out as a fresh clone after `npm ci` (sources, configurations, package.json, README;
 * no dist/), packed there — `npm pack` builds first (`prepack`) — never in place, so no other
 * suite's dist/ is rewritten under it. Installs come from npm's cache.
 */
const root = fileURLToPath(new URL('..', import.meta.url))
const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as {
  name: string
  version: string
  scripts: Record<string, string>
  dependencies: Record<string, string>
  peerDependencies: Record<string, string | undefined>
}
// Several builds and installs: more than the per-file default on a busy machine.
t.setTimeout(600_000)

const scratch = mkdtempSync(join(tmpdir(), 'bff-package-'))
t.teardown(() => { rmSync(scratch, { recursive: true, force: true }) })

/** npm and node as a developer runs them: the PATH (Node 24 first) and HOME (npm's cache), no test variables. */
const toolEnv = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' }
const INSTALL = ['--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts']

async function run (command: string, args: string[], cwd: string): Promise<string> {
  const { stdout } = await promisify(execFile)(command, args, { cwd, env: toolEnv, maxBuffer: 64 * 1024 * 1024 })
  return stdout
}

const copy = copyProject(join(scratch, 'project'))

let packed: Promise<{ tarball: string, files: string[] }> | undefined
/** `npm pack` in the fresh copy: its `prepack` builds dist/, which the tarball ships. */
async function packedTarball (): Promise<{ tarball: string, files: string[] }> {
  packed ??= (async () => {
    // npm prints the build's output before the report: the report is the JSON at the end.
    const output = await run('npm', ['pack', '--json', '--pack-destination', scratch], copy)
    const reports = JSON.parse(output.slice(output.lastIndexOf('\n[') + 1)) as
      Array<{ filename: string, files: Array<{ path: string }> }>
    const [report] = reports
    if (report === undefined) throw new Error('npm pack reported nothing')
    return { tarball: join(scratch, report.filename), files: report.files.map(file => file.path) }
  })()
  return await packed
}

/** The fresh copy, built by its `npm pack`. */
async function builtCopy (): Promise<string> {
  await packedTarball()
  return copy
}

t.test('npm pack on a fresh clone builds, and ships dist/ with its declarations, package.json and the README: ' +
  'no sources or tests', async t => {
  t.notOk(existsSync(join(copy, 'dist')), 'nothing built before npm pack')
  const { files } = await packedTarball()
  t.same(files.filter(path => !path.startsWith('dist/')).sort(), ['README.md', 'package.json'])
  const expected = [
    'dist/index.js', 'dist/index.d.ts', 'dist/server.js', 'dist/plugins/auth.d.ts', 'dist/cli/token.js',
    // Loaded by path at run time (a worker thread's program), not imported: nothing else would show it missing.
    'dist/store/checkpoint-worker.js',
    // Read by path too: GraphiQL's page and the browser builds it loads (src/modules/graphql/graphiql.ts).
    'dist/graphiql/graphiql.js', 'dist/graphiql/graphiql.css', 'dist/graphiql/react.js', 'dist/graphiql/react-dom.js'
  ]
  for (const path of expected) {
    t.ok(files.includes(path), `${path} is shipped`)
  }
  t.ok(files.some(path => path.startsWith('dist/chunks/')), 'the server bundle\'s chunks are shipped')
  t.notOk(files.some(path => /\.test\.|^src\/|^test\/|^bench\//.test(path)), 'nothing but the build')
})

/**
 * The scratch host's program: the README's example as it is written (its values from the
 * environment), then the host's own route, listening on a free port, and the OpenAPI document
 * @fastify/swagger makes for the host written out.
 */
const HOST_APP = `${readmeReuseExample()}
import { writeFileSync } from 'node:fs'
import { hostRoutes } from './host-routes.ts'

hostRoutes(app)
const address = await app.listen({ host: '127.0.0.1', port: 0 })
writeFileSync('openapi.json', JSON.stringify(app.swagger()))
console.log('Server listening at ' + address)
`

/**
 * A second program of the scratch host: the portfolios module alone, on the store and auth, with
 * neither quotes nor the change feed (the valuation module is the one that needs them).
 */
const PORTFOLIOS_ALONE = `import Fastify from 'fastify'
import { authPlugin, portfoliosPlugin, providerConfig, storePlugin } from '${pkg.name}'

const app = Fastify()
await app.register(storePlugin, { url: process.env.DATABASE_URL! })
await app.register(authPlugin, {
  jwtSecret: process.env.JWT_SECRET!,
  jwtAlgorithm: 'HS256',
  leewaySeconds: 0,
  providers: providerConfig({ user: 'App\\\\Models\\\\User', client: 'App\\\\Models\\\\User\\\\Client' }),
  apiKeys: process.env.API_KEYS!.split(',')
})
await app.register(portfoliosPlugin, { prefix: '/carteiras' })
const address = await app.listen({ host: '127.0.0.1', port: 0 })
console.log('Server listening at ' + address)
`

type Dependencies = Record<string, string>
type LockEntry = Record<string, unknown> &
  { dependencies?: Dependencies, optionalDependencies?: Dependencies, peerDependencies?: Dependencies }

/**
 * The host's package.json and lock: the tarball plus fastify (the package's peer), every other
 * package at the version this project's lock pins. Resolving version ranges would need registry
 * metadata that `npm ci` never caches, so a lock keeps the install offline and the same each run.
 */
function hostManifests (tarball: string, hostPackages: string[]): { manifest: object, lock: object } {
  const projectLock = readFileSync(`${root}package-lock.json`, 'utf8')
  const entries = (JSON.parse(projectLock) as { packages: Record<string, LockEntry> }).packages
  // Where Node would find `name` from the package at `from` (the lock's paths are node_modules paths).
  const locate = (name: string, from: string): string | undefined => {
    const parent = (path: string): string =>
      path.includes('/node_modules/') ? path.slice(0, path.lastIndexOf('/node_modules/')) : ''
    for (let base = from; ; base = parent(base)) {
      const candidate = `${base === '' ? '' : `${base}/`}node_modules/${name}`
      if (entries[candidate] !== undefined) return candidate
      if (base === '') return undefined
    }
  }
  const needed = new Set<string>()
  const visit = (path: string | undefined): void => {
    if (path === undefined || needed.has(path)) return
    needed.add(path)
    const entry = entries[path] ?? {}
    const names = Object.keys({ ...entry.dependencies, ...entry.optionalDependencies, ...entry.peerDependencies })
    for (const name of names) visit(locate(name, path))
  }
  const roots = [...Object.keys(pkg.dependencies), ...Object.keys(pkg.peerDependencies), ...hostPackages]
  for (const name of roots) visit(locate(name, ''))
  const dependencies = {
    [pkg.name]: `file:${basename(tarball)}`,
    fastify: pkg.peerDependencies.fastify ?? '',
    ...Object.fromEntries(hostPackages.map(name => [name, String(entries[`node_modules/${name}`]?.version)]))
  }
  const packages: Record<string, object> = {
    '': { name: 'host-app', dependencies },
    [`node_modules/${pkg.name}`]: {
      version: pkg.version,
      resolved: `file:${basename(tarball)}`,
      dependencies: pkg.dependencies,
      peerDependencies: pkg.peerDependencies
    }
  }
  for (const path of [...needed].sort()) {
    const { dev: _dev, devOptional: _devOptional, ...entry } = entries[path] ?? {}
    packages[path] = entry
  }
  return {
    manifest: { name: 'host-app', private: true, type: 'module', dependencies },
    lock: { name: 'host-app', lockfileVersion: 3, requires: true, packages }
  }
}

t.test('the README\'s example, installed from the tarball beside fastify and @fastify/swagger, type-checks and ' +
  'answers as the service does', async t => {
  const { tarball } = await packedTarball()
  const host = join(scratch, 'host')
  mkdirSync(host)
  cpSync(tarball, join(host, basename(tarball)))
  const { manifest, lock } = hostManifests(tarball, ['@fastify/swagger', '@types/node'])
  writeFileSync(join(host, 'package.json'), JSON.stringify(manifest))
  writeFileSync(join(host, 'package-lock.json'), JSON.stringify(lock))
  await run('npm', ['ci', ...INSTALL], host)
  const installed = JSON.parse(readFileSync(join(host, 'node_modules', pkg.name, 'package.json'), 'utf8')) as
    { version: string, peerDependencies: object }
  t.equal(installed.version, pkg.version)
  t.same(installed.peerDependencies, { fastify: pkg.peerDependencies.fastify }, 'the host brings fastify (a peer)')
  const fastifyManifest = readFileSync(join(host, 'node_modules/fastify/package.json'), 'utf8')
  const fastify = JSON.parse(fastifyManifest) as { version: string }
  t.equal(pkg.peerDependencies.fastify, `^${fastify.version}`, 'the peer range starts at the Fastify tested here')

  writeFileSync(join(host, 'host.ts'), HOST_APP)
  writeFileSync(join(host, 'portfolios-alone.ts'), PORTFOLIOS_ALONE)
  cpSync(fileURLToPath(new URL('./fixtures/host-routes.ts', import.meta.url)), join(host, 'host-routes.ts'))
  writeFileSync(join(host, 'tsconfig.json'), JSON.stringify({
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      noEmit: true,
      allowImportingTsExtensions: true,
      // The shipped declarations are checked too: every type they name comes with the package.
      skipLibCheck: false,
      types: ['node']
    },
    files: ['host.ts', 'portfolios-alone.ts']
  }))
  const typeErrors = await run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', host], host)
    .then(() => '', (error: { stdout: string }) => error.stdout)
  t.equal(typeErrors, '', 'the host type-checks against the shipped declarations')

  // Node 24 runs the host's TypeScript itself (type stripping). A SQLite file: the store starts
  // its checkpoint worker, a file of its own in the package.
  const database = join(host, 'host.sqlite')
  const server = await startServer(t, process.execPath, ['host.ts'], host, {
    ...toolEnv,
    DATABASE_URL: `sqlite:${database}`,
    JWT_SECRET: 'a host secret of at least thirty-two characters',
    API_KEYS: 'host-key-1,host-key-2'
  })
  await checkPortfolioRoutes(t, { origin: server.url, path: '/api/v2/carteiras', key: 'host-key-2' })
  await checkHostRoutes(t, server.url)
  await checkDocument(t, JSON.parse(readFileSync(join(host, 'openapi.json'), 'utf8')) as never, '/api/v2/carteiras')
  t.ok(existsSync(join(host, 'node_modules', pkg.name, 'dist/store/checkpoint-worker.js')), 'the worker is shipped')
  // The worker copies the WAL into the database file every 200 ms; without it the file keeps the
  // one page SQLite wrote when it created it until the host closes (the serving connection waits
  // for thousands of pages). Polled, with a bound far above any busy machine's delay.
  const polledUntil = Date.now() + 120_000
  while (statSync(database).size <= 4096 && Date.now() < polledUntil) await setTimeout(100)
  t.ok(statSync(database).size > 4096, 'the checkpoint worker runs in the host')

  // The portfolios module alone: it serves the portfolios without quotes or a change feed.
  const alone = await startServer(t, process.execPath, ['portfolios-alone.ts'], host, {
    ...toolEnv,
    DATABASE_URL: `sqlite:${join(host, 'alone.sqlite')}`,
    JWT_SECRET: 'a host secret of at least thirty-two characters',
    API_KEYS: 'host-key'
  })
  await checkPortfolioRoutes(t, { origin: alone.url, path: '/carteiras', key: 'host-key' })
})

t.test('dist/server.js serves on production dependencies alone, as in the image (fastify is bundled)', async t => {
  const copy = await builtCopy()
  const image = join(scratch, 'image')
  for (const entry of ['package.json', 'package-lock.json']) cpSync(join(copy, entry), join(image, entry))
  await run('npm', ['ci', '--omit=dev', ...INSTALL], image)
  cpSync(join(copy, 'dist'), join(image, 'dist'), { recursive: true })
  const [, ...args] = imageCommand()
  const server = await startServer(t, process.execPath, args, image, { ...toolEnv, ...productionEnv(image) })
  t.equal((await fetch(`${server.url}/ready`)).status, 200)
  const created = await fetch(`${server.url}/portfolios`, {
    method: 'POST',
    headers: { 'x-api-key': 'env-key', 'content-type': 'application/json' },
    body: '{"name":"Image","userId":"i"}'
  })
  t.equal(created.status, 201)
})

function productionEnv (dir: string): Record<string, string> {
  return {
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'info',
    JWT_SECRET: tymon.secret,
    API_KEYS: 'env-key',
    DATABASE_URL: `sqlite:${join(dir, 'bff.sqlite')}`,
    QUOTES_PROVIDER: 'offline',
    SHUTDOWN_DRAIN_MS: '0'
  }
}

t.test('npm start, start:prod and dev read .env in the project directory; the environment wins over it', async t => {
  t.equal(pkg.scripts.start, `npm run build && ${pkg.scripts['start:prod']}`, 'npm start is the build, then start:prod')
  const copy = await builtCopy()
  // Everything production needs comes from .env alone; RATE_LIMIT_MAX is also set in the environment.
  const dotenv = { ...productionEnv(copy), API_KEYS: 'dotenv-key', RATE_LIMIT_MAX: '77' }
  writeFileSync(join(copy, '.env'), Object.entries(dotenv).map(([name, value]) => `${name}=${value}`).join('\n') + '\n')
  for (const script of ['start:prod', 'dev']) {
    await t.test(`npm run ${script}`, async t => {
      const env = { ...toolEnv, RATE_LIMIT_MAX: '55' }
      const server = await startServer(t, 'npm', ['run', '--silent', script], copy, env)
      const create = async (key: string) => await fetch(`${server.url}/portfolios`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ name: script, userId: 'dotenv' })
      })
      const accepted = await create('dotenv-key')
      t.equal(accepted.status, 201, 'the API key of .env is accepted')
      t.equal(accepted.headers.get('x-ratelimit-limit'), '55', 'RATE_LIMIT_MAX from the environment, not .env')
      t.equal((await create('env-key')).status, 401, 'only the keys of .env')
    })
  }
})

/** The system's Node.js when it is older than the package supports (Debian's, here 20), or why there is none. */
const OLD_NODE = process.env.TEST_OLD_NODE ?? '/usr/bin/node'
const oldNodeMajor = existsSync(OLD_NODE)
  ? Number(/^v(\d+)/.exec(String(spawnSync(OLD_NODE, ['--version']).stdout))?.[1])
  : NaN
const NEEDS_OLD_NODE = oldNodeMajor < 22
  ? ''
  : `a Node.js older than 22 at ${OLD_NODE} (TEST_OLD_NODE=<path>; Debian's nodejs)`

testNeeding(t, 'on an unsupported Node.js the server, the CLI and a host importing the package each print one line ' +
  'and exit 1', [NEEDS_OLD_NODE], async t => {
  const { tarball } = await packedTarball()
  const host = join(scratch, 'host')
  if (!existsSync(join(host, 'node_modules', pkg.name))) {
    t.comment('the host of the README test is not installed: installing it')
    mkdirSync(host, { recursive: true })
    cpSync(tarball, join(host, basename(tarball)))
    const { manifest, lock } = hostManifests(tarball, [])
    writeFileSync(join(host, 'package.json'), JSON.stringify(manifest))
    writeFileSync(join(host, 'package-lock.json'), JSON.stringify(lock))
    await run('npm', ['ci', ...INSTALL], host)
  }
  writeFileSync(join(host, 'old-node-host.mjs'), `import { buildApp } from '${pkg.name}'\nconsole.log(buildApp)\n`)
  for (const [what, args, cwd] of [
    ['the server', ['dist/server.js'], copy],
    ['the CLI', ['dist/cli/token.js'], copy],
    ['a host importing the package', ['old-node-host.mjs'], host]
  ] as const) {
    const result = spawnSync(OLD_NODE, args, { cwd, env: toolEnv, encoding: 'utf8' })
    t.equal(result.status, 1, `${what}: exit 1`)
    const oneLine = /^bff-service needs Node\.js 22 or newer; this is Node\.js v\d+\.\d+\.\d+ \(.+\)\. [^\n]*\n$/
    t.match(result.stderr, oneLine, `${what}: one line saying what it needs`)
    t.equal(result.stdout, '', `${what}: nothing else ran`)
  }
})
