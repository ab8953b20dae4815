import t, { type Test } from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { bearer, buildTestApp, userToken } from '../../helper.js'
import { PLUGGY_CLIENT_ID, PLUGGY_CLIENT_SECRET, startFakePluggy } from '../../fixtures/fake-pluggy.js'

function assertNeverKept (t: Test, res: LightMyRequestResponse, what: string): void {
  t.equal(res.headers['cache-control'], 'no-store, max-age=0, private', `${what}: Cache-Control`)
  t.equal(res.headers.pragma, 'no-cache', `${what}: Pragma`)
  t.equal(res.headers.expires, '0', `${what}: Expires`)
}

t.test('no cache keeps a connect token (its replay included) nor a relayed aggregator answer', async t => {
  const pluggy = await startFakePluggy(t)
  pluggy.on('/accounts', (_request, res) => {
    // The aggregator's own answer invites a shared cache to keep it: it is not passed on.
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'public, max-age=600' })
    res.end(JSON.stringify({ results: [{ id: 'acc-1', balance: 10 }] }))
  })
  const app = await buildTestApp(t, {
    AGGREGATOR_URL: pluggy.url,
    AGGREGATOR_CLIENT_ID: PLUGGY_CLIENT_ID,
    AGGREGATOR_CLIENT_SECRET: PLUGGY_CLIENT_SECRET
  })
  const user = bearer(userToken())

  const connect = async (): Promise<LightMyRequestResponse> => await app.inject({
    method: 'POST',
    url: '/aggregator/connect_token',
    headers: { ...user, 'idempotency-key': 'connect-1' },
    payload: {}
  })
  const created = await connect()
  t.equal(created.statusCode, 201)
  t.match(created.json(), { accessToken: /^ct-/ })
  assertNeverKept(t, created, 'a connect token')
  const replayed = await connect()
  t.equal(replayed.headers['idempotent-replayed'], 'true')
  t.equal(replayed.body, created.body, 'the same token')
  assertNeverKept(t, replayed, 'its replay')

  const relayed = await app.inject({
    method: 'POST',
    url: '/aggregator',
    headers: user,
    payload: { endpoint: '/accounts', method: 'GET' }
  })
  t.equal(relayed.statusCode, 200)
  assertNeverKept(t, relayed, 'a relayed answer')
})
