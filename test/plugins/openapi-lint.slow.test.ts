import { execFile } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { buildTestApp } from '../helper.js'

const run = promisify(execFile)
const root = fileURLToPath(new URL('../../', import.meta.url))

interface Finding { code: string, severity: number, message: string, path: string[] }

/**
 * The OpenAPI document a running instance serves, linted as API-first teams lint theirs: Spectral's
 * `spectral:oas` and Stoplight's OWASP API Security Top 10 ruleset, with the repository's
 * .spectral.yaml (each rule it turns off says why). No error and no warning, in development (every
 * route, the development ones included) and in production, and with each PORTFOLIO_ACCESS (the
 * portfolio routes then name a user's token, or either credential, and their 403).
 */
const CASES = [
  { NODE_ENV: 'test', PORTFOLIO_ACCESS: 'api-key' },
  { NODE_ENV: 'production', PORTFOLIO_ACCESS: 'api-key' },
  { NODE_ENV: 'test', PORTFOLIO_ACCESS: 'user' },
  { NODE_ENV: 'production', PORTFOLIO_ACCESS: 'both' }
]
for (const settings of CASES) {
  const environment = settings.NODE_ENV
  t.test(`the ${environment} document (PORTFOLIO_ACCESS=${settings.PORTFOLIO_ACCESS}) passes spectral:oas and the ` +
    'OWASP ruleset', async t => {
    const app = await buildTestApp(t, settings)
    const address = await app.listen({ host: '127.0.0.1', port: 0 })
    const response = await fetch(`${address}/docs/json`)
    t.equal(response.status, 200)
    const dir = t.testdir({})
    const document = join(dir, 'openapi.json')
    await writeFile(document, await response.text())
    const report = join(dir, 'report.json')
    await run(join(root, 'node_modules/.bin/spectral'), [
      'lint', '--ruleset', join(root, '.spectral.yaml'), '--format', 'json', '--output', report, '--quiet', document
    ], { cwd: root }).catch((error: { code?: number }) => {
      // Spectral exits 1 when it found errors: the report says which.
      if (error.code !== 1) throw error
    })
    const findings = JSON.parse(await readFile(report, 'utf8')) as Finding[]
    const listed = (severity: number): string[] => findings.filter(finding => finding.severity === severity)
      .map(finding => `${finding.code} at ${finding.path.join('/')}: ${finding.message}`)
    t.same(listed(0), [], 'no error')
    t.same(listed(1), [], 'no warning')
  })
}
