import t, { type Test } from 'tap'
import { PLUGGY_CLIENT_ID, PLUGGY_CLIENT_SECRET, startFakePluggy } from '../../fixtures/fake-pluggy.js'
import { NEEDS_REDIS, startRedis } from '../../fixtures/redis.js'
import { assertErrorBody, bearer, buildTestApp, clientToken, testNeeding, userToken } from '../../helper.js'
import { loadConfig } from '../../../src/config/config.js'

const credentials = { AGGREGATOR_CLIENT_ID: PLUGGY_CLIENT_ID, AGGREGATOR_CLIENT_SECRET: PLUGGY_CLIENT_SECRET }

async function setup (t: Test, overrides: Record<string, string> = {}) {
  const pluggy = await startFakePluggy(t)
  const app = await buildTestApp(t, { AGGREGATOR_URL: pluggy.url, ...credentials, ...overrides })
  const sent = (path: string): number => pluggy.received.filter(r => r.path === path).length
  return { pluggy, app, sent }
}

t.test('each principal has CONNECT_TOKENS_PER_MINUTE connect tokens; past it 429 and nothing is sent', async t => {
  const { app, sent } = await setup(t, { CONNECT_TOKENS_PER_MINUTE: '2' })
  const user = bearer(userToken({ sub: 'greedy' }))
  const statuses = []
  for (let call = 0; call < 4; call++) {
    statuses.push((await app.inject({
      method: 'POST',
      url: '/aggregator/connect_token',
      headers: user,
      payload: {}
    })).statusCode)
  }
  t.same(statuses, [201, 201, 429, 429])
  t.equal(sent('/connect_token'), 2, 'the refused calls never reached the aggregator')
  const refused = await app.inject({ method: 'POST', url: '/aggregator/connect_token', headers: user, payload: {} })
  assertErrorBody(t, refused.json(), 429, '/aggregator/connect_token')
  t.equal(refused.json().code, 'RATE_LIMITED')
  t.match(refused.headers['retry-after'], /^\d+$/)
  t.equal((await app.inject({
    method: 'POST',
    url: '/aggregator/connect_token',
    headers: bearer(userToken({ sub: 'patient' })),
    payload: {}
  })).statusCode, 201, 'another user has an allowance of their own')
  t.equal((await app.inject({
    method: 'POST',
    url: '/aggregator/connect_token',
    headers: bearer(clientToken({ sub: 'greedy' })),
    payload: {}
  })).statusCode, 201, 'and so has a client of the same id')
})

t.test('AGGREGATOR_REQUESTS_PER_MINUTE bounds every call to the aggregator, the key exchange included', async t => {
  const { app, pluggy } = await setup(t, { AGGREGATOR_REQUESTS_PER_MINUTE: '3' })
  const user = bearer(userToken())
  const relay = async (): Promise<number> => (await app.inject({
    method: 'POST',
    url: '/aggregator',
    headers: user,
    payload: { endpoint: '/connectors', method: 'GET' }
  })).statusCode
  t.same(
    [await relay(), await relay(), await relay()],
    [200, 200, 429],
    'POST /auth, then two relays spend the budget of 3'
  )
  t.equal(pluggy.received.length, 3, 'nothing was sent past the budget')
  const token = await app.inject({ method: 'POST', url: '/aggregator/connect_token', headers: user, payload: {} })
  t.equal(token.statusCode, 429, 'connect tokens draw on the same budget')
  t.match(token.headers['retry-after'], /^\d+$/)
})

testNeeding(t, 'with RATE_LIMIT_REDIS_URL, every instance draws on one aggregator budget', [NEEDS_REDIS], async t => {
  const redis = await startRedis(t)
  const pluggy = await startFakePluggy(t)
  const shared = {
    AGGREGATOR_URL: pluggy.url,
    ...credentials,
    AGGREGATOR_REQUESTS_PER_MINUTE: '4',
    RATE_LIMIT_REDIS_URL: redis.url
  }
  const first = await buildTestApp(t, shared)
  const second = await buildTestApp(t, shared)
  const user = bearer(userToken())
  const statuses = []
  for (const app of [first, second, first]) {
    statuses.push((await app.inject({
      method: 'POST',
      url: '/aggregator',
      headers: user,
      payload: { endpoint: '/connectors', method: 'GET' }
    })).statusCode)
  }
  // Each instance exchanges its own key: 2 × (POST /auth + relay) = 4, the budget.
  t.same(statuses, [200, 200, 429])
  t.equal(pluggy.received.length, 4)
})

const connectors = { endpoint: '/connectors', method: 'GET' }

const PER_PRINCIPAL = 'AGGREGATOR_REQUESTS_PER_PRINCIPAL_PER_MINUTE'

