import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { Writable } from 'node:stream'
import {
  apiKey,
  assertErrorBody,
  bearer,
  buildDataApp,
  buildTestApp,
  clientToken,
  forEachEngine,
  freshDatabase,
  userToken,
  TEXTS
} from '../../helper.js'
import { Store } from '../../../src/store/store.js'
import { PLUGGY_CLIENT_ID, PLUGGY_CLIENT_SECRET, startFakePluggy } from '../../fixtures/fake-pluggy.js'
import { sendJson } from '../../fixtures/fake-server.js'

const credentials = { AGGREGATOR_CLIENT_ID: PLUGGY_CLIENT_ID, AGGREGATOR_CLIENT_SECRET: PLUGGY_CLIENT_SECRET }

async function setup (t: Test, overrides: Record<string, string> = {}) {
  const pluggy = await startFakePluggy(t)
  const app = await buildTestApp(t, {
    AGGREGATOR_URL: pluggy.url,
    AGGREGATOR_TIMEOUT_MS: '1000',
    ...credentials,
    ...overrides
  })
  const relayed = () => pluggy.received.filter(r => r.path !== '/auth')
  return { pluggy, app, relayed }
}

t.test('POST /aggregator relays GET fields as the query and other methods\' as the body', async t => {
  const { pluggy, app } = await setup(t, { AGGREGATOR_ALLOWED_METHODS: 'GET,POST' })
  const user = bearer(userToken())
  const get = await app.inject({
    method: 'POST',
    url: '/aggregator',
    headers: user,
    payload: {
      endpoint: '/connectors',
      method: 'GET',
      pageSize: 2,
      name: 'Itaú',
      sandbox: false,
      countries: ['BR', 'MX'],
      types: ['PERSONAL_BANK', 'BUSINESS_BANK']
    }
  })
  t.equal(get.statusCode, 200)
  const page = { results: [{ id: 1 }, { id: 2 }], page: 1, total: 3, totalPages: 2 }
  t.match(get.json(), page, 'Pluggy\'s page, as received')
  const sent = pluggy.received.find(r => r.path === '/connectors')
  t.same(Object.fromEntries(sent?.query ?? []), {
    pageSize: '2',
    name: 'Itaú',
    sandbox: 'false',
    countries: 'BR,MX',
    types: 'PERSONAL_BANK,BUSINESS_BANK'
  }, 'lists travel comma-joined, as the SDK sends them')
  t.match(sent?.headers['x-api-key'], /^ey/, 'the API key travels as X-API-KEY')
  t.equal(sent?.headers.authorization, undefined, 'the caller\'s token does not go to the aggregator')

  const post = await app.inject({
    method: 'POST',
    url: '/aggregator',
    headers: user,
    payload: { endpoint: 'items', method: 'POST', connectorId: 2, parameters: { user: 'u' } }
  })
  t.same(post.json(), {
    echo: {
      method: 'POST',
      path: '/items',
      query: {},
      body: { connectorId: 2, parameters: { user: 'u' } }
    }
  })

  const nested = await app.inject({
    method: 'POST',
    url: '/aggregator',
    headers: user,
    payload: { endpoint: '/connectors', method: 'GET', filter: { a: 1 } }
  })
  t.equal(nested.statusCode, 400, 'a GET field that is not a scalar is refused')
  const listOfObjects = await app.inject({
    method: 'POST',
    url: '/aggregator',
    headers: user,
    payload: { endpoint: '/connectors', method: 'GET', ids: [1, 2], filter: [{ a: 1 }] }
  })
  t.equal(listOfObjects.statusCode, 400, '…and so is a list of anything but strings and numbers')
  t.equal(pluggy.authCalls(), 1, 'one /auth for several calls')
})

