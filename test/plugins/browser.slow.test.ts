import t, { type Test } from 'tap'
import { execFile } from 'node:child_process'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { promisify } from 'node:util'
import { CHROMIUM, chromiumFlags, NEEDS_CHROMIUM } from '../fixtures/chromium.js'
import { apiKey, buildTestApp, testNeeding } from '../helper.js'

const needs = [NEEDS_CHROMIUM]

/** The DOM of `url` once Chromium's virtual time has run out (pages load as from any other host). */
async function chromiumDom (url: string, profile: string): Promise<string> {
  const flags = [...chromiumFlags(profile), '--virtual-time-budget=10000', '--dump-dom', url]
  const { stdout } = await promisify(execFile)(CHROMIUM, flags, { maxBuffer: 64 * 1024 * 1024, timeout: 60_000 })
  return stdout
}

testNeeding(t, '/docs renders over plain HTTP on a host that is not localhost ' +
  '(no upgrade to HTTPS)', needs, async t => {
  const app = await buildTestApp(t)
  const url = new URL(await app.listen({ port: 0, host: '127.0.0.1' }))
  const dom = await chromiumDom(`http://docs.bff.test:${url.port}/docs/`, 'chromium-docs-host')
  t.match(dom, 'BFF Service', 'Swagger UI rendered the document')
  t.match(dom, /class="opblock /, 'operations are listed')
})

testNeeding(t, 'a page on a CORS_ORIGINS origin creates, patches and deletes a portfolio with fetch ' +
  'and reads x-request-id', needs, async t => {
  // The frontend: a page of its own origin, calling the API on another.
  const page = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    response.end(`<!doctype html><html><body><pre id="out">pending</pre><script>
      const api = location.search.slice(1)
      const headers = {
        'x-api-key': ${JSON.stringify(apiKey()['x-api-key'])},
        'content-type': 'application/json',
        'x-request-id': 'from-the-page-1'
      }
      const steps = []
      ;(async () => {
        const created = await fetch(api + '/portfolios', {
          method: 'POST', headers, body: JSON.stringify({ name: 'From a browser', userId: 'web' })
        })
        const portfolio = await created.json()
        steps.push({ step: 'create', status: created.status, requestId: created.headers.get('x-request-id') })
        const patched = await fetch(api + '/portfolios/' + portfolio.id, {
          method: 'PATCH', headers, body: JSON.stringify({ name: 'Renamed in a browser' })
        })
        steps.push({ step: 'patch', status: patched.status, name: (await patched.json()).name })
        const deleted = await fetch(api + '/portfolios/' + portfolio.id, {
          method: 'DELETE', headers: { 'x-api-key': headers['x-api-key'] }
        })
        steps.push({ step: 'delete', status: deleted.status })
      })().catch(error => steps.push({ error: String(error) }))
        .finally(() => { document.getElementById('out').textContent = JSON.stringify(steps) })
    </script></body></html>`)
  })
  await new Promise<void>(resolve => page.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>(resolve => page.close(() => resolve())))
  const pagePort = (page.address() as AddressInfo).port

  const app = await buildTestApp(t, { CORS_ORIGINS: `http://app.bff.test:${pagePort}` })
  const apiPort = new URL(await app.listen({ port: 0, host: '127.0.0.1' })).port
  const dom = await chromiumDom(`http://app.bff.test:${pagePort}/?http://api.bff.test:${apiPort}`, 'chromium-cors')
  const out = /<pre id="out">([^<]*)<\/pre>/.exec(dom)?.[1] ?? ''
  const steps = JSON.parse(out.replaceAll('&quot;', '"')) as Array<Record<string, unknown>>
  t.same(steps, [
    { step: 'create', status: 201, requestId: 'from-the-page-1' },
    { step: 'patch', status: 200, name: 'Renamed in a browser' },
    { step: 'delete', status: 200 }
  ])
})

/** A page of its own origin whose script fills `<pre id="out">` with JSON; answers its port. */
async function frontendPage (t: Test, script: string): Promise<number> {
  const page = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    response.end(`<!doctype html><html><body><pre id="out">pending</pre><script>
      const steps = []
      ;(async () => { ${script} })().catch(error => steps.push({ error: String(error) }))
        .finally(() => { document.getElementById('out').textContent = JSON.stringify(steps) })
    </script></body></html>`)
  })
  await new Promise<void>(resolve => page.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>(resolve => page.close(() => resolve())))
  return (page.address() as AddressInfo).port
}

const SAFE_RETRIES =
  'a page on a CORS origin retries a create (Idempotency-Key), polls (If-None-Match: 304), edits (If-Match)'

