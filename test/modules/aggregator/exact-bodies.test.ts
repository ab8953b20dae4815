import t from 'tap'
import type { ServerResponse } from 'node:http'
import { assertErrorBody, bearer, buildTestApp, userToken } from '../../helper.js'
import { PLUGGY_CLIENT_ID, PLUGGY_CLIENT_SECRET, startFakePluggy } from '../../fixtures/fake-pluggy.js'
import { answerWith, RELAYED_STATUSES, upstreamBody } from '../../fixtures/upstream-bodies.js'

const credentials = { AGGREGATOR_CLIENT_ID: PLUGGY_CLIENT_ID, AGGREGATOR_CLIENT_SECRET: PLUGGY_CLIENT_SECRET }
const JSON_UTF8 = 'application/json; charset=utf-8'

t.test('POST /aggregator and connect tokens: the aggregator\'s 4xx (and relayed 2xx) arrive byte for byte', async t => {
  const pluggy = await startFakePluggy(t)
  let status = 200
  const answer = (_request: unknown, res: ServerResponse): void => {
    answerWith(res, status, upstreamBody(status), JSON_UTF8)
  }
  pluggy.on('/connectors', answer)
  pluggy.on('/connect_token', answer)
  const app = await buildTestApp(t, { AGGREGATOR_URL: pluggy.url, ...credentials })
  const user = bearer(userToken())
  const relay = async (endpoint: string) =>
    await app.inject({ method: 'POST', url: '/aggregator', headers: user, payload: { endpoint, method: 'GET' } })
  const connectToken = async (sub: string) =>
    await app.inject({
      method: 'POST',
      url: '/aggregator/connect_token',
      headers: bearer(userToken({ sub })),
      payload: {}
    })
  for (status of RELAYED_STATUSES) {
    const relayed = await relay('/connectors')
    t.equal(relayed.statusCode, status, `relay ${status}`)
    t.equal(relayed.body, upstreamBody(status), `relay ${status}: the aggregator's bytes`)
    t.equal(relayed.headers['content-type'], JSON_UTF8)
    if (status < 400) continue
    const token = await connectToken(`user-${status}`)
    t.equal(token.statusCode, status, `connect token ${status}`)
    t.equal(token.body, upstreamBody(status), `connect token ${status}: the aggregator's bytes`)
  }

  // A connect token the aggregator made is the service's own answer; its own errors keep the ErrorBody.
  pluggy.on('/connect_token', (_request, res) => { answerWith(res, 200, '{"accessToken":"ct-1"}', 'application/json') })
  t.same((await connectToken('made')).json(), { accessToken: 'ct-1', expiresIn: 1800, itemId: null })
  const refused = await relay('/auth')
  assertErrorBody(t, refused.json(), 403, '/aggregator')
  t.equal(refused.json().code, 'FORBIDDEN')
})