t.test('POST /aggregator refuses paths and methods outside the allowlist, before sending', async t => {
  const { app, relayed } = await setup(t)
  const user = bearer(userToken())
  for (const [endpoint, method] of [
    ['/auth', 'GET'],
    ['/webhooks', 'GET'],
    ['/connect_token', 'GET'],
    ['/items/x', 'DELETE'],
    ['/items', 'POST'],
    ['/admin', 'GET'],
    ['/itemsx', 'GET']
  ]) {
    const res = await app.inject({ method: 'POST', url: '/aggregator', headers: user, payload: { endpoint, method } })
    t.equal(res.statusCode, 403, `${method} ${endpoint}`)
    t.equal(res.json().message, TEXTS.endpointNotAllowed)
  }
  const forced = await buildTestApp(t, {
    AGGREGATOR_URL: 'http://127.0.0.1:1',
    ...credentials,
    AGGREGATOR_ALLOWED_PATHS: '/auth,/webhooks'
  })
  t.equal((await forced.inject({
    method: 'POST',
    url: '/aggregator',
    headers: user,
    payload: { endpoint: '/webhooks', method: 'GET' }
  })).statusCode, 403, '/auth and /webhooks stay closed even when configured')
  for (const endpoint of [
    'https://evil.example/items',
    '//evil.example/items',
    '/items/../auth',
    '/items/%2e%2e/auth',
    '/items\\x',
    '/items/%0d%0a',
    '/items/%00',
    '/items?x=1',
    '/items#x',
    'items/%252e%252e'
  ]) {
    const res = await app.inject({
      method: 'POST',
      url: '/aggregator',
      headers: user,
      payload: { endpoint, method: 'GET' }
    })
    t.equal(res.statusCode, 400, endpoint)
    assertErrorBody(t, res.json(), 400, '/aggregator')
  }
  const invalid = await app.inject({
    method: 'POST',
    url: '/aggregator',
    headers: user,
    payload: { endpoint: '/items', method: 'HEAD' }
  })
  t.same(invalid.json().message, ['method must be one of the following values: GET, POST, PUT, DELETE, PATCH'])
  t.equal(relayed().length, 0, 'nothing reached the aggregator')
  t.equal((await app.inject({
    method: 'POST',
    url: '/aggregator',
    payload: { endpoint: '/items', method: 'GET' }
  })).statusCode, 401)
})

t.test('a client reaches only its own items; nothing is relayed for another\'s', async t => {
  const { pluggy, app, relayed } = await setup(t)
  pluggy.items.set('item-a', 'client-a')
  pluggy.items.set('item-b', 'client-b')
  pluggy.accounts.set('acc-a', 'item-a')
  pluggy.accounts.set('acc-b', 'item-b')
  pluggy.transactions.set('tx-b', 'acc-b')
  const clientA = bearer(clientToken({ sub: 'client-a' }))
  const call = async (payload: Record<string, unknown>, headers = clientA) => await app.inject({
    method: 'POST',
    url: '/aggregator',
    headers,
    payload: { method: 'GET', ...payload }
  })

  t.equal((await call({ endpoint: '/items/item-a' })).statusCode, 200)
  t.equal((await call({ endpoint: '/accounts', itemId: 'item-a' })).statusCode, 200)
  t.equal((await call({ endpoint: '/transactions', accountId: 'acc-a' })).statusCode, 200)
  t.equal((await call({ endpoint: '/connectors' })).statusCode, 200, 'reference data is open to all')

  const before = relayed().length
  for (const payload of [
    { endpoint: '/items/item-b' },
    { endpoint: '/accounts', itemId: 'item-b' },
    { endpoint: '/accounts/acc-b' },
    { endpoint: '/transactions', accountId: 'acc-b' },
    { endpoint: '/transactions/tx-b' },
    { endpoint: '/items/unknown' },
    { endpoint: '/items/item-a', itemId: 'item-b' }
  ]) {
    const res = await call(payload)
    t.equal(res.statusCode, 403, JSON.stringify(payload))
    t.equal(res.json().message, TEXTS.notYourItem)
  }
  const unscoped = await call({ endpoint: '/accounts' })
  t.equal(unscoped.statusCode, 403, 'a list across every item is refused to a client')
  const lookups = relayed().slice(before)
  t.ok(
    lookups.every(r => r.method === 'GET' && /^\/(items|accounts|transactions)\/[^/]+$/.test(r.path)),
    'only ownership lookups were sent'
  )
  t.notOk(
    lookups.some(r => r.path === '/accounts' || r.query.get('itemId') === 'item-b'),
    'the refused calls were not relayed'
  )

  const user = bearer(userToken())
  t.equal((await call({ endpoint: '/items/item-b' }, user)).statusCode, 200, 'a user is not limited to its own items')
})

