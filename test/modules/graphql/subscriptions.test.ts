import { Writable } from 'node:stream'
import t, { type Test } from 'tap'
import { startFakePluggy } from '../../fixtures/fake-pluggy.js'
import { NEEDS_REDIS, startRedis } from '../../fixtures/redis.js'
import {
  aggregatorConfig,
  subscribe,
  subscribed,
  webhook,
  wsClient,
  type Delivery
} from '../../fixtures/item-subscriptions.js'
import { buildTestApp, clientToken, freshDatabase, NEEDS_POSTGRES, testNeeding, userToken } from '../../helper.js'

/**
 * Two instances sharing `shared` (a Redis, a PostgreSQL database, or nothing): a webhook at one reaches a subscriber at
 * the other.
 */
async function twoInstances (t: Test, shared: Record<string, string>, expectedTransport: string): Promise<void> {
  const pluggy = await startFakePluggy(t)
  pluggy.items.set('item-1', 'client-a')
  pluggy.itemStatuses.set('item-1', 'UPDATING')
  const receiver = await buildTestApp(t, { ...aggregatorConfig(pluggy), ...shared })
  const other = await buildTestApp(t, { ...aggregatorConfig(pluggy), ...shared })
  t.equal(other.changeFeed.transport, expectedTransport)

  const user = subscribe(await wsClient(t, other, { Authorization: `Bearer ${userToken()}` }), 'item-1')
  const owner = subscribe(
    await wsClient(t, other, { authorization: `Bearer ${clientToken({ sub: 'client-a' })}` }),
    'item-1'
  )
  const elsewhere = subscribe(await wsClient(t, other, { authorization: `Bearer ${userToken()}` }), 'item-2')
  await subscribed(other, 3)

  await webhook(receiver, 'item-1', 'item/updated')
  await Promise.all([user.next(1), owner.next(1)])
  t.match(user.deliveries[0]?.data?.aggregatorItem, {
    itemId: 'item-1',
    status: 'UPDATING',
    event: 'item/updated',
    updatedAt: /^\d{4}-\d\d-\d\dT/
  }, 'the status the aggregator reported, not the webhook\'s claim')
  t.same(owner.deliveries[0], user.deliveries[0], 'the owning client hears it too')

  pluggy.itemStatuses.set('item-1', 'UPDATED')
  await webhook(other, 'item-1', 'item/updated')
  await user.next(2)
  t.equal(user.deliveries[1]?.data?.aggregatorItem.status, 'UPDATED', 'each webhook, at whichever instance')
  t.equal(elsewhere.deliveries.length, 0, 'another item\'s subscriber hears nothing')

  user.stop()
  owner.stop()
  elsewhere.stop()
  for (let attempt = 0; attempt < 400 && other.changeFeed.itemSubscribers() > 0; attempt++) {
    await new Promise(resolve => setTimeout(resolve, 25))
  }
  t.equal(other.changeFeed.itemSubscribers(), 0, 'a completed subscription frees its listener at once')
}

testNeeding(t, 'two instances through Redis', [NEEDS_REDIS], async t => {
  const redis = await startRedis(t)
  await twoInstances(t, { REDIS_URL: redis.url }, 'redis')
})

testNeeding(t, 'two instances through PostgreSQL LISTEN/NOTIFY', [NEEDS_POSTGRES], async t => {
  await twoInstances(t, (await freshDatabase(t, 'postgres')).env, 'postgres')
})

t.test('one instance in-process; credentials and ownership of subscriptions', async t => {
  const pluggy = await startFakePluggy(t)
  pluggy.items.set('item-1', 'client-a')
  const app = await buildTestApp(t, aggregatorConfig(pluggy))
  t.equal(app.changeFeed.transport, 'local')

  const stranger = subscribe(
    await wsClient(t, app, { authorization: `Bearer ${clientToken({ sub: 'client-b' })}` }),
    'item-1'
  )
  const refused = await stranger.done as Delivery[] | undefined
  t.match(
    refused,
    [{ message: 'Acesso negado a itens de outro usuário', extensions: { code: 'FORBIDDEN' } }],
    'a client subscribes only to its own items'
  )
  const anonymous = subscribe(await wsClient(t, app, {}), 'item-1')
  t.match(await anonymous.done, [{ extensions: { code: 'TOKEN_INVALID' } }], 'no token, no subscription')
  const expired = subscribe(await wsClient(t, app, {
    authorization: `Bearer ${userToken({
    expOffset: -10,
    iatOffset: -100,
    nbfOffset: -100
  })}`
  }), 'item-1')
  t.match(await expired.done, [{ extensions: { code: 'TOKEN_EXPIRED' } }])

  const owner = subscribe(
    await wsClient(t, app, { authorization: `Bearer ${clientToken({ sub: 'client-a' })}` }),
    'item-1'
  )
  await subscribed(app, 1)
  await webhook(app, 'item-1', 'item/login_succeeded')
  await owner.next(1)
  t.match(owner.deliveries[0]?.data?.aggregatorItem, {
    itemId: 'item-1',
    status: 'UPDATED',
    event: 'item/login_succeeded'
  })
})

