import t from 'tap'
import type { ServerResponse } from 'node:http'
import { assertErrorBody, bearer, buildTestApp, userToken } from '../../helper.js'
import { PLUGGY_CLIENT_ID, PLUGGY_CLIENT_SECRET, startFakePluggy } from '../../fixtures/fake-pluggy.js'
import { RELAYED_STATUSES, upstreamBody } from '../../fixtures/upstream-bodies.js'

const credentials = { AGGREGATOR_CLIENT_ID: PLUGGY_CLIENT_ID, AGGREGATOR_CLIENT_SECRET: PLUGGY_CLIENT_SECRET }

t.test('POST /aggregator and the connect token: the aggregator\'s 4xx (and the relay\'s 2xx) arrive byte for byte', async t => {
  const pluggy = await startFakePluggy(t)
  let status = 200
  const answer = (_request: unknown, res: ServerResponse): void => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' })
    res.end(upstreamBody(status))
  }
  pluggy.on('/connectors', answer)
  pluggy.on('/connect_token', answer)
  const app = await buildTestApp(t, { AGGREGATOR_URL: pluggy.url, ...credentials })
  for (status of RELAYED_STATUSES) {
    const relayed = await app.inject({ method: 'POST', url: '/aggregator', headers: bearer(userToken()), payload: { endpoint: '/connectors', method: 'GET' } })
    t.equal(relayed.statusCode, status, `relay ${status}`)
    t.equal(relayed.body, upstreamBody(status), `relay ${status}: the aggregator's bytes`)
    t.equal(relayed.headers['content-type'], 'application/json; charset=utf-8')
    if (status < 400) continue
    const token = await app.inject({ method: 'POST', url: '/aggregator/connect_token', headers: bearer(userToken({ sub: `user-${status}` })), payload: {} })
    t.equal(token.statusCode, status, `connect token ${status}`)
    t.equal(token.body, upstreamBody(status), `connect token ${status}: the aggregator's bytes`)
  }

  // A connect token the aggregator made is the service's own answer; its own errors keep the ErrorBody.
  pluggy.on('/connect_token', (_request, res) => { res.writeHead(200, { 'content-type': 'application/json' }); res.end('{"accessToken":"ct-1"}') })
  const made = await app.inject({ method: 'POST', url: '/aggregator/connect_token', headers: bearer(userToken({ sub: 'made' })), payload: {} })
  t.same(made.json(), { accessToken: 'ct-1', expiresIn: 1800, itemId: null })
  const refused = await app.inject({ method: 'POST', url: '/aggregator', headers: bearer(userToken()), payload: { endpoint: '/auth', method: 'GET' } })
  assertErrorBody(t, refused.json(), 403, '/aggregator')
  t.equal(refused.json().code, 'FORBIDDEN')
})