t.test('POST /aggregator/connect_token creates a token for the principal only', async t => {
  const { pluggy, app } = await setup(t)
  pluggy.items.set('item-a', 'client-a')
  const res = await app.inject({
    method: 'POST',
    url: '/aggregator/connect_token',
    headers: bearer(clientToken({ sub: 'client-a' })),
    payload: {
      itemId: 'item-a',
      options: { webhookUrl: 'https://evil.example', clientUserId: 'someone-else' },
      webhookUrl: 'https://evil.example'
    }
  })
  t.equal(res.statusCode, 201)
  t.match(res.json(), { accessToken: /^ct-/, expiresIn: 1800, itemId: 'item-a' })
  const sent = pluggy.received.find(r => r.path === '/connect_token')
  t.same(JSON.parse(sent?.body ?? '{}'), {
    itemId: 'item-a',
    options: { clientUserId: 'client-a' }
  }, 'caller options are dropped')

  const fresh = await app.inject({
    method: 'POST',
    url: '/aggregator/connect_token',
    headers: bearer(userToken({ sub: 9 })),
    payload: {}
  })
  t.equal(fresh.statusCode, 201)
  t.equal(fresh.json().itemId, null)
  t.same(JSON.parse(pluggy.received.filter(r => r.path === '/connect_token')[1]?.body ?? '{}'), {
    options: { clientUserId: '9' }
  })

  const before = pluggy.received.filter(r => r.path === '/connect_token').length
  const foreign = await app.inject({
    method: 'POST',
    url: '/aggregator/connect_token',
    headers: bearer(clientToken({ sub: 'client-b' })),
    payload: { itemId: 'item-a' }
  })
  t.equal(foreign.statusCode, 403)
  t.equal(
    pluggy.received.filter(r => r.path === '/connect_token').length,
    before,
    "no token was asked for another client's item"
  )
  t.equal((await app.inject({ method: 'POST', url: '/aggregator/connect_token', payload: {} })).statusCode, 401)
  t.equal((await app.inject({
    method: 'POST',
    url: '/aggregator/connect_token',
    headers: bearer(userToken()),
    payload: { itemId: '../auth' }
  })).statusCode, 400)
})

t.test('the API key: one exchange for 50 concurrent calls, renewed before expiry and after a 401', async t => {
  // One principal makes every call here: its share of the budget is raised out of the way.
  const { pluggy, app } = await setup(t, { AGGREGATOR_REQUESTS_PER_PRINCIPAL_PER_MINUTE: '1000' })
  const user = bearer(userToken())
  const burst = await Promise.all(Array.from({ length: 50 }, async () => await app.inject({
    method: 'POST',
    url: '/aggregator',
    headers: user,
    payload: { endpoint: '/connectors', method: 'GET' }
  })))
  t.same(burst.map(r => r.statusCode), Array(50).fill(200))
  t.equal(pluggy.authCalls(), 1, 'one exchange for the first 50 concurrent calls')

  pluggy.revokeKeys()
  const afterRevoke = await Promise.all(Array.from({ length: 50 }, async () => await app.inject({
    method: 'POST',
    url: '/aggregator',
    headers: user,
    payload: { endpoint: '/connectors', method: 'GET' }
  })))
  t.same(afterRevoke.map(r => r.statusCode), Array(50).fill(200), 'every call succeeds after the renewal')
  t.equal(pluggy.authCalls(), 2, 'one renewal shared by 50 concurrent calls that got a 401')

  // Keys whose exp has come already (the margin before exp: test/upstream/aggregator-key.test.ts).
  pluggy.keyLifetimeSeconds = 0
  pluggy.revokeKeys()
  await app.inject({
    method: 'POST',
    url: '/aggregator',
    headers: user,
    payload: { endpoint: '/connectors', method: 'GET' }
  })
  t.equal(pluggy.authCalls(), 3)
  const expiring = await Promise.all(Array.from({ length: 50 }, async () => await app.inject({
    method: 'POST',
    url: '/aggregator',
    headers: user,
    payload: { endpoint: '/connectors', method: 'GET' }
  })))
  t.same(expiring.map(r => r.statusCode), Array(50).fill(200))
  t.equal(pluggy.authCalls(), 4, 'an expired key is renewed once, before use, for all concurrent calls')
})

t.test('aggregator answers without what the service relies on are 502, never a half-filled answer', async t => {
  const { pluggy, app } = await setup(t)
  pluggy.on('/connect_token', (_req, res) => sendJson(res, 200, { token: 'not-the-field' }))
  const token = await app.inject({
    method: 'POST',
    url: '/aggregator/connect_token',
    headers: bearer(userToken()),
    payload: {}
  })
  t.equal(token.statusCode, 502)
  t.equal(token.json().code, 'UPSTREAM_UNAVAILABLE')
  pluggy.on('/items/garbage', (_req, res) => sendJson(res, 200, ['not', 'an', 'item']))
  const item = await app.inject({
    method: 'POST',
    url: '/aggregator',
    headers: bearer(clientToken({ sub: 'c1' })),
    payload: { endpoint: '/items/garbage', method: 'GET' }
  })
  t.equal(item.statusCode, 502, 'an item lookup answered with garbage is not a guess at its owner')
})

