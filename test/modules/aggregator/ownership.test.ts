import t, { type Test } from 'tap'
import type { ServerResponse } from 'node:http'
import { assertErrorBody, bearer, buildTestApp, clientToken, userToken } from '../../helper.js'
import { startFakePluggy, type FakePluggy } from '../../fixtures/fake-pluggy.js'
import { sendJson } from '../../fixtures/fake-server.js'
import { pluggyItem, tooManyRequests } from '../../fixtures/pluggy-shapes.js'
import { credentials, lookups } from './verification-helpers.js'

type Answer = (res: ServerResponse) => void

/** A fake whose `GET /items/item-a` answers `answer` while it is set, the item (client-a's) otherwise. */
async function setup (t: Test, overrides: Record<string, string> = {}) {
  const pluggy = await startFakePluggy(t)
  pluggy.accounts.set('acc-a', 'item-a')
  const state: { answer: Answer | undefined } = { answer: undefined }
  pluggy.on('/items/item-a', (_request, res) => {
    if (state.answer !== undefined) return state.answer(res)
    const fields = { clientUserId: 'client-a', executionStatus: 'USER_AUTHORIZATION_REVOKED' }
    sendJson(res, 200, pluggyItem('item-a', fields))
  })
  const app = await buildTestApp(t, { AGGREGATOR_URL: pluggy.url, ...credentials, ...overrides })
  const clientA = bearer(clientToken({ sub: 'client-a' }))
  const accounts = async () => await app.inject({
    method: 'POST',
    url: '/aggregator',
    headers: clientA,
    payload: { endpoint: '/accounts', method: 'GET', itemId: 'item-a' }
  })
  const relayed = (pluggy: FakePluggy): number => pluggy.received.filter(r => r.path === '/accounts').length
  return { pluggy, app, state, accounts, relayed, clientA }
}

t.test('an ownership lookup the aggregator rate-limits is the caller\'s 429 with its Retry-After, and is not ' +
  'remembered as "not yours"', async t => {
  const { pluggy, app, state, accounts, relayed, clientA } = await setup(t)
  state.answer = tooManyRequests('7')
  const throttled = await accounts()
  t.equal(throttled.statusCode, 429, 'not 403: the owner is unknown')
  assertErrorBody(t, throttled.json(), 429, '/aggregator')
  t.equal(throttled.json().code, 'RATE_LIMITED')
  t.equal(throttled.headers['retry-after'], '7', 'the aggregator\'s Retry-After')
  t.equal(relayed(pluggy), 0, 'nothing relayed')

  state.answer = res => { sendJson(res, 429, { message: 'Too many requests', code: 429 }) }
  const unnamed = await accounts()
  t.equal(unnamed.statusCode, 429)
  t.equal(unnamed.headers['retry-after'], '60', 'Pluggy\'s documented 60 s when the 429 names no wait')

  state.answer = undefined
  const served = await accounts()
  t.equal(served.statusCode, 200, 'the client reaches its item as soon as the aggregator answers')
  t.match(served.json(), { results: [{ id: 'acc-a', itemId: 'item-a' }], page: 1, total: 1, totalPages: 1 })

  const token = await app.inject({
    method: 'POST', url: '/aggregator/connect_token', headers: clientA, payload: { itemId: 'item-a' }
  })
  t.equal(token.statusCode, 201, 'a connect token for the item too')
})

t.test('an ownership lookup that fails (5xx, a refused key, timeout) is 502/504 and is not remembered', async t => {
  const { state, accounts } = await setup(t, { AGGREGATOR_TIMEOUT_MS: '500' })
  state.answer = res => { sendJson(res, 503, { code: 503, message: 'maintenance' }) }
  const down = await accounts()
  t.equal(down.statusCode, 502)
  t.equal(down.json().code, 'UPSTREAM_UNAVAILABLE')
  state.answer = res => { sendJson(res, 401, { code: 401, message: 'Invalid API key' }) }
  const refused = await accounts()
  t.equal(refused.statusCode, 502, 'the service\'s own key refused, even renewed: not the client\'s fault')
  // Never answered: the 500 ms timeout is the subject.
  const hanging: ServerResponse[] = []
  t.teardown(() => { for (const res of hanging) res.destroy() })
  state.answer = res => { hanging.push(res) }
  const slow = await accounts()
  t.equal(slow.statusCode, 504)
  t.equal(slow.json().code, 'UPSTREAM_TIMEOUT')
  state.answer = undefined
  t.equal((await accounts()).statusCode, 200, 'served once the aggregator answers')
})

