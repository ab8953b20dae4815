import t, { type Test } from 'tap'
import { AggregatorApi } from '../../src/upstream/aggregator.js'
import { UpstreamClient } from '../../src/upstream/client.js'
import { RelayClient } from '../../src/upstream/relay.js'
import { silentLog } from '../helper.js'
import { PLUGGY_CLIENT_ID, PLUGGY_CLIENT_SECRET, startFakePluggy, type FakePluggy } from '../fixtures/fake-pluggy.js'
import { sendJson } from '../fixtures/fake-server.js'

/** The aggregator over a fake Pluggy, on a clock the test moves (`clock.at` ms after now). */
async function setup (t: Test, keyLifetimeSeconds: number) {
  const pluggy = await startFakePluggy(t)
  pluggy.keyLifetimeSeconds = keyLifetimeSeconds
  const started = Date.now()
  const clock = { at: 0 }
  const options = { name: 'aggregator' as const, baseUrl: pluggy.url, timeoutMs: 5000 }
  const relayClient = new RelayClient(options)
  t.teardown(async () => { await relayClient.close() })
  const aggregator = new AggregatorApi({
    client: new UpstreamClient(options),
    relayClient,
    credentials: { clientId: PLUGGY_CLIENT_ID, clientSecret: PLUGGY_CLIENT_SECRET },
    now: () => started + clock.at
  })
  const call = async (path = 'connectors'): Promise<number> =>
    (await aggregator.call({ method: 'GET', path, log: silentLog })).status
  return { pluggy, clock, call }
}

const seconds = (value: number): number => value * 1000
const authCalls = (pluggy: FakePluggy): number => pluggy.received.filter(r => r.path === '/auth').length

t.test('a two-hour key is used until five minutes before its exp, then renewed before use', async t => {
  const { pluggy, clock, call } = await setup(t, 7200)
  t.equal(await call(), 200)
  clock.at = seconds(7200 - 300 - 30)
  t.equal(await call(), 200)
  t.equal(authCalls(pluggy), 1, 'still the first key 5½ minutes before its exp')
  clock.at = seconds(7200 - 300 + 30)
  t.equal(await call(), 200)
  t.equal(authCalls(pluggy), 2, 'renewed 4½ minutes before its exp, before the call left')
})

t.test('a short-lived key is used for three quarters of its life, not exchanged on every call', async t => {
  const { pluggy, clock, call } = await setup(t, 60)
  t.equal(await call(), 200)
  clock.at = seconds(40)
  t.equal(await call(), 200)
  t.equal(authCalls(pluggy), 1, 'used 40 s into a 60 s life')
  clock.at = seconds(50)
  t.equal(await call(), 200)
  t.equal(authCalls(pluggy), 2, 'renewed within its last quarter')
})

t.test('a 403 renews the key only once it is due; the call is then sent once more', async t => {
  const { pluggy, clock, call } = await setup(t, 7200)
  let answered = 0
  pluggy.on('/items/x', (_request, res) => {
    // The clock passes the key's renewal time while the call is on its way.
    if (answered++ === 0) clock.at = seconds(7200 - 60)
    sendJson(res, 403, { code: 403, message: 'Forbidden' })
  })
  t.equal(await call('items/x'), 403)
  t.equal(authCalls(pluggy), 2, 'a 403 with a key due for renewal: renewed')
  t.equal(answered, 2, 'and sent again, once')
})

t.test('a key refused (401) under concurrent calls is renewed once for them all, each sent once more', async t => {
  const { pluggy, call } = await setup(t, 7200)
  t.equal(await call(), 200)
  pluggy.revokeKeys()
  t.same(await Promise.all(Array.from({ length: 5 }, async () => await call())), [200, 200, 200, 200, 200])
  t.equal(authCalls(pluggy), 2, 'one exchange for the five refusals')
  t.equal(pluggy.received.filter(r => r.path === '/connectors').length, 11, 'the first call, five refused, five again')
  t.equal(await call(), 200)
  t.equal(authCalls(pluggy), 2, 'the renewed key kept')
})
