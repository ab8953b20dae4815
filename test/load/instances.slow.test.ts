import t from 'tap'
import { Store } from '../../src/store/store.js'
import { MIGRATION_NAMES } from '../../src/store/migrations.js'
import { freshDatabase, NEEDS_POSTGRES, testNeeding } from '../helper.js'
import { closedPort } from '../fixtures/fake-server.js'
import { instanceApiKey, NEEDS_NGINX, startInstance, startNginx, writeUntil } from '../fixtures/instances.js'

const SECONDS = Number(process.env.LOAD_SECONDS ?? 5)
const apiKey = instanceApiKey

const needs = [NEEDS_POSTGRES, NEEDS_NGINX]

testNeeding(t, 'two instances starting at once on an empty database migrate it once', needs, async t => {
  const database = await freshDatabase(t, 'postgres')
  const [a, b] = [await closedPort(t), await closedPort(t)]
  await Promise.all([startInstance(t, database.env, a), startInstance(t, database.env, b)])
  const store = await Store.open(database.url, { schema: database.schema })
  t.teardown(() => store.close())
  t.same(await store.appliedMigrations(), MIGRATION_NAMES, 'each migration recorded once')
})

testNeeding(t, 'two instances behind nginx, one killed with SIGKILL mid-run: ' +
  `nothing acknowledged is lost (${SECONDS} s)`, needs, async t => {
  const database = await freshDatabase(t, 'postgres')
  const ports = [await closedPort(t), await closedPort(t)]
  const [victim] = await Promise.all(ports.map(async port => (await startInstance(t, database.env, port)).child))
  const balancer = await startNginx(t, ports)

  setTimeout(() => { victim?.kill('SIGKILL') }, (SECONDS * 1000) / 2)
  // nginx answers its own HTML 502 when the instance died under the request.
  const { acknowledged, failures } = await writeUntil(balancer, Date.now() + SECONDS * 1000, 'multi')
  t.ok(
    acknowledged.length > 100,
    `${acknowledged.length} writes acknowledged; refused: ${JSON.stringify([...failures])}`
  )
  t.ok(
    [...failures.keys()].every(key => key === 502),
    'a write cut by the kill is refused as 502, never acknowledged and lost'
  )

  let missing = 0
  for (let start = 0; start < acknowledged.length; start += 50) {
    const statuses = await Promise.all(
      acknowledged
        .slice(start, start + 50)
        .map(async id => (await fetch(`${balancer}/portfolios/${id}`, { headers: { 'x-api-key': apiKey } })).status)
    )
    missing += statuses.filter(status => status !== 200).length
  }
  t.equal(missing, 0, 'every acknowledged write is served by the survivor')
  const listed = await fetch(`${balancer}/portfolios?userId=multi&limit=1000`, { headers: { 'x-api-key': apiKey } })
  t.equal(listed.status, 200)
  t.ok(((await listed.json()) as unknown[]).length >= Math.min(acknowledged.length, 1000))
})

testNeeding(t, 'two instances behind nginx under write load, one gets SIGTERM: every write of a client ' +
  'retrying with its Idempotency-Key succeeds, none is lost or made twice, it exits 0', needs, async t => {
  const database = await freshDatabase(t, 'postgres')
  const ports = [await closedPort(t), await closedPort(t)]
  const [victim] = await Promise.all(
    ports.map(async port => (await startInstance(t, database.env, port, { SHUTDOWN_DRAIN_MS: '2000' })).child)
  )
  if (victim === undefined) throw new Error('no instance')
  const exited = new Promise<number | null>(resolve => victim.once('exit', code => resolve(code)))
  const balancer = await startNginx(t, ports)

  // SIGTERM after 2 s; the victim drains 2 s, then closes while the load goes on.
  const seconds = Math.max(SECONDS, 8)
  setTimeout(() => { victim.kill('SIGTERM') }, 2000)
  // A connection the kernel accepted in the instant the listener closes is reset after nginx sent
  // the request on it, which nginx does not send again (a POST): the client does, with its key.
  const { acknowledged, failures, retried, mostSends } =
    await writeUntil(balancer, Date.now() + seconds * 1000, 'drain', { retryWithKey: true })
  t.ok(acknowledged.length > 100, `${acknowledged.length} writes acknowledged`)
  t.same([...failures], [], `no write failed, ${retried} sent again: ${JSON.stringify([...failures])}`)
  // That window is one instant: nginx sends nothing more to an instance once a request to it failed
  // (max_fails=1, for 30 s), so each of the 20 clients meets it at most once, and a write sent again
  // goes to the survivor.
  t.ok(retried <= 20, `${retried} writes sent again: at most one per client`)
  t.ok(mostSends <= 2, `no write sent more than twice (at most ${mostSends})`)
  t.equal(await exited, 0, 'the instance exited 0')

  const store = await Store.open(database.url, { schema: database.schema })
  t.teardown(() => store.close())
  const stored = new Set(
    (await store.portfolios.list({ userId: 'drain' }, { limit: 1_000_000, offset: 0 })).map(portfolio => portfolio.id)
  )
  t.equal(acknowledged.filter(id => !stored.has(id)).length, 0, 'every acknowledged write is stored')
  t.equal(stored.size, new Set(acknowledged).size, 'each stored once: a write sent again is answered, not made again')
})