t.test('a connection closes with 4401 when its token expires, and its subscriptions end with it', async t => {
  const pluggy = await startFakePluggy(t)
  pluggy.items.set('item-1', 'client-a')
  const app = await buildTestApp(t, aggregatorConfig(pluggy))
  // A token that expires 1–2 s from now; a machine too slow to subscribe within that tries a longer one.
  for (const seconds of [2, 5, 15]) {
    const token = clientToken({ sub: 'client-a', expOffset: seconds })
    const expiresAtMs =
      (JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as { exp: number }).exp * 1000
    // The close is awaited below: not an error to print.
    const client = await wsClient(t, app, { authorization: `Bearer ${token}` }, () => {})
    const closed = new Promise<{ code: number, atMs: number }>(resolve => {
      client.on('closed', event => { resolve({ code: (event as { code: number }).code, atMs: Date.now() }) })
    })
    const live = subscribe(client, 'item-1')
    const refused = await Promise.race([subscribed(app, 1).then(() => undefined), live.done])
    if (refused !== undefined) {
      t.match(
        refused,
        [{ extensions: { code: 'TOKEN_EXPIRED' } }],
        `expired before it subscribed (${seconds} s): a longer token`
      )
      continue
    }
    const { code, atMs } = await closed
    t.equal(code, 4401, 'closed as unauthorized')
    t.ok(atMs >= expiresAtMs - 1000 && atMs < expiresAtMs + 60_000, 'at the token\'s expiry, not before')
    await live.done
    for (let attempt = 0; attempt < 400 && app.changeFeed.itemSubscribers() > 0; attempt++) {
      await new Promise(resolve => setTimeout(resolve, 25))
    }
    t.equal(app.changeFeed.itemSubscribers(), 0, 'its subscription ended with it')
    const received = live.deliveries.length
    await webhook(app, 'item-1', 'item/updated')
    t.equal(live.deliveries.length, received, 'nothing more reaches it')
    const rest = await app.inject({ method: 'GET', url: '/auth/me', headers: { authorization: `Bearer ${token}` } })
    t.equal(rest.json().code, 'TOKEN_EXPIRED', 'as REST refuses the same token')
    return
  }
  t.fail('no token lived long enough to subscribe')
})

t.test('a subscription\'s document is held to the document limits before it is parsed; ' +
  'the connection stays usable', async t => {
  const pluggy = await startFakePluggy(t)
  pluggy.items.set('item-1', 'client-a')
  pluggy.itemStatuses.set('item-1', 'UPDATING')
  const app = await buildTestApp(t, aggregatorConfig(pluggy))
  const client = await wsClient(t, app, { authorization: `Bearer ${clientToken({ sub: 'client-a' })}` })
  const refusal = async (query: string): Promise<unknown> => await new Promise(resolve => {
    client.subscribe({ query }, { next: () => {}, error: resolve, complete: () => { resolve('completed') } })
  })
  const deep = `subscription{aggregatorItem(itemId:"item-1")${'{a'.repeat(3000)}${'}'.repeat(3000)}}`
  t.match(await refusal(deep), [
    { message: /exceeds the query depth limit of 10$/, extensions: { code: 'BAD_REQUEST', maxDepth: 10 } }
  ])
  const long = `subscription { aggregatorItem(itemId: "item-1") { status } } #${'x'.repeat(20_000)}`
  t.match(await refusal(long), [
    { message: /bytes exceeds the limit of 16384 bytes$/, extensions: { code: 'BAD_REQUEST', maxBytes: 16384 } }
  ])
  // Mercurius validates no subscription: the service does, with HTTP's rules, before it starts.
  t.match(await refusal('subscription { aggregatorItem(itemId: "item-1") { nope } }'), [
    { message: /Cannot query field "nope"/, extensions: { code: 'VALIDATION_FAILED' } }
  ])
  t.match(await refusal('subscription { aggregatorItem { status } }'), [
    { message: /argument "itemId" of type "ID!" is required/, extensions: { code: 'VALIDATION_FAILED' } }
  ])

  const owner = subscribe(client, 'item-1')
  await subscribed(app, 1)
  await webhook(app, 'item-1', 'item/updated')
  await owner.next(1)
  t.match(
    owner.deliveries[0]?.data?.aggregatorItem,
    { itemId: 'item-1', status: 'UPDATING' },
    'the same connection subscribes'
  )
})

testNeeding(t, 'a status the feed cannot carry leaves the verified item saved, ' +
  'and the log names that step', [NEEDS_REDIS], async t => {
  const redis = await startRedis(t)
  const pluggy = await startFakePluggy(t)
  pluggy.items.set('item-1', 'client-a')
  pluggy.itemStatuses.set('item-1', 'UPDATED')
  const lines: Array<Record<string, unknown>> = []
  const stream = new Writable({
    write (chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>)
      done()
    }
  })
  const app = await buildTestApp(t, {
    ...aggregatorConfig(pluggy),
    REDIS_URL: redis.url
  }, { logger: { level: 'info', stream } })
  redis.kill()
  await webhook(app, 'item-1', 'item/updated')
  const unpublished = 'webhook item verified and saved, but its status did not reach the other instances\' subscribers'
  for (let attempt = 0; attempt < 400 && !lines.some(line => line.msg === unpublished); attempt++) {
    await new Promise(resolve => setTimeout(resolve, 25))
  }
  t.match(lines.find(line => line.msg === unpublished), {
    itemId: 'item-1',
    event: 'item/updated',
    err: { message: /./ }
  })
  t.notOk(
    lines.some(line => typeof line.msg === 'string' && line.msg.includes('verification failed')),
    'not reported as a failed verification'
  )
  t.match(
    await app.store.aggregatorEvents.item('item-1'),
    { status: 'UPDATED', clientUserId: 'client-a' },
    'the verified item is saved'
  )
})
