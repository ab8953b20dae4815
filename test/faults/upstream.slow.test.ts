import t from 'tap'
import { readdirSync } from 'node:fs'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { Agent, request } from 'undici'
import { apiKey, assertErrorBody, bearer, buildTestApp, userToken } from '../helper.js'
import { startFakeLaravel } from '../fixtures/fake-laravel.js'
import { sendJson } from '../fixtures/fake-server.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

/** Descriptors open in this process: the service's sockets, its relay pool's, the fake backend's, the test client's. */
function openSockets (): number {
  return readdirSync('/proc/self/fd').length
}

async function heapMb (): Promise<number> {
  await new Promise(resolve => setTimeout(resolve, 200))
  gc()
  gc()
  return process.memoryUsage().heapUsed / 2 ** 20
}

const FAULTS = [
  { path: 'reset', status: 502, code: 'UPSTREAM_UNAVAILABLE' },
  { path: 'hang', status: 504, code: 'UPSTREAM_TIMEOUT' },
  { path: 'garbage', status: 502, code: 'UPSTREAM_UNAVAILABLE' },
  { path: 'fail', status: 502, code: 'UPSTREAM_UNAVAILABLE' }
] as const

t.test('an upstream that resets, hangs, answers garbage or 500 under 100 concurrent relays: 502/504 in the error ' +
  'body, other routes answer meanwhile, sockets and heap back to their baseline', async t => {
  const laravel = await startFakeLaravel(t)
  laravel.on('/api/reset', (_request, response) => { response.socket?.destroy() })
  laravel.on('/api/hang', () => { /* never answers */ })
  laravel.on('/api/garbage', (_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end('<html>Whoops, something went wrong.')
  })
  laravel.on('/api/fail', (_request, response) => { sendJson(response, 500, { message: 'Server Error' }) })
  const app = await buildTestApp(t, {
    BACKEND_URL: laravel.url, BACKEND_TIMEOUT_MS: '3000', RATE_LIMIT_MAX: '100000000'
  })
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  const portfolio = (await app.inject({
    method: 'POST', url: '/portfolios', headers: apiKey(), payload: { name: 'Vizinha', userId: 'neighbour' }
  })).json<{ id: string }>()
  const headers = { ...bearer(userToken()), 'content-type': 'application/json' }
  const baselineSockets = openSockets()
  const baselineHeap = await heapMb()

  const client = new Agent({ connections: 300 })
  for (const fault of FAULTS) {
    let settled = 0
    const relays = Array.from({ length: 100 }, async () => {
      const res = await request(`${address}/backend-api/proxy/api/${fault.path}`, {
        method: 'POST', dispatcher: client, headers, body: JSON.stringify({ method: 'GET' })
      })
      const body = await res.body.json()
      settled++
      return { status: res.statusCode, body }
    })
    if (fault.path === 'hang') {
      // Every other route answers while 100 relays wait on an upstream that never will.
      const others = await Promise.all(Array.from({ length: 50 }, async (_, index) => {
        const res = index % 2 === 0
          ? await request(`${address}/auth/profile`, { dispatcher: client, headers: bearer(userToken()) })
          : await request(`${address}/portfolios/${portfolio.id}`, { dispatcher: client, headers: apiKey() })
        await res.body.dump()
        return res.statusCode
      }))
      t.same(new Set(others), new Set([200]), 'JWT and store routes answered')
      t.equal(settled, 0, '…before any of the hanging relays timed out')
      t.ok(openSockets() >= baselineSockets + 100, `${openSockets()} descriptors open while they hang`)
    }
    const answers = await Promise.all(relays)
    t.same(new Set(answers.map(answer => answer.status)), new Set([fault.status]), `${fault.path}: ${fault.status}`)
    for (const answer of answers.slice(0, 3)) {
      assertErrorBody(t, answer.body, fault.status, `/backend-api/proxy/api/${fault.path}`)
      t.match(answer.body, { code: fault.code })
    }
  }
  await client.close()

  // Idle keep-alive connections to the backend end within its 5 s keep-alive timeout.
  let sockets = openSockets()
  for (let attempt = 0; attempt < 300 && sockets > baselineSockets; attempt++) {
    await new Promise(resolve => setTimeout(resolve, 100))
    sockets = openSockets()
  }
  t.ok(sockets <= baselineSockets, `open descriptors ${sockets}, ${baselineSockets} before the faults`)
  const heap = await heapMb()
  t.ok(heap - baselineHeap < 10, `heap ${baselineHeap.toFixed(1)} MB before, ${heap.toFixed(1)} MB after 400 failures`)
  t.equal((await app.inject({ method: 'GET', url: '/auth/health' })).statusCode, 200)
})
