import t from 'tap'
import { startFakePluggy } from '../../fixtures/fake-pluggy.js'
import { aggregatorConfig, subscribe, subscribed, webhook, wsClient } from '../../fixtures/item-subscriptions.js'
import { buildDataApp, clientToken, forEachEngine, userToken } from '../../helper.js'
import { lookups, waitFor } from '../aggregator/verification-helpers.js'

forEachEngine(t, 'an item deleted at the aggregator ends its subscriptions: a last status null, then complete; ' +
  'the stored item is marked deleted', async (t, engine) => {
  const pluggy = await startFakePluggy(t)
  pluggy.items.set('item-1', 'client-a')
  pluggy.itemStatuses.set('item-1', 'UPDATING')
  const app = await buildDataApp(t, engine, aggregatorConfig(pluggy))
  const ownerToken = clientToken({ sub: 'client-a' })
  const owner = subscribe(await wsClient(t, app, { authorization: `Bearer ${ownerToken}` }), 'item-1')
  const user = subscribe(await wsClient(t, app, { authorization: `Bearer ${userToken()}` }), 'item-1')
  const other = subscribe(await wsClient(t, app, { authorization: `Bearer ${userToken()}` }), 'item-2')
  await subscribed(app, 3)
  await webhook(app, 'item-1', 'item/updated')
  await Promise.all([owner.next(1), user.next(1)])

  // Pluggy deletes the item: its item/deleted arrives, and GET /items/item-1 answers 404.
  pluggy.items.delete('item-1')
  await webhook(app, 'item-1', 'item/deleted')
  await waitFor(t, 'the last status', () => owner.deliveries.length >= 2 && user.deliveries.length >= 2, 30_000)
  t.match(owner.deliveries[1]?.data?.aggregatorItem, {
    itemId: 'item-1',
    status: null,
    event: 'item/deleted',
    updatedAt: /^\d{4}-\d\d-\d\dT/
  }, 'the item\'s last status: deleted, as the aggregator confirmed')
  t.same(user.deliveries[1], owner.deliveries[1])
  t.equal(await owner.done, undefined, 'then the subscription completes (no error)')
  t.equal(await user.done, undefined)
  await waitFor(t, 'the listeners freed', () => app.changeFeed.itemSubscribers() === 1)
  t.equal(other.deliveries.length, 0, 'another item\'s subscription stays, unaware')

  t.match(await app.store.aggregatorEvents.item('item-1'), {
    itemId: 'item-1',
    status: null,
    clientUserId: 'client-a',
    lastEvent: 'item/deleted',
    deletedAt: /^\d{4}-\d\d-\d\dT/
  }, 'the stored item is marked deleted')
  const before = lookups(pluggy, 'item-1')
  await webhook(app, 'item-1', 'item/updated')
  await webhook(app, 'never-seen', 'item/deleted')
  await waitFor(t, 'both read', () => lookups(pluggy, 'item-1') > before && lookups(pluggy, 'never-seen') === 1)
  await waitFor(t, 'both settled', async () => (await app.store.jobs.count('verify-item')) === 0)
  t.match(await app.store.aggregatorEvents.item('item-1'), { status: null, lastEvent: 'item/deleted' },
    'a later event about the deleted item changes nothing')
  t.equal(await app.store.aggregatorEvents.item('never-seen'), undefined, 'an item never known is not made up')
})
