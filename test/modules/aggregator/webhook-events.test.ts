import { randomUUID } from 'node:crypto'
import t from 'tap'
import { buildDataApp, forEachEngine } from '../../helper.js'
import { startFakePluggy } from '../../fixtures/fake-pluggy.js'
import {
  ITEM_EVENTS, ITEM_STATUSES, UNCOMMON_EXECUTION_STATUSES, legacyWebhookEvents, sdkWebhookEvents
} from '../../fixtures/pluggy-shapes.js'
import { DIGEST_WINDOW_MS, WEBHOOK_BODY_LIMIT } from '../../../src/modules/aggregator/index.js'
import type { App } from '../../../src/app.js'
import { credentials, lookups, waitFor, webhook } from './verification-helpers.js'

const post = async (app: App, payload: Record<string, unknown>) =>
  await app.inject({ method: 'POST', url: '/aggregator/webhook', payload })

forEachEngine(t, 'every event of the SDK\'s webhook.ts is accepted and stored; only item events have the item ' +
  'read', async (t, engine) => {
  const pluggy = await startFakePluggy(t)
  const ids = { itemId: randomUUID(), accountId: randomUUID(), clientId: randomUUID() }
  pluggy.items.set(ids.itemId, 'client-1')
  const app = await buildDataApp(t, engine, { AGGREGATOR_URL: pluggy.url, ...credentials })
  const events = sdkWebhookEvents(ids)
  t.equal(new Set(events.map(event => event.event)).size, 32, 'the 32 names of WEBHOOK_EVENTS')
  for (const event of events) {
    const res = await post(app, event)
    t.equal(res.statusCode, 200, String(event.event))
  }
  for (const event of legacyWebhookEvents(randomUUID())) t.equal((await post(app, event)).statusCode, 200)
  t.equal(await app.store.aggregatorEvents.count(), events.length + 2, 'each stored')
  await app.close()
  t.equal(lookups(pluggy, ids.itemId), ITEM_EVENTS.length, 'one GET /items per item event, none for transactions/*')
  t.equal(pluggy.received.filter(r => r.path.startsWith('/items/')).length, ITEM_EVENTS.length + 1,
    'and one for the legacy item/created; none for connector, payment or transfer events')
})

forEachEngine(t, 'an event without eventId: a redelivery within minutes is one event, later it is a new one; ' +
  'an eventId is one event for good', async (t, engine) => {
  const pluggy = await startFakePluggy(t)
  pluggy.items.set('legacy-item', 'client-1')
  const app = await buildDataApp(t, engine, { AGGREGATOR_URL: pluggy.url, ...credentials })
  const [legacy = {}] = legacyWebhookEvents('legacy-item')
  t.equal((await post(app, legacy)).statusCode, 200)
  t.equal((await post(app, { ...legacy })).statusCode, 200, 'a redelivery is acknowledged')
  t.equal(await app.store.aggregatorEvents.count(), 1, '…and not stored twice')

  const events = app.store.aggregatorEvents
  const event = (eventKey: string, receivedAt: Date, keyHeldForMs?: number) => ({
    eventKey,
    event: 'item/updated',
    itemId: 'i1',
    payload: '{}',
    receivedAt: receivedAt.toISOString(),
    ...(keyHeldForMs === undefined ? {} : { keyHeldForMs })
  })
  const at = Date.parse('2026-03-01T10:00:00.000Z')
  const minutes = (n: number): Date => new Date(at + n * 60_000)
  t.same(await events.record(event('sha256:d', minutes(0), DIGEST_WINDOW_MS)), { stored: true })
  t.same(await events.record(event('sha256:d', minutes(4), DIGEST_WINDOW_MS)), { stored: false }, '4 minutes later')
  t.same(await events.record(event('sha256:d', minutes(6), DIGEST_WINDOW_MS)), { stored: true }, '6 minutes later')
  t.same(await events.record(event('sha256:d', minutes(8), DIGEST_WINDOW_MS)), { stored: false }, 'the window restarts')
  t.same(await events.record(event('sha256:d', minutes(20), DIGEST_WINDOW_MS)), { stored: true })
  t.same(await events.record(event('id:e', minutes(0))), { stored: true })
  t.same(await events.record(event('id:e', minutes(60 * 24))), { stored: false }, 'an eventId a day later')
  t.equal(await events.count(), 5, 'every event kept, the earlier ones under retired keys')
  await app.close()
  t.equal(lookups(pluggy, 'legacy-item'), 1, 'the redelivery was not verified again')
})