t.test(`${PER_PRINCIPAL}: past its share, 429 and nothing of the shared budget spent; others are served`, async t => {
  const { app, sent } = await setup(t, { [PER_PRINCIPAL]: '2', AGGREGATOR_REQUESTS_PER_MINUTE: '6' })
  const greedy = bearer(userToken({ sub: 'greedy' }))
  const relay = async (headers: Record<string, string>) =>
    await app.inject({ method: 'POST', url: '/aggregator', headers, payload: connectors })
  // POST /auth (shared budget only) and two relays: 3 of the 6.
  t.same([(await relay(greedy)).statusCode, (await relay(greedy)).statusCode], [200, 200])
  for (let call = 0; call < 5; call++) {
    const refused = await relay(greedy)
    t.equal(refused.statusCode, 429, `call ${call + 3} of the greedy principal`)
    assertErrorBody(t, refused.json(), 429, '/aggregator')
    t.equal(refused.json().code, 'RATE_LIMITED')
    t.match(refused.headers['retry-after'], /^\d+$/)
  }
  const token = await app.inject({ method: 'POST', url: '/aggregator/connect_token', headers: greedy, payload: {} })
  t.equal(token.statusCode, 429, 'its connect tokens draw on the same share')
  t.equal(sent('/connectors'), 2, 'nothing was sent past the share')
  t.equal(sent('/connect_token'), 0)
  // Had the refused calls spent the shared budget, it would be gone: the others use its last 3.
  t.equal((await relay(bearer(userToken({ sub: 'patient' })))).statusCode, 200, 'another user is served')
  t.equal((await relay(bearer(userToken({ sub: 'patient' })))).statusCode, 200)
  t.equal((await relay(bearer(clientToken({ sub: 'greedy' })))).statusCode, 200, 'and so is a client of the same id')
  t.equal((await relay(bearer(userToken({ sub: 'late' })))).statusCode, 429, 'the shared budget still bounds them all')
})

t.test('a client\'s ownership lookups are its calls too: they spend from its share', async t => {
  const { app, pluggy, sent } = await setup(t, { [PER_PRINCIPAL]: '3' })
  pluggy.items.set('item-a', 'client-a')
  const client = bearer(clientToken({ sub: 'client-a' }))
  const payload = { endpoint: '/items/item-a', method: 'GET' }
  const item = async (): Promise<number> =>
    (await app.inject({ method: 'POST', url: '/aggregator', headers: client, payload })).statusCode
  // The first call looks the item up (1) and relays (2); the owner is then cached: the second relays (3).
  t.same([await item(), await item(), await item()], [200, 200, 429])
  t.equal(sent('/items/item-a'), 3, 'one lookup and two relays')
})

t.test(`${PER_PRINCIPAL} is validated and named when wrong`, async t => {
  for (const value of ['0', '-1', 'many', '1.5', '1000001']) {
    t.throws(() => loadConfig({ NODE_ENV: 'test', [PER_PRINCIPAL]: value }), new RegExp(PER_PRINCIPAL), value)
  }
  t.equal(loadConfig({ NODE_ENV: 'test' }).upstreams.aggregator.requestsPerPrincipalPerMinute, 60, 'default 60')
})

testNeeding(t, 'with RATE_LIMIT_REDIS_URL, a principal\'s share holds across instances', [NEEDS_REDIS], async t => {
  const redis = await startRedis(t)
  const pluggy = await startFakePluggy(t)
  const shared = { AGGREGATOR_URL: pluggy.url, ...credentials, [PER_PRINCIPAL]: '2', RATE_LIMIT_REDIS_URL: redis.url }
  const first = await buildTestApp(t, shared)
  const second = await buildTestApp(t, shared)
  const greedy = bearer(userToken({ sub: 'greedy' }))
  const relay = async (app: typeof first, headers: Record<string, string>) =>
    await app.inject({ method: 'POST', url: '/aggregator', headers, payload: connectors })
  t.equal((await relay(first, greedy)).statusCode, 200)
  t.equal((await relay(second, greedy)).statusCode, 200)
  const refused = await relay(first, greedy)
  t.equal(refused.statusCode, 429, 'the third call, whichever instance takes it, is past the share')
  t.match(refused.headers['retry-after'], /^\d+$/)
  t.equal((await relay(second, greedy)).statusCode, 429)
  t.equal((await relay(second, bearer(userToken({ sub: 'patient' })))).statusCode, 200, 'another principal is served')
  t.equal((await relay(first, bearer(userToken({ sub: 'patient' })))).statusCode, 200)
  t.equal(pluggy.received.filter(r => r.path === '/connectors').length, 4)
})

t.test('aggregator pagination is checked before it leaves', async t => {
  const { app, pluggy } = await setup(t)
  const user = bearer(userToken())
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ page: 0 }, 'page must not be less than 1'],
    [{ page: -3 }, 'page must not be less than 1'],
    [{ page: 'Infinity' }, 'page must be an integer number'],
    [{ page: 'two' }, 'page must be an integer number'],
    [{ page: 1.5 }, 'page must be an integer number'],
    [{ pageSize: 0 }, 'pageSize must not be less than 1'],
    [{ pageSize: 501 }, 'pageSize must not be greater than 500'],
    [{ pageSize: '1e3' }, 'pageSize must be an integer number']
  ]
  for (const [fields, message] of cases) {
    const res = await app.inject({
      method: 'POST',
      url: '/aggregator',
      headers: user,
      payload: { endpoint: '/transactions', method: 'GET', accountId: 'a', ...fields }
    })
    t.equal(res.statusCode, 400, JSON.stringify(fields))
    t.same(res.json().message, [message], JSON.stringify(fields))
  }
  t.same(pluggy.received.filter(r => r.path !== '/auth'), [], 'nothing was sent')
  const fine = await app.inject({
    method: 'POST',
    url: '/aggregator',
    headers: user,
    payload: { endpoint: '/connectors', method: 'GET', page: '2', pageSize: 500 }
  })
  t.equal(fine.statusCode, 200)
})
