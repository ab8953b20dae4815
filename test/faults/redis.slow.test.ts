import t from 'tap'
import type { App } from '../../src/app.js'
import { bearer, buildTestApp, testNeeding, userToken } from '../helper.js'
import { NEEDS_REDIS, startRedis } from '../fixtures/redis.js'
import { startFakePluggy } from '../fixtures/fake-pluggy.js'
import { capturedLog } from '../fixtures/captured-log.js'
import { aggregatorConfig, subscribe, subscribed, webhook, wsClient } from '../fixtures/item-subscriptions.js'

/*
 * Redis killed and started again under two instances sharing it for the rate limit, the
 * aggregator budgets and the item-status feed.
 */

async function statusesOf (app: App, principal: string, count: number): Promise<number[]> {
  const headers = bearer(userToken({ sub: principal }))
  const statuses: number[] = []
  for (let request = 0; request < count; request++) {
    statuses.push((await app.inject({ method: 'GET', url: '/auth/profile', headers })).statusCode)
  }
  return statuses
}

testNeeding(t, 'Redis killed and started under load: limits fail open then apply again, subscriptions resume, ' +
  'each loss one line', [NEEDS_REDIS], async t => {
  const redis = await startRedis(t)
  const pluggy = await startFakePluggy(t)
  pluggy.items.set('item-1', 'client-a')
  pluggy.itemStatuses.set('item-1', 'UPDATING')
  const { stream, lines } = capturedLog()
  const shared = {
    ...aggregatorConfig(pluggy), REDIS_URL: redis.url, RATE_LIMIT_MAX: '5', AGGREGATOR_REQUESTS_PER_MINUTE: '1000'
  }
  const publisher = await buildTestApp(t, shared, { logger: { level: 'info', stream } })
  const listenerLog = capturedLog()
  const listener = await buildTestApp(t, shared, { logger: { level: 'info', stream: listenerLog.stream } })
  const user = subscribe(await wsClient(t, listener, { Authorization: `Bearer ${userToken()}` }), 'item-1')
  await subscribed(listener, 1)
  await webhook(publisher, 'item-1', 'item/updated')
  await user.next(1)
  t.same([...await statusesOf(publisher, 'before', 3), ...await statusesOf(listener, 'before', 3)],
    [200, 200, 200, 200, 200, 429], 'one limit for both instances')

  redis.kill()
  const during = await Promise.all(Array.from({ length: 20 }, async (_, principal) =>
    await statusesOf(principal % 2 === 0 ? publisher : listener, `during-${principal}`, 10)))
  t.same(new Set(during.flat()), new Set([200]), 'past the limit while Redis is away: the limit fails open')
  const lost = (dependency: string): number =>
    lines.filter(line => line.msg === 'dependency unavailable' && line.dependency === dependency).length
  const dependencies = ['rate_limit_redis', 'change_feed', 'aggregator_budget_redis']
  // ioredis reports the loss at its first failed reconnection, 50 ms after the kill.
  for (let attempt = 0; attempt < 400 && !dependencies.every(name => lost(name) > 0); attempt++) {
    await new Promise(resolve => setTimeout(resolve, 25))
  }
  t.equal(lost('rate_limit_redis'), 1, 'the rate limit\'s loss is one line, not one per request')
  t.equal(lost('change_feed'), 1, 'the feed\'s loss is one line')
  t.equal(lost('aggregator_budget_redis'), 1, 'the budgets\' connection too')

  await redis.restart()
  const back = (dependency: string): boolean =>
    [lines, listenerLog.lines].every(each =>
      each.some(line => line.msg === 'dependency available again' && line.dependency === dependency))
  for (let attempt = 0; attempt < 400 && !dependencies.every(back); attempt++) {
    await new Promise(resolve => setTimeout(resolve, 25))
  }
  t.ok(dependencies.every(back), 'every connection of both instances back, each said once')
  t.same([...await statusesOf(publisher, 'after', 3), ...await statusesOf(listener, 'after', 3)],
    [200, 200, 200, 200, 200, 429], 'the shared limit applies again')

  // The subscriber's connection subscribes again by itself; a status published after that reaches it.
  pluggy.itemStatuses.set('item-1', 'UPDATED')
  for (let attempt = 0; attempt < 20 && user.deliveries.length < 2; attempt++) {
    await webhook(publisher, 'item-1', 'item/updated')
    await Promise.race([user.next(2), new Promise(resolve => setTimeout(resolve, 500))])
  }
  t.equal(user.deliveries.at(-1)?.data?.aggregatorItem.status, 'UPDATED', 'the open subscription hears statuses again')
  user.stop()
})
