import t from 'tap'
import { execFile } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { promisify } from 'node:util'
import { fileURLToPath } from 'node:url'
import { imageCommand, tymon } from './helper.js'
import { copyProject, startServer } from './fixtures/processes.js'

/**
 * The project as others get it: `npm pack`'s tarball installed in a host app, the start scripts
 * reading `.env`, and dist/ on production dependencies alone. Everything runs in a copy of the
 * project (sources, configurations, package.json, README) built with `npm run build` there, never
 * in place, so no other suite's dist/ is rewritten under it. Installs come from npm's cache.
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

let built: Promise<string> | undefined
/** A copy of the project with node_modules linked, built once by its own `npm run build`. */
async function builtCopy (): Promise<string> {
  built ??= (async () => {
    const copy = copyProject(join(scratch, 'project'))
    await run('npm', ['run', '--silent', 'build'], copy)
    return copy
  })()
  return await built
}

let packed: Promise<{ tarball: string, files: string[] }> | undefined
async function packedTarball (): Promise<{ tarball: string, files: string[] }> {
  packed ??= (async () => {
    const copy = await builtCopy()
    const reports = JSON.parse(await run('npm', ['pack', '--json', '--pack-destination', scratch], copy)) as
      Array<{ filename: string, files: Array<{ path: string }> }>
    const [report] = reports
    if (report === undefined) throw new Error('npm pack reported nothing')
    return { tarball: join(scratch, report.filename), files: report.files.map(file => file.path) }
  })()
  return await packed
}

t.test('npm pack ships dist/ with its declarations, package.json and the README: no sources or tests', async t => {
  const { files } = await packedTarball()
  t.same(files.filter(path => !path.startsWith('dist/')).sort(), ['README.md', 'package.json'])
  const expected = ['dist/index.js', 'dist/index.d.ts', 'dist/server.js', 'dist/plugins/auth.d.ts', 'dist/cli/token.js']
  for (const path of expected) {
    t.ok(files.includes(path), `${path} is shipped`)
  }
  t.ok(files.some(path => path.startsWith('dist/chunks/')), 'the server bundle\'s chunks are shipped')
  t.notOk(files.some(path => /\.test\.|^src\/|^test\/|^bench\//.test(path)), 'nothing but the build')
})

/** A host's own Fastify app: the package's auth and portfolios plugins under its prefix, beside its own route. */
const HOST_APP = `import Fastify from 'fastify'
import { authPlugin, portfoliosPlugin, providerConfig, storePlugin, type AuthPluginOptions } from '${pkg.name}'

const auth: AuthPluginOptions = {
  jwtSecret: 'a host secret of at least thirty-two characters',
  jwtAlgorithm: 'HS256',
  leewaySeconds: 0,
  providers: providerConfig({ user: 'App\\\\Models\\\\User', client: 'App\\\\Models\\\\User\\\\Client' }),
  apiKeys: ['host-key']
}
const app = Fastify()
await app.register(storePlugin, { url: 'sqlite::memory:' })
await app.register(authPlugin, auth)
await app.register(portfoliosPlugin, { prefix: '/host/carteiras' })
app.get('/host/own', async () => ({ own: true }))
await app.ready()

const key = { 'x-api-key': 'host-key' }
const created = await app.inject({
  method: 'POST', url: '/host/carteiras', headers: key, payload: { name: 'Hosted', userId: 'h' }
})
const id: string = created.json().id
const read = await app.inject({ method: 'GET', url: '/host/carteiras/' + id, headers: key })
const refused = await app.inject({ method: 'GET', url: '/host/carteiras/' + id, headers: { 'x-api-key': 'other' } })
const own = await app.inject({ method: 'GET', url: '/host/own' })
const elsewhere = await app.inject({ method: 'GET', url: '/portfolios/' + id, headers: key })
console.log(JSON.stringify({
  created: created.statusCode,
  read: [read.statusCode, read.json()],
  refused: refused.statusCode,
  own: [own.statusCode, own.json()],
  elsewhere: elsewhere.statusCode
}))
await app.close()
`

type Dependencies = Record<string, string>
type LockEntry = Record<string, unknown> &
  { dependencies?: Dependencies, optionalDependencies?: Dependencies, peerDependencies?: Dependencies }

/**
 * The host's package.json and lock: the tarball plus fastify (the package's peer), every other
 * package at the version this project's lock pins. Resolving version ranges would need registry
 * metadata that `npm ci` never caches, so a lock keeps the install offline and the same each run.
 */
function hostManifests (tarball: string): { manifest: object, lock: object } {
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
  for (const name of [...Object.keys(pkg.dependencies), ...Object.keys(pkg.peerDependencies)]) visit(locate(name, ''))
  const dependencies = { [pkg.name]: `file:${basename(tarball)}`, fastify: pkg.peerDependencies.fastify ?? '' }
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

t.test('a host app installs the tarball beside fastify, type-checks against it and mounts two plugins', async t => {
  const { tarball } = await packedTarball()
  const host = join(scratch, 'host')
  mkdirSync(host)
  cpSync(tarball, join(host, basename(tarball)))
  const { manifest, lock } = hostManifests(tarball)
  writeFileSync(join(host, 'package.json'), JSON.stringify(manifest))
  writeFileSync(join(host, 'package-lock.json'), JSON.stringify(lock))
  await run('npm', ['ci', ...INSTALL], host)
  const installed = JSON.parse(readFileSync(join(host, 'node_modules', pkg.name, 'package.json'), 'utf8')) as
    { version: string, peerDependencies: object }
  t.equal(installed.version, pkg.version)
  t.same(installed.peerDependencies, { fastify: pkg.peerDependencies.fastify }, 'the host brings fastify (a peer)')

  writeFileSync(join(host, 'host.ts'), HOST_APP)
  writeFileSync(join(host, 'tsconfig.json'), JSON.stringify({
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: []
    },
    files: ['host.ts']
  }))
  const typeErrors = await run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', host], host)
    .then(() => '', (error: { stdout: string }) => error.stdout)
  t.equal(typeErrors, '', 'the host type-checks against the shipped declarations')

  // Node 24 runs the host's TypeScript itself (type stripping).
  const answers = JSON.parse(await run(process.execPath, ['host.ts'], host)) as Record<string, unknown>
  t.match(answers, {
    created: 201,
    read: [200, { name: 'Hosted', userId: 'h', totalValue: 0, assets: [] }],
    refused: 401,
    own: [200, { own: true }],
    elsewhere: 404
  })
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
