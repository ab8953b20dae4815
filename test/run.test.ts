import t, { type Test } from 'tap'
import { execFile } from 'node:child_process'
import { chmodSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'

const taprc = readFileSync(new URL('../.taprc', import.meta.url), 'utf8')

/**
 * test/run.mjs in a scratch project whose `tap` is a stand-in: it exits with TAP_STATUS and writes
 * the coverage summary tap would, so the wrapper's verdicts are checked without a nested tap run.
 */
function scratchProject (t: Test): string {
  const dir = t.testdir({ test: {}, node_modules: { '.bin': {} }, '.taprc': taprc })
  copyFileSync(new URL('./run.mjs', import.meta.url), join(dir, 'test/run.mjs'))
  const fakeTap = join(dir, 'node_modules/.bin/tap')
  writeFileSync(fakeTap, `#!/usr/bin/env node
const { mkdirSync, writeFileSync } = require('node:fs')
if (process.env.LINES !== 'none') {
  mkdirSync('.tap/report', { recursive: true })
  const pct = metric => ({ pct: metric === 'lines' ? Number(process.env.LINES) : 99 })
  const total = Object.fromEntries(['lines', 'statements', 'functions', 'branches'].map(m => [m, pct(m)]))
  writeFileSync('.tap/report/coverage-summary.json', JSON.stringify({ total }))
}
console.log('fake tap', process.argv.slice(2).join(' '))
process.exit(Number(process.env.TAP_STATUS))
`)
  chmodSync(fakeTap, 0o755)
  mkdirSync(join(dir, '.tap'), { recursive: true })
  return dir
}

async function runWrapper (
  dir: string, env: Record<string, string>, tapArgs = ['test/a.test.ts']
): Promise<{ code: number, stdout: string }> {
  const childEnv: Record<string, string | undefined> = { ...process.env, ...env }
  if (env.CI === undefined) delete childEnv.CI
  const args = [join(dir, 'test/run.mjs'), ...tapArgs]
  return await promisify(execFile)(process.execPath, args, { env: childEnv, cwd: dir })
    .then(({ stdout }) => ({ code: 0, stdout }),
      (error: { code: number, stdout: string }) => ({ code: error.code, stdout: error.stdout }))
}

t.test('under CI=true a coverage shortfall fails the run and says it is coverage', async t => {
  const dir = scratchProject(t)
  const low = await runWrapper(dir, { CI: 'true', TAP_STATUS: '0', LINES: '96.5' })
  t.equal(low.code, 1)
  t.match(low.stdout, /fake tap --allow-incomplete-coverage .*--coverage-report=json-summary test\/a\.test\.ts/)
  t.match(low.stdout, /coverage FAILED: under the floor of \.taprc: lines 96\.5 % < 98 %/)
  const enough = await runWrapper(dir, { CI: 'true', TAP_STATUS: '0', LINES: '98.2' })
  t.equal(enough.code, 0)
  t.match(enough.stdout, new RegExp('coverage: lines 98\\.2 % \\(floor 98 %\\), statements 99 % \\(floor 98 %\\), ' +
    'functions 99 % \\(floor 97 %\\), branches 99 % \\(floor 90 %\\)'))
  t.notMatch(enough.stdout, /FAILED|under the floor/)
  const none = await runWrapper(dir, { CI: 'true', TAP_STATUS: '0', LINES: 'none' })
  t.equal(none.code, 1, 'no coverage report under CI is a failure')
  t.match(none.stdout, /coverage: no report was written/)
})

t.test('outside CI a shortfall is reported, not enforced; failing tests fail either way', async t => {
  const dir = scratchProject(t)
  const low = await runWrapper(dir, { TAP_STATUS: '0', LINES: '96.5' })
  t.equal(low.code, 0)
  t.match(low.stdout, /coverage under the floor of \.taprc: lines 96\.5 % < 98 %; not enforced without CI=true/)
  const failing = await runWrapper(dir, { TAP_STATUS: '1', LINES: '99' })
  t.equal(failing.code, 1)
  t.match(failing.stdout, /tests: tap exited 1/)
  const failingInCi = await runWrapper(dir, { CI: 'true', TAP_STATUS: '1', LINES: '99' })
  t.equal(failingInCi.code, 1)
})

t.test('the whole suite (no arguments) ends with the regression guard, whose failure fails the run', async t => {
  const dir = scratchProject(t)
  // Stand-ins: an empty `tsx` for `--import tsx`, and a guard that exits with GUARD_STATUS.
  mkdirSync(join(dir, 'node_modules/tsx'))
  writeFileSync(join(dir, 'node_modules/tsx/package.json'), '{ "name": "tsx", "exports": "./index.mjs" }')
  writeFileSync(join(dir, 'node_modules/tsx/index.mjs'), '')
  mkdirSync(join(dir, 'bench'))
  const fakeGuard = "console.log('fake guard'); process.exit(Number(process.env.GUARD_STATUS))\n"
  writeFileSync(join(dir, 'bench/guard.ts'), fakeGuard)
  const passing = await runWrapper(dir, { CI: 'true', TAP_STATUS: '0', LINES: '99', GUARD_STATUS: '0' }, [])
  t.equal(passing.code, 0)
  t.match(passing.stdout, /fake guard/)
  const failing = await runWrapper(dir, { CI: 'true', TAP_STATUS: '0', LINES: '99', GUARD_STATUS: '1' }, [])
  t.equal(failing.code, 1)
  t.match(failing.stdout, /fake guard/)
  const some = await runWrapper(dir, { CI: 'true', TAP_STATUS: '0', LINES: '99', GUARD_STATUS: '1' })
  t.equal(some.code, 0, 'with suites named, no guard')
  t.notMatch(some.stdout, /fake guard/)
})
