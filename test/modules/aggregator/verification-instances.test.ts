import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { buildTestApp, freshDatabase, NEEDS_POSTGRES, testNeeding } from '../../helper.js'
import { startFakePluggy } from '../../fixtures/fake-pluggy.js'
import { closedPort } from '../../fixtures/fake-server.js'
import { Store } from '../../../src/store/store.js'
import {
  answersInTurn, credentials, fails, item, lookups, quickRetries, waitFor, webhook
} from './verification-helpers.js'

t.test('the queue survives a restart: what one instance queued, the next one verifies', async t => {
  const url = `sqlite:${join(mkdtempSync(join(tmpdir(), 'bff-verify-')), 'bff.sqlite')}`
  const down = `http://127.0.0.1:${await closedPort(t)}`
  const config = { DATABASE_URL: url, ...credentials, ...quickRetries }
  const first = await buildTestApp(t, { ...config, AGGREGATOR_URL: down })
  t.same(await webhook(first, 'i1', 'item/login_succeeded'), { received: true })
  await waitFor(t, 'the entry queued', async () => (await first.store.jobs.entry('verify-item', 'i1')) !== undefined)
  await first.close()

  const pluggy = await startFakePluggy(t)
  pluggy.items.set('i1', 'client-9')
  const second = await buildTestApp(t, { ...config, AGGREGATOR_URL: pluggy.url })
  await waitFor(t, 'the item verified', async () => (await second.store.aggregatorEvents.item('i1')) !== undefined)
  t.match(await second.store.aggregatorEvents.item('i1'), {
    status: 'UPDATED', clientUserId: 'client-9', lastEvent: 'item/login_succeeded'
  })
  t.equal(lookups(pluggy, 'i1'), 1)
  await waitFor(t, 'the queue empty', async () => (await second.store.jobs.count('verify-item')) === 0)
})

testNeeding(t, 'two instances on one PostgreSQL verify a queued item exactly once', [NEEDS_POSTGRES], async t => {
  const { env: database } = await freshDatabase(t, 'postgres')
  const pluggy = await startFakePluggy(t)
  // The retry answers slowly, so that the other instance looks at the queue many times meanwhile.
  const slowly = (res: Parameters<ReturnType<typeof item>>[0]) =>
    new Promise<void>(resolve => setTimeout(() => { item('shared')(res); resolve() }, 300))
  pluggy.on('/items/shared', answersInTurn(fails(500), slowly))
  const config = { ...database, AGGREGATOR_URL: pluggy.url, ...credentials, ...quickRetries }
  const [a, b] = [await buildTestApp(t, config), await buildTestApp(t, config)]
  await webhook(a, 'shared')
  await waitFor(t, 'the item verified', async () => (await a.store.aggregatorEvents.item('shared')) !== undefined)
  // Closing waits for every verification in flight: after it no instance can still be asking.
  await Promise.all([a.close(), b.close()])
  t.equal(lookups(pluggy, 'shared'), 2, 'the failed verification, then one retry between both instances')
  const store = await Store.open(database.DATABASE_URL, { schema: database.DATABASE_SCHEMA })
  t.teardown(() => store.close())
  t.equal(await store.jobs.count('verify-item'), 0)
  t.match(await store.aggregatorEvents.item('shared'), { status: 'UPDATED' })
})
