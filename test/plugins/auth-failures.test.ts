import t from 'tap'
import { WindowCounter } from '../../src/upstream/budget.js'
import { apiKey, assertErrorBody, bearer, buildTestApp, userToken } from '../helper.js'

t.test('failed authentications past AUTH_FAILURES_PER_MINUTE from one IP are 429; ' +
  'valid credentials still work', async t => {
  const app = await buildTestApp(t, { AUTH_FAILURES_PER_MINUTE: '3' })
  const attacker = { remoteAddress: '203.0.113.7' }
  const bad = [
    { url: '/auth/profile', headers: bearer('not.a.token') },
    { url: '/portfolios', headers: apiKey('wrong-key') },
    { url: '/auth/profile', headers: bearer(`${userToken()}x`) }
  ]
  for (const request of bad) {
    t.equal((await app.inject({ ...request, ...attacker })).statusCode, 401, `${request.url} is 401 within the budget`)
  }

  const throttled = await app.inject({ url: '/portfolios', headers: apiKey('still-wrong'), ...attacker })
  t.equal(throttled.statusCode, 429)
  assertErrorBody(t, throttled.json(), 429, '/portfolios')
  t.equal(throttled.json().code, 'RATE_LIMITED')
  t.match(throttled.headers['retry-after'], /^\d+$/)
  t.ok(Number(throttled.headers['retry-after']) >= 1 && Number(throttled.headers['retry-after']) <= 60)
  t.equal((await app.inject({
    url: '/auth/me',
    headers: bearer('x.y.z'),
    ...attacker
  })).statusCode, 429, 'a bad token too')

  t.equal((await app.inject({
    url: '/portfolios',
    headers: apiKey(),
    ...attacker
  })).statusCode, 200, 'a valid key from the throttled IP works')
  t.equal((await app.inject({
    url: '/auth/profile',
    headers: bearer(userToken()),
    ...attacker
  })).statusCode, 200, 'a valid token from the throttled IP works')
  t.equal((await app.inject({
    url: '/portfolios',
    headers: apiKey('wrong-key'),
    remoteAddress: '198.51.100.2'
  })).statusCode, 401, 'another IP has its own budget')
})

t.test('a wrong webhook secret counts as a failed authentication', async t => {
  const app = await buildTestApp(t, { AUTH_FAILURES_PER_MINUTE: '1', AGGREGATOR_WEBHOOK_SECRET: 'hook-secret' })
  const send = async (secret: string): Promise<number> => (await app.inject({
    method: 'POST',
    url: '/aggregator/webhook',
    headers: { 'x-webhook-secret': secret },
    payload: { event: 'item/updated', itemId: 'i' },
    remoteAddress: '203.0.113.9'
  })).statusCode
  t.equal(await send('wrong'), 401)
  t.equal(await send('wrong'), 429)
})

t.test('the window counter forgets at the next minute and says how long to wait', async t => {
  const counter = new WindowCounter(2, 60_000)
  t.equal(counter.hit('a', 0), undefined)
  t.equal(counter.hit('a', 1_000), undefined)
  t.equal(counter.hit('a', 30_000), 30, 'the third in the minute waits for its end')
  t.equal(counter.hit('b', 30_000), undefined, 'per key')
  t.equal(counter.hit('a', 60_000), undefined, 'a new minute')
})

t.test('behind a trusted proxy (TRUST_PROXY) the budget is per client of X-Forwarded-For, not per proxy', async t => {
  const app = await buildTestApp(t, { AUTH_FAILURES_PER_MINUTE: '1', TRUST_PROXY: '127.0.0.1' })
  const via = (client: string) => ({
    remoteAddress: '127.0.0.1',
    headers: { ...apiKey('wrong'), 'x-forwarded-for': client }
  })
  t.equal((await app.inject({ url: '/portfolios', ...via('203.0.113.1') })).statusCode, 401)
  t.equal((await app.inject({ url: '/portfolios', ...via('203.0.113.1') })).statusCode, 429)
  t.equal(
    (await app.inject({ url: '/portfolios', ...via('203.0.113.2') })).statusCode,
    401,
    'another client behind the same proxy'
  )
  const untrusted = await buildTestApp(t, { AUTH_FAILURES_PER_MINUTE: '1' })
  t.equal((await untrusted.inject({ url: '/portfolios', ...via('203.0.113.1') })).statusCode, 401)
  t.equal(
    (await untrusted.inject({ url: '/portfolios', ...via('203.0.113.2') })).statusCode,
    429,
    'without TRUST_PROXY the forwarded address is not believed'
  )
})
