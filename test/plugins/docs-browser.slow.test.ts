import t from 'tap'
import { execFile } from 'node:child_process'
import { mkdirSync, statSync } from 'node:fs'
import { promisify } from 'node:util'
import { fileURLToPath } from 'node:url'
import { CHROMIUM, chromiumFlags, NEEDS_CHROMIUM } from '../fixtures/chromium.js'
import { buildTestApp, testNeeding } from '../helper.js'

testNeeding(t, '/docs renders every operation of the API in headless Chromium', [NEEDS_CHROMIUM], async t => {
  const app = await buildTestApp(t)
  const url = await app.listen({ port: 0, host: '127.0.0.1' })
  const openapi = (await app.inject({ method: 'GET', url: '/docs/json' })).json()
  const paths = openapi.paths as Record<string, Record<string, unknown>>
  const operations = Object.values(paths)
    .reduce((count, path) => count + Object.keys(path).length, 0)
  const flags = [...chromiumFlags('chromium-profile'), '--virtual-time-budget=8000']
  const { stdout: dom } = await promisify(execFile)(CHROMIUM, [...flags, '--dump-dom', `${url}/docs/`], {
    maxBuffer: 64 * 1024 * 1024,
    timeout: 60_000
  })
  t.match(dom, 'BFF Service', 'the title rendered')
  t.equal((dom.match(/class="opblock /g) ?? []).length, operations, `all ${operations} operations are shown`)
  t.equal((dom.match(/opblock-tag-section/g) ?? []).length, 7, 'one section per module')
  const shot = fileURLToPath(new URL('../../.tap/docs.png', import.meta.url))
  mkdirSync(fileURLToPath(new URL('../../.tap/', import.meta.url)), { recursive: true })
  await promisify(execFile)(CHROMIUM, [...flags, '--window-size=1280,1600', `--screenshot=${shot}`, `${url}/docs/`], {
    timeout: 60_000
  })
  t.ok(statSync(shot).size > 20_000, 'a screenshot for people is in .tap/docs.png')
})
