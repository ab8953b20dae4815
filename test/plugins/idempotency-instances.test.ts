import t, { type Test } from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import type { App } from '../../src/app.js'
import { apiKey, buildDataApp, buildTestApp, freshDatabase, NEEDS_POSTGRES, testNeeding } from '../helper.js'
import { until } from '../fixtures/until.js'

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

t.test('a key is kept IDEMPOTENCY_TTL_SECONDS: another body under it is refused until then, runs anew after; ' +
  'expired keys are swept', async t => {
  const ttlMs = 2000
  const app = await buildDataApp(t, 'sqlite', { IDEMPOTENCY_TTL_SECONDS: String(ttlMs / 1000) })
  const keys = app.store.idempotency
  const sentAt = Date.now()
  const first = await create(app, 'short-lived', 'First')
  t.equal(first.statusCode, 201)
  // The key expires a TTL after it was claimed, which was after `sentAt`: a repeat answered before
  // `sentAt` + TTL was claimed while the key was kept, and must be refused (a key never stored, or
  // kept too briefly, would run it anew). The TTL is the subject here: the answers are sorted by it.
  const young = (): boolean => Date.now() < sentAt + ttlMs
  const stored = await keys.count()
  if (young()) t.equal(stored, 1, 'the key is stored with the first answer')
  const answers: Array<{ status: number, code: unknown, young: boolean }> = []
  await until('a repeat under the expired key runs anew', async () => {
    const later = await create(app, 'short-lived', 'Second')
    answers.push({ status: later.statusCode, code: later.json().code, young: young() })
    return later.statusCode === 201
  }, () => answers.slice(-3))
  const whileKept = answers.filter(answer => answer.young)
  t.same(whileKept, whileKept.map(() => ({ status: 422, code: 'IDEMPOTENCY_KEY_REUSED', young: true })),
    `the ${whileKept.length} repeats answered while the key was kept were refused`)
  t.match(answers.at(-1), { status: 201, young: false }, 'the expired key took the other body')
  const listed = (await app.inject({ method: 'GET', url: '/portfolios?userId=storm', headers: apiKey() })).json()
  t.same(listed.map((portfolio: { name: string }) => portfolio.name).sort(), ['First', 'Second'])
  // Nothing else is sent: the instance's sweep deletes the key, expired a TTL after the second claim, by itself.
  let left = await keys.count()
  await until('the expired key swept', async () => (left = await keys.count()) === 0, () => ({ left }))
})
