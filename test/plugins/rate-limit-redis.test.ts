import t from 'tap'
import { bearer, buildTestApp, testNeeding, userToken } from '../helper.js'
import { NEEDS_REDIS, startRedis } from '../fixtures/redis.js'

testNeeding(t, 'with RATE_LIMIT_REDIS_URL, instances share one limit', [NEEDS_REDIS], async t => {
  const redis = await startRedis(t)
  const shared = { RATE_LIMIT_MAX: '3', RATE_LIMIT_REDIS_URL: redis.url }
  const first = await buildTestApp(t, shared)
  const second = await buildTestApp(t, shared)
  const headers = bearer(userToken({ sub: 'shared-limit' }))
  const statuses = []
  for (const app of [first, second, first, second]) {
    statuses.push((await app.inject({ method: 'GET', url: '/auth/profile', headers })).statusCode)
  }
  t.same(statuses, [200, 200, 200, 429], 'the fourth call is refused, whichever instance gets it')

  redis.kill()
  await new Promise(resolve => setTimeout(resolve, 200))
  const other = bearer(userToken({ sub: 'when-redis-is-gone' }))
  t.equal((await first.inject({
    method: 'GET',
    url: '/auth/profile',
    headers: other
  })).statusCode, 200, 'a lost Redis fails open: traffic goes on')
})
