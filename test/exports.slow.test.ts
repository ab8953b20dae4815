import t from 'tap'
import { execFile } from 'node:child_process'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { promisify } from 'node:util'
import { fileURLToPath, pathToFileURL } from 'node:url'

import { SERVICE_VERSION } from '../src/app.js'

const root = fileURLToPath(new URL('..', import.meta.url))

t.test('the package builds to what package.json exports, with type declarations', async t => {
  const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as {
    version: string
    exports: { '.': { types: string, default: string } }
  }
  t.same(pkg.exports['.'], { types: './dist/index.d.ts', default: './dist/index.js' })
  t.equal(pkg.version, SERVICE_VERSION, 'the documented API version is the package version')
  // Inside the project, so the build resolves its dependencies like the published one would.
  const out = `${root}.tap/exports-build`
  rmSync(out, { recursive: true, force: true })
  t.teardown(() => rmSync(out, { recursive: true, force: true }))
  await promisify(execFile)(process.execPath, [
    `${root}node_modules/typescript/bin/tsc`,
    '-p',
    `${root}tsconfig.build.json`,
    '--outDir',
    out
  ])
  t.ok(existsSync(`${out}/index.d.ts`), 'declarations are built')
  const declarations = readFileSync(`${out}/index.d.ts`, 'utf8')
  for (const name of [
    'authPlugin',
    'portfoliosPlugin',
    'portfolioAssetsPlugin',
    'storePlugin',
    'buildApp',
    'AuthPluginOptions'
  ]) {
    t.match(declarations, name, `${name} is declared`)
  }
  // Imported in a process of its own: the build's source maps point at src/, and its unused
  // code would otherwise count against src/ in this run's coverage.
  const probe = `const m = await import(${JSON.stringify(pathToFileURL(`${out}/index.js`).href)}); ` +
    'console.log(JSON.stringify(Object.fromEntries(Object.entries(m).map(([k, v]) => [k, typeof v]))))'
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', probe], {
    env: { PATH: process.env.PATH ?? '' }
  })
  const built = JSON.parse(stdout) as Record<string, string>
  for (const name of [
    'authPlugin',
    'portfoliosPlugin',
    'portfolioValuationPlugin',
    'portfolioAssetsPlugin',
    'excludedTransactionsPlugin',
    'backendApiPlugin',
    'aggregatorPlugin',
    'systemPlugin',
    'authRoutesPlugin',
    'storePlugin',
    'quotesPlugin',
    'upstreamsPlugin',
    'changeFeedPlugin',
    'lifecyclePlugin',
    'buildApp',
    'loadConfig'
  ]) {
    t.equal(built[name], 'function', `${name} is exported`)
  }
  t.equal(built.securitySchemes, 'object', 'the OpenAPI security schemes, for hosts that assemble their own document')
})