t.test('aggregator failures: refused credentials, not configured, 5xx', async t => {
  const { pluggy, app } = await setup(t)
  pluggy.on('/categories', (_req, res) => sendJson(res, 500, { message: 'boom', stack: 'secret' }))
  const failed = await app.inject({
    method: 'POST',
    url: '/aggregator',
    headers: bearer(userToken()),
    payload: { endpoint: '/categories', method: 'GET' }
  })
  t.equal(failed.statusCode, 502)
  t.notMatch(failed.body, /secret|boom/)

  const wrong = await buildTestApp(t, {
    AGGREGATOR_URL: pluggy.url,
    AGGREGATOR_CLIENT_ID: PLUGGY_CLIENT_ID,
    AGGREGATOR_CLIENT_SECRET: 'wrong'
  })
  const refused = await wrong.inject({
    method: 'POST',
    url: '/aggregator',
    headers: bearer(userToken()),
    payload: { endpoint: '/connectors', method: 'GET' }
  })
  t.equal(refused.statusCode, 502)
  t.equal(refused.json().message, TEXTS.upstreamUnavailable)
  t.notMatch(refused.body, /wrong|CLIENT_KEYS/)

  const unconfigured = await buildTestApp(t, { AGGREGATOR_URL: pluggy.url })
  const res = await unconfigured.inject({
    method: 'POST',
    url: '/aggregator',
    headers: bearer(userToken()),
    payload: { endpoint: '/connectors', method: 'GET' }
  })
  t.equal(res.statusCode, 503)
  t.equal(res.json().message, 'Agregador não configurado')
})

t.test('the aggregator key and secret never reach responses or logs', async t => {
  const pluggy = await startFakePluggy(t)
  let logged = ''
  const stream = new Writable({ write (chunk, _encoding, done) { logged += String(chunk); done() } })
  const app = await buildTestApp(
    t,
    { AGGREGATOR_URL: pluggy.url, ...credentials },
    { logger: { level: 'trace', stream } }
  )
  pluggy.on('/categories', (req, res) =>
    sendJson(res, 200, { seen: req.headers['x-api-key'] === undefined ? 'none' : 'some' })
  )
  const bodies: string[] = []
  for (const payload of [
    { endpoint: '/connectors', method: 'GET' },
    { endpoint: '/categories', method: 'GET' },
    { endpoint: '/auth', method: 'GET' }
  ]) {
    bodies.push((await app.inject({ method: 'POST', url: '/aggregator', headers: bearer(userToken()), payload })).body)
  }
  const issued = pluggy.received.find(r => r.path === '/connectors')?.headers['x-api-key']
  if (typeof issued !== 'string') throw new Error('the aggregator was not called with a key')
  for (const secret of [PLUGGY_CLIENT_SECRET, issued]) {
    t.notMatch(bodies.join('\n'), secret)
    t.notMatch(logged, secret)
  }
})

forEachEngine(t, 'POST /aggregator/webhook: secret, both shapes, each event once', async (t, engine) => {
  const app = await buildDataApp(t, engine, { AGGREGATOR_WEBHOOK_SECRET: 'hook-secret' })
  const post = async (payload: unknown, secret: string | null = 'hook-secret') =>
    await app.inject({
      method: 'POST',
      url: '/aggregator/webhook',
      payload: payload as Record<string, unknown>,
      headers: secret === null ? {} : { 'x-webhook-secret': secret }
    })
  for (const secret of [null, 'wrong', 'hook-secret ', '']) {
    const res = await post({ event: 'item.updated', data: { itemId: 'i1', status: 'UPDATED' } }, secret)
    t.equal(res.statusCode, 401, `secret ${JSON.stringify(secret)}`)
    t.equal(res.json().message, TEXTS.webhookSecretInvalid)
  }
  t.equal(await app.store.aggregatorEvents.count(), 0, 'refused deliveries store nothing')

  const spec = await post({ event: 'item.updated', data: { itemId: 'i1', status: 'UPDATED' } })
  t.equal(spec.statusCode, 200)
  t.same(spec.json(), { received: true })
  t.same((await post({
    event: 'item.updated',
    data: { itemId: 'i1', status: 'UPDATED' }
  })).json(), { received: true }, 'a redelivery is acknowledged')
  t.equal(await app.store.aggregatorEvents.count(), 1, '…and not stored twice')

  const flat = { event: 'item/waiting_user_input', eventId: 'evt-1', itemId: 'i1', id: 'i1', triggeredBy: 'SYNC' }
  t.equal((await post(flat)).statusCode, 200)
  t.equal((await post({ ...flat, triggeredBy: 'USER' })).statusCode, 200, 'the same eventId is one event')
  t.equal(await app.store.aggregatorEvents.count(), 2)
  t.equal((await post({
    event: 'connector/status_updated',
    id: '201',
    eventId: 'evt-3',
    data: { status: 'UNSTABLE' }
  })).statusCode, 200, 'events about no item are stored too (webhook-events.test.ts: every kind the SDK knows)')
  t.equal(await app.store.aggregatorEvents.count(), 3)

  for (const bad of [{}, { event: '' }, { event: 5 }, { event: 'x', data: 'nope' }, [1]]) {
    const res = await post(bad)
    t.equal(res.statusCode, 400, JSON.stringify(bad))
  }
  const huge = await post({ event: 'x', pad: 'x'.repeat(1024 * 1024) })
  t.equal(huge.statusCode, 413)
  t.equal(await app.store.aggregatorEvents.count(), 3)
})

