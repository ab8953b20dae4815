import t from 'tap'
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseAnswer, sendLargeBody, trickleBody } from '../fixtures/raw-client.js'
import { listeningPort } from '../fixtures/processes.js'

const serverEntry = fileURLToPath(new URL('../../src/server.ts', import.meta.url))
const tsx = import.meta.resolve('tsx')
const API_KEY = 'bodies-key'
const REQUEST_TIMEOUT_MS = 2000

const started = new Set<ChildProcessWithoutNullStreams>()
t.teardown(() => { for (const child of started) if (child.exitCode === null) child.kill('SIGKILL') })

/** The real server (src/server.ts through tsx), its port once it listens. */
async function startServer (env: Record<string, string> = {}): Promise<number> {
  const child = spawn(process.execPath, ['--import', tsx, serverEntry], {
    cwd: mkdtempSync(join(tmpdir(), 'bff-bodies-')),
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'test',
      PORT: '0',
      LOG_LEVEL: 'info',
      DATABASE_URL: 'sqlite::memory:',
      MAX_EVENT_LOOP_DELAY_MS: '0',
      JWT_SECRET: 's',
      API_KEYS: API_KEY,
      ...env
    }
  })
  started.add(child)
  return await listeningPort(child)
}

t.test('a body trickled a byte every 200 ms is cut at REQUEST_TIMEOUT_MS (408), not a minute later', async t => {
  const port = await startServer({ REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS) })
  // A first request, so the server has done its first-request work before the clock matters.
  t.equal((await fetch(`http://127.0.0.1:${port}/auth/health`)).status, 200)
  // Three times the timeout: the server's deadline check runs every 500 ms here, and a busy
  // machine may run it late, but never by seconds; before the fix the cut came after 60–90 s.
  const exchange = await trickleBody(port, '/portfolios', { 'x-api-key': API_KEY }, 200, 3 * REQUEST_TIMEOUT_MS)
  const seen = `after ${exchange.elapsedMs} ms, ${exchange.bodyBytesSent} bytes`
  t.notOk(exchange.closedByClient, `the server closed the connection (${seen})`)
  t.ok(exchange.elapsedMs >= REQUEST_TIMEOUT_MS, 'never before the request timeout')
  t.match(parseAnswer(exchange.received), { status: 408, body: { statusCode: 408, code: 'REQUEST_TIMEOUT', path: '' } })
})

t.test('413 over the body limit reaches a client still sending its body: 20 times in a row, never a reset', async t => {
  const port = await startServer()
  const tooLarge = 3 * 1024 * 1024
  const cases = [
    ...Array.from({ length: 20 }, (_, i) => ({ label: `Content-Length, #${i + 1}`, chunked: false })),
    ...Array.from({ length: 5 }, (_, i) => ({ label: `chunked, #${i + 1}`, chunked: true }))
  ]
  for (const { label, chunked } of cases) {
    const exchange = await sendLargeBody(port, '/portfolios', { 'x-api-key': API_KEY },
      { totalBytes: tooLarge, chunked })
    const answer = parseAnswer(exchange.received)
    t.equal(exchange.error, undefined, `${label}: no connection error`)
    t.equal(answer.status, 413, `${label}: the status was read`)
    const body = { statusCode: 413, code: 'PAYLOAD_TOO_LARGE', path: '/portfolios' }
    t.match(answer.body, body, `${label}: the JSON body was read`)
    t.match(exchange.received, /\r\nconnection: close\r\n/i, `${label}: the answer says the connection closes`)
  }
  // The server still serves.
  t.equal((await fetch(`http://127.0.0.1:${port}/auth/health`)).status, 200)
})