testNeeding(t, SAFE_RETRIES, needs, async t => {
  const pagePort = await frontendPage(t, `
    const api = location.search.slice(1)
    const headers = { 'x-api-key': ${JSON.stringify(apiKey()['x-api-key'])}, 'content-type': 'application/json' }
    const create = () => fetch(api + '/portfolios', {
      method: 'POST',
      headers: { ...headers, 'idempotency-key': 'page-create-1' },
      body: JSON.stringify({ name: 'Polled', userId: 'web' })
    })
    const created = await create()
    const portfolio = await created.json()
    const retried = await create()
    const replayed = retried.headers.get('idempotent-replayed')
    steps.push({ step: 'retry', status: retried.status, replayed, same: (await retried.json()).id === portfolio.id })
    const url = api + '/portfolios/' + portfolio.id
    const first = await fetch(url, { headers })
    const etag = first.headers.get('etag')
    steps.push({ step: 'read', status: first.status, tagged: /^"[0-9a-f-]{36}[.][1-9][0-9]*"$/.test(etag ?? '') })
    const polled = await fetch(url, { headers: { ...headers, 'if-none-match': etag } })
    const sameTag = polled.headers.get('etag') === etag
    steps.push({ step: 'poll', status: polled.status, body: await polled.text(), etag: sameTag })
    const edit = name => fetch(url, {
      method: 'PATCH', headers: { ...headers, 'if-match': etag }, body: JSON.stringify({ name })
    })
    const edited = await edit('Edited')
    steps.push({ step: 'edit', status: edited.status })
    const stale = await edit('Lost')
    steps.push({ step: 'stale edit', status: stale.status, code: (await stale.json()).code })
    const changed = await fetch(url, { headers: { ...headers, 'if-none-match': etag } })
    steps.push({ step: 'poll after the edit', status: changed.status, name: (await changed.json()).name })
  `)
  const app = await buildTestApp(t, { CORS_ORIGINS: `http://app.bff.test:${pagePort}` })
  const apiPort = new URL(await app.listen({ port: 0, host: '127.0.0.1' })).port
  const pageUrl = `http://app.bff.test:${pagePort}/?http://api.bff.test:${apiPort}`
  const dom = await chromiumDom(pageUrl, 'chromium-conditional')
  const out = /<pre id="out">([^<]*)<\/pre>/.exec(dom)?.[1] ?? ''
  t.same(JSON.parse(out.replaceAll('&quot;', '"')), [
    { step: 'retry', status: 201, replayed: 'true', same: true },
    { step: 'read', status: 200, tagged: true },
    { step: 'poll', status: 304, body: '', etag: true },
    { step: 'edit', status: 200 },
    { step: 'stale edit', status: 412, code: 'PRECONDITION_FAILED' },
    { step: 'poll after the edit', status: 200, name: 'Edited' }
  ])
})

testNeeding(t, 'the browser keeps a tagged answer (private, no-cache) and revalidates it by itself: ' +
  'a plain re-read is a 304 to the service and the whole answer to the page', needs, async t => {
  const pagePort = await frontendPage(t, `
    const api = location.search.slice(1)
    const headers = { 'x-api-key': ${JSON.stringify(apiKey()['x-api-key'])}, 'content-type': 'application/json' }
    const created = await fetch(api + '/portfolios', {
      method: 'POST', headers, body: JSON.stringify({ name: 'Kept', userId: 'web' })
    })
    const url = api + '/portfolios/' + (await created.json()).id
    const read = async step => {
      const answer = await fetch(url, { headers: { 'x-api-key': headers['x-api-key'] } })
      const { name } = await answer.json()
      steps.push({ step, status: answer.status, name, cacheControl: answer.headers.get('cache-control') })
    }
    await read('read')
    await read('read again')
    await fetch(url, { method: 'PATCH', headers, body: JSON.stringify({ name: 'Changed' }) })
    await read('read after an edit')
  `)
  const app = await buildTestApp(t, { CORS_ORIGINS: `http://app.bff.test:${pagePort}`, METRICS_PORT: '0' })
  const apiPort = new URL(await app.listen({ port: 0, host: '127.0.0.1' })).port
  const dom = await chromiumDom(`http://app.bff.test:${pagePort}/?http://api.bff.test:${apiPort}`, 'chromium-cache')
  const out = /<pre id="out">([^<]*)<\/pre>/.exec(dom)?.[1] ?? ''
  const kept = 'private, no-cache'
  t.same(JSON.parse(out.replaceAll('&quot;', '"')), [
    { step: 'read', status: 200, name: 'Kept', cacheControl: kept },
    { step: 'read again', status: 200, name: 'Kept', cacheControl: kept },
    { step: 'read after an edit', status: 200, name: 'Changed', cacheControl: kept }
  ], 'the page always gets the current version')
  const metrics = await (await fetch(`${app.metricsAddress() ?? ''}/metrics`)).text()
  const answered = (status: number): number => Number(new RegExp(
    '^http_request_duration_seconds_count\\{[^}]*route="/portfolios/:id"' +
    `[^}]*status_code="${status}"[^}]*\\} (\\d+)$`, 'm'
  ).exec(metrics)?.[1] ?? 0)
  t.equal(answered(304), 1, 'the re-read was the browser\'s own If-None-Match, answered without a body')
  t.equal(answered(200), 2, 'the first read and the read after the edit')
})
