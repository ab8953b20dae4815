import t from 'tap'
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createConnection } from 'node:net'
import { bearer, buildTestApp, testNeeding, userToken } from '../helper.js'
import { closedPort } from '../fixtures/fake-server.js'

const REDIS_SERVER = '/usr/bin/redis-server'

async function reachable (port: number): Promise<boolean> {
  return await new Promise(resolve => {
    const socket = createConnection({ host: '127.0.0.1', port }, () => { socket.end(); resolve(true) })
    socket.on('error', () => resolve(false))
  })
}

testNeeding(t, 'with RATE_LIMIT_REDIS_URL, instances share one limit', [existsSync(REDIS_SERVER) ? '' : 'redis-server (apt-get install redis-server)'], async t => {
  const port = await closedPort(t)
  // A throwaway Redis on 127.0.0.1, nothing saved to disk.
  const redis = spawn(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' })
  t.teardown(() => { redis.kill('SIGTERM') })
  for (let attempt = 0; attempt < 100 && !await reachable(port); attempt++) await new Promise(resolve => setTimeout(resolve, 50))
  const shared = { RATE_LIMIT_MAX: '3', RATE_LIMIT_REDIS_URL: `redis://127.0.0.1:${port}` }
  const first = await buildTestApp(t, shared)
  const second = await buildTestApp(t, shared)
  const headers = bearer(userToken({ sub: 'shared-limit' }))
  const statuses = []
  for (const app of [first, second, first, second]) statuses.push((await app.inject({ method: 'GET', url: '/auth/profile', headers })).statusCode)
  t.same(statuses, [200, 200, 200, 429], 'the fourth call is refused, whichever instance gets it')

  redis.kill('SIGKILL')
  await new Promise(resolve => setTimeout(resolve, 200))
  const other = bearer(userToken({ sub: 'when-redis-is-gone' }))
  t.equal((await first.inject({ method: 'GET', url: '/auth/profile', headers: other })).statusCode, 200, 'a lost Redis fails open: traffic goes on')
})