forEachEngine(t, 'a webhook is a notice: ' +
  'the item is read from the aggregator, once per event, and an unknown item changes nothing', async (t, engine) => {
  const pluggy = await startFakePluggy(t)
  pluggy.items.set('i1', 'client-7')
  pluggy.itemStatuses.set('i1', 'LOGIN_ERROR')
  const database =
    engine === 'sqlite'
      ? {
          DATABASE_URL: `sqlite:${join(mkdtempSync(join(tmpdir(), 'bff-webhook-')), 'bff.sqlite')}`,
          DATABASE_SCHEMA: undefined
        }
      : (await freshDatabase(t, engine)).env
  const app = await buildTestApp(t, {
    ...database,
    AGGREGATOR_URL: pluggy.url,
    ...credentials,
    AGGREGATOR_WEBHOOK_SECRET: 'hook-secret'
  })
  const post = async (payload: Record<string, unknown>): Promise<number> => (await app.inject({
    method: 'POST',
    url: '/aggregator/webhook',
    payload,
    headers: { 'x-webhook-secret': 'hook-secret' }
  })).statusCode
  // The sender claims a status; the aggregator says otherwise.
  t.equal(await post({ event: 'item.updated', data: { itemId: 'i1', status: 'UPDATED' } }), 200)
  t.equal(await post({ event: 'item.updated', data: { itemId: 'i1', status: 'UPDATED' } }), 200, 'a redelivery')
  t.equal(await post({
    event: 'item/updated',
    eventId: 'e-unknown',
    itemId: 'forged-item'
  }), 200, 'an item the aggregator does not know is acknowledged')
  // Closing waits for the verifications in flight; the store then shows what they kept.
  await app.close()
  t.equal(
    pluggy.received.filter(r => r.path === '/items/i1').length,
    1,
    'one verification per event, none for the redelivery'
  )
  t.equal(pluggy.received.filter(r => r.path === '/items/forged-item').length, 1)
  const store = await Store.open(database.DATABASE_URL, { schema: database.DATABASE_SCHEMA })
  t.teardown(() => store.close())
  t.match(await store.aggregatorEvents.item('i1'), {
    itemId: 'i1',
    status: 'LOGIN_ERROR',
    clientUserId: 'client-7',
    lastEvent: 'item.updated'
  })
  t.equal(await store.aggregatorEvents.item('forged-item'), undefined, 'no item was made up')
  t.equal(await store.aggregatorEvents.count(), 2, 'both events are stored')
})

forEachEngine(t, 'without a configured secret (development) every delivery is accepted', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const res = await app.inject({
    method: 'POST',
    url: '/aggregator/webhook',
    payload: { event: 'item/created', eventId: 'e', itemId: 'i' }
  })
  t.equal(res.statusCode, 200)
  t.equal((await app.inject({ method: 'GET', url: '/stats', headers: apiKey() })).statusCode, 200)
})

t.test('in production without aggregator credentials the webhook is 503 NOT_CONFIGURED and stores nothing', async t => {
  const app = await buildTestApp(t, {
    NODE_ENV: 'production',
    DATABASE_URL: 'sqlite::memory:',
    JWT_SECRET: 'p'.repeat(40)
  })
  const res = await app.inject({
    method: 'POST',
    url: '/aggregator/webhook',
    payload: { event: 'item/updated', eventId: 'anonymous', itemId: 'i1' }
  })
  t.equal(res.statusCode, 503)
  t.match(res.json(), { code: 'NOT_CONFIGURED', message: 'Agregador não configurado' })
  t.equal(await app.store.aggregatorEvents.count(), 0)
})
