import t, { type Test } from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import type { App } from '../../src/app.js'
import { apiKey, buildDataApp, buildTestApp, freshDatabase, NEEDS_POSTGRES, testNeeding } from '../helper.js'

async function create (app: App, key: string, name = 'Stormed'): Promise<LightMyRequestResponse> {
  const headers = { ...apiKey(), 'idempotency-key': key }
  return await app.inject({ method: 'POST', url: '/portfolios', headers, payload: { name, userId: 'storm' } })
}

/** 50 sends of one keyed create, all at once, over `apps`: one portfolio, every success the same answer. */
async function retryStorm (t: Test, apps: App[]): Promise<void> {
  const appOf = (index: number): App => apps[index % apps.length] as App
  const sends = Array.from({ length: 50 }, async (_, index) => await create(appOf(index), 'storm-1'))
  const answers = await Promise.all(sends)
  const created = answers.filter(answer => answer.statusCode === 201)
  t.ok(created.length >= 1, `${created.length} answered 201`)
  const inFlight = (answer: LightMyRequestResponse): boolean =>
    answer.statusCode === 409 && answer.json().code === 'IDEMPOTENCY_KEY_IN_FLIGHT'
  t.ok(answers.every(answer => answer.statusCode === 201 || inFlight(answer)), 'others: in flight')
  t.equal(created.filter(answer => answer.headers['idempotent-replayed'] === undefined).length, 1, 'one execution')
  t.equal(new Set(created.map(answer => answer.body)).size, 1, 'every 201 is the same answer')
  const listed = await (apps[0] as App).inject({ method: 'GET', url: '/portfolios?userId=storm', headers: apiKey() })
  t.equal(listed.json().length, 1, 'exactly one portfolio')
  // Once the storm is over, every instance replays the one answer.
  for (const app of apps) {
    const after = await create(app, 'storm-1')
    t.equal(after.headers['idempotent-replayed'], 'true')
    t.equal(after.body, created[0]?.body)
  }
}

testNeeding(t, 'a retry storm over two instances on one PostgreSQL: one portfolio', [NEEDS_POSTGRES], async t => {
  const { env } = await freshDatabase(t, 'postgres')
  const apps = [await buildTestApp(t, env), await buildTestApp(t, env)]
  await retryStorm(t, apps)
})

t.test('a retry storm on one SQLite instance creates exactly one portfolio', async t => {
  await retryStorm(t, [await buildDataApp(t, 'sqlite')])
})

t.test('a key expires after IDEMPOTENCY_TTL_SECONDS: it then runs anew; expired keys are swept', async t => {
  const app = await buildDataApp(t, 'sqlite', { IDEMPOTENCY_TTL_SECONDS: '1' })
  const first = await create(app, 'short-lived', 'First')
  t.equal(first.statusCode, 201)
  // Polled, not timed: until the key has expired the repeat of another body is refused.
  let later = await create(app, 'short-lived', 'Second')
  while (later.statusCode === 422) {
    await new Promise(resolve => setTimeout(resolve, 100))
    later = await create(app, 'short-lived', 'Second')
  }
  t.equal(later.statusCode, 201, 'the expired key took a new request')
  t.equal(later.json().name, 'Second')
  t.equal((await app.inject({ method: 'GET', url: '/portfolios?userId=storm', headers: apiKey() })).json().length, 2)
  // Nothing else is sent: the instance's sweep deletes the expired key by itself.
  while (await app.store.idempotency.count() > 0) await new Promise(resolve => setTimeout(resolve, 100))
  t.pass('swept')
})