t.test('only a real owner or a real 404 is cached; another refusal of the id is asked again', async t => {
  const { pluggy, app } = await setup(t)
  const clientA = bearer(clientToken({ sub: 'client-a' }))
  const item = async (id: string) => await app.inject({
    method: 'POST', url: '/aggregator', headers: clientA, payload: { endpoint: `/items/${id}`, method: 'GET' }
  })
  t.equal((await item('item-a')).statusCode, 200)
  t.equal((await item('item-a')).statusCode, 200)
  t.equal(lookups(pluggy, 'item-a'), 3, 'one lookup (cached) and two relays')

  t.equal((await item('later')).statusCode, 403, 'unknown (404)')
  pluggy.items.set('later', 'client-a')
  t.equal((await item('later')).statusCode, 403, 'a 404 is remembered for a while')
  t.equal(lookups(pluggy, 'later'), 1)

  pluggy.items.set('orphan', null)
  t.equal((await item('orphan')).statusCode, 403, 'an item with clientUserId null is nobody\'s')
  t.equal((await item('orphan')).statusCode, 403)
  t.equal(lookups(pluggy, 'orphan'), 1, 'and that is remembered too')

  pluggy.on('/items/malformed', (_request, res) => { sendJson(res, 400, { code: 400, message: 'invalid id' }) })
  for (let call = 0; call < 2; call++) {
    const refused = await item('malformed')
    t.equal(refused.statusCode, 403)
    t.equal(refused.json().code, 'FORBIDDEN')
  }
  t.equal(lookups(pluggy, 'malformed'), 2, 'a 400 is not remembered')
})

t.test('/bills and /consents are reachable by default, a client only its own', async t => {
  const { pluggy, app, clientA } = await setup(t)
  pluggy.consents.set('consent-a', 'item-a')
  pluggy.items.set('item-b', 'client-b')
  pluggy.consents.set('consent-b', 'item-b')
  const call = async (payload: Record<string, unknown>, headers = clientA) =>
    await app.inject({ method: 'POST', url: '/aggregator', headers, payload: { method: 'GET', ...payload } })
  t.match((await call({ endpoint: '/consents', itemId: 'item-a' })).json(), { results: [{ id: 'consent-a' }] })
  t.equal((await call({ endpoint: '/consents/consent-a' })).statusCode, 200)
  t.equal((await call({ endpoint: '/consents/consent-b' })).statusCode, 403, 'another client\'s consent')
  t.match((await call({ endpoint: '/bills', accountId: 'acc-a' })).json(), { results: [{ id: 'bill-of-acc-a' }] })
  t.equal((await call({ endpoint: '/bills/bill-1' })).statusCode, 403, 'a bill does not say whose it is')
  const named = await call({ endpoint: '/bills/bill-1', accountId: 'acc-a' })
  t.equal(named.statusCode, 403, 'naming an account does not help')
  t.equal((await call({ endpoint: '/bills/bill-1' }, bearer(userToken()))).statusCode, 200, 'a user reaches any')
  t.equal((await call({ endpoint: '/accounts', itemId: ['item-a', 'item-b'] })).statusCode, 403,
    'a list of items names none of the client\'s')
})

t.test('a client pages through its own transactions as the SDK does: pages, and /v2/transactions\' cursor', async t => {
  const { pluggy, app, clientA } = await setup(t)
  for (const id of ['tx-1', 'tx-2', 'tx-3', 'tx-4', 'tx-5']) pluggy.transactions.set(id, 'acc-a')
  const call = async (payload: Record<string, unknown>) =>
    await app.inject({ method: 'POST', url: '/aggregator', headers: clientA, payload: { method: 'GET', ...payload } })
  const second = await call({ endpoint: '/transactions', accountId: 'acc-a', page: 2, pageSize: 2 })
  t.match(second.json(), { results: [{ id: 'tx-3' }, { id: 'tx-4' }], page: 2, total: 5, totalPages: 3 })
  const seen: string[] = []
  let after: string | null | undefined
  for (let page = 0; page < 10 && after !== null; page++) {
    const cursor = after === undefined ? {} : { after }
    const res = await call({ endpoint: '/v2/transactions', accountId: 'acc-a', ...cursor })
    t.equal(res.statusCode, 200)
    const { results, next } = res.json() as { results: Array<{ id: string }>, next: string | null }
    seen.push(...results.map(result => result.id))
    after = next === null ? null : new URL(next).searchParams.get('after')
  }
  t.same(seen, ['tx-1', 'tx-2', 'tx-3', 'tx-4', 'tx-5'], 'every transaction once, following next')
  const ids = await call({ endpoint: '/v2/transactions', accountId: 'acc-a', ids: ['tx-1', 'tx-2'] })
  t.equal(ids.statusCode, 200)
  t.equal(pluggy.received.at(-1)?.query.get('ids'), 'tx-1,tx-2', 'ids as one comma-separated value')
})
