import t from 'tap'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { bearer, buildTestApp, userToken } from '../helper.js'
import { startFakeLaravel } from '../fixtures/fake-laravel.js'
import { sendJson } from '../fixtures/fake-server.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

/** Heap in use once late upstream answers have landed and garbage is collected. */
async function heapMb (): Promise<number> {
  await new Promise(resolve => setTimeout(resolve, 600))
  gc()
  gc()
  return process.memoryUsage().heapUsed / 2 ** 20
}

t.test('10 000 failing relay calls: each 502/504, no unhandled rejection, memory flat, still healthy', async t => {
  const laravel = await startFakeLaravel(t)
  let call = 0
  laravel.on('/api/user/profile', (_req, res) => {
    switch (call++ % 5) {
      case 0: sendJson(res, 500, { trace: 'x'.repeat(2000) }); break
      case 1: res.writeHead(200, { 'content-type': 'application/json' }); res.end('{not json'); break
      case 2:
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': 100 })
        res.write('{"a":')
        res.socket?.destroy()
        break
      case 3: res.socket?.destroy(); break
      default: setTimeout(() => sendJson(res, 200, {}), 400)
    }
  })
  const app = await buildTestApp(t, {
    BACKEND_URL: laravel.url,
    BACKEND_TIMEOUT_MS: '100',
    RATE_LIMIT_MAX: '100000000'
  })
  const unhandled: unknown[] = []
  const onUnhandled = (reason: unknown): void => { unhandled.push(reason) }
  process.on('unhandledRejection', onUnhandled)
  t.teardown(() => { process.off('unhandledRejection', onUnhandled) })
  const headers = bearer(userToken())
  const statuses = new Map<number, number>()
  const run = async (count: number): Promise<void> => {
    for (let done = 0; done < count; done += 100) {
      const batch = await Promise.all(Array.from({ length: 100 }, async () => await app.inject({
        method: 'GET',
        url: '/backend-api/user/profile',
        headers
      })))
      for (const res of batch) statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1)
      // The fake records every request; its memory is the test's, not the service's.
      laravel.received.length = 0
    }
  }
  await run(4000)
  const warm = await heapMb()
  await run(6000)
  const after = await heapMb()
  t.same([...statuses.keys()].sort(), [502, 504], `only 502 and 504: ${JSON.stringify([...statuses])}`)
  t.equal([...statuses.values()].reduce((a, b) => a + b, 0), 10_000)
  t.same(unhandled, [], 'no unhandled rejection')
  t.ok(after - warm < 10, `heap after 4 000 calls ${warm.toFixed(1)} MB, after 10 000 ${after.toFixed(1)} MB`)
  t.equal((await app.inject({ method: 'GET', url: '/auth/health' })).statusCode, 200)
})