forEachEngine(t, 'the webhook body limit holds the largest plausible transactions/* event', async (t, engine) => {
  const pluggy = await startFakePluggy(t)
  const app = await buildDataApp(t, engine, { AGGREGATOR_URL: pluggy.url, ...credentials })
  const event = (count: number) => ({
    id: randomUUID(),
    eventId: randomUUID(),
    event: 'transactions/deleted',
    itemId: randomUUID(),
    clientId: randomUUID(),
    accountId: randomUUID(),
    transactionIds: Array.from({ length: count }, () => randomUUID())
  })
  const bytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value))
  const perId = (bytes(event(1001)) - bytes(event(1))) / 1000
  t.equal(perId, 39, 'each UUID in transactionIds costs 39 bytes')
  const largest = event(20_000)
  t.comment(`20 000 ids: ${bytes(largest)} bytes; the limit ${WEBHOOK_BODY_LIMIT} holds ` +
    `${Math.floor((WEBHOOK_BODY_LIMIT - bytes(event(0))) / perId)}`)
  t.ok(bytes(largest) < WEBHOOK_BODY_LIMIT * 0.75, 'with a quarter of the limit to spare')
  t.equal((await post(app, largest)).statusCode, 200, 'a year of a busy account\'s transactions in one event')
  t.equal((await post(app, event(27_000))).statusCode, 413, 'over the limit: 413')
  t.equal(await app.store.aggregatorEvents.count(), 1)
  await app.close()
  t.equal(pluggy.received.filter(r => r.path.startsWith('/items/')).length, 0, 'not an item event: no item read')
})

forEachEngine(t, 'every Item status is verified and kept, whatever its executionStatus, error, statusDetail or ' +
  'clientUserId', async (t, engine) => {
  const pluggy = await startFakePluggy(t)
  const app = await buildDataApp(t, engine, { AGGREGATOR_URL: pluggy.url, ...credentials })
  const statusDetail = { accounts: { isUpdated: true, lastUpdatedAt: '2026-01-15T12:00:00.000Z' }, transactions: null }
  const items = ITEM_STATUSES.map((status, n) => ({
    id: `item-${n}`,
    status,
    executionStatus: UNCOMMON_EXECUTION_STATUSES[n % UNCOMMON_EXECUTION_STATUSES.length] ?? 'SUCCESS',
    owner: n % 2 === 0 ? `client-${n}` : null
  }))
  for (const { id, status, executionStatus, owner } of items) {
    pluggy.items.set(id, owner)
    pluggy.itemStatuses.set(id, status)
    pluggy.itemFields.set(id, {
      executionStatus,
      error: status === 'LOGIN_ERROR' ? { code: 'INVALID_CREDENTIALS', message: 'wrong', providerMessage: 'x' } : null,
      statusDetail: executionStatus === 'PARTIAL_SUCCESS' ? statusDetail : null
    })
    await webhook(app, id, status === 'LOGIN_ERROR' ? 'item/error' : 'item/updated')
  }
  const kept = async (): Promise<boolean> =>
    (await Promise.all(items.map(async ({ id }) => await app.store.aggregatorEvents.item(id)))).every(Boolean)
  await waitFor(t, 'every item verified', kept)
  for (const { id, status, owner } of items) {
    t.match(await app.store.aggregatorEvents.item(id), { status, clientUserId: owner, deletedAt: null }, `${status}`)
  }
})
