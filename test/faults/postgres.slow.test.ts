import t, { type Test } from 'tap'
import { spawn } from 'node:child_process'
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { bearer, testNeeding, userToken, tymon } from '../helper.js'
import { closedPort } from '../fixtures/fake-server.js'
import { NEEDS_INITDB, startCluster, type Cluster } from '../fixtures/postgres-cluster.js'
import { until } from '../fixtures/until.js'
import {
  instanceApiKey, NEEDS_NGINX, startInstance, startNginx, writeWhile, type Instance, type WriteResults
} from '../fixtures/instances.js'

/*
 * PostgreSQL's faults under the service as operators run it (production, two instances behind
 * nginx), each on a cluster of the test's own (initdb into a temporary folder, its own port): a
 * test stops and starts it, so it is never the cluster DATABASE_URL names.
 */

// Four clusters of its own, each made by initdb, and the instances they serve: about a minute on an
// idle machine, past tap's 120 s with both cores kept busy by other processes.
t.setTimeout(300_000)

const PRODUCTION = { NODE_ENV: 'production', QUOTES_PROVIDER: 'offline', SHUTDOWN_DRAIN_MS: '0' }
const sleep = async (ms: number): Promise<void> => { await new Promise(resolve => setTimeout(resolve, ms)) }

async function metricsOf (port: number): Promise<string> {
  return await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
}

/** A listener on `url`'s port that closes every connection it is offered at once, and counts them. */
async function countConnections (t: Test, url: URL): Promise<{ count: number, close: () => Promise<void> }> {
  const knocks = { count: 0, close: async () => { await new Promise(resolve => server.close(resolve)) } }
  t.teardown(knocks.close)
  const server = createServer(socket => {
    knocks.count++
    socket.destroy()
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject).listen(Number(url.port), url.hostname, resolve)
  })
  return knocks
}

async function create (base: string, userId: string): Promise<Response> {
  return await fetch(`${base}/portfolios`, {
    method: 'POST',
    headers: { 'x-api-key': instanceApiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'probe', userId })
  })
}

/** The ids of the portfolios of `userId`, read straight from the database. */
async function storedIds (url: string, userId: string): Promise<Set<string>> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows } = await client.query<{ id: string }>('select id from portfolios where user_id = $1', [userId])
    return new Set(rows.map(row => row.id))
  } finally {
    await client.end()
  }
}

/** What each instance said: the store lost once and back once, never a crash. */
function storeLines (instance: Instance, message: string): number {
  return instance.log().filter(line => line.msg === message && line.dependency === 'store').length
}

async function checkServingWithoutStore (t: Test, instance: Instance): Promise<void> {
  const ready = await fetch(`${instance.url}/ready`)
  t.equal(ready.status, 503, '/ready is 503')
  t.match(await ready.json(), { code: 'STORE_UNAVAILABLE' })
  t.equal((await fetch(`${instance.url}/auth/health`)).status, 200, 'liveness stays 200')
  const profile = await fetch(`${instance.url}/auth/profile`, { headers: bearer(userToken()) })
  t.equal(profile.status, 200, 'a JWT route needs no store')
  const write = await create(instance.url, 'probe')
  t.equal(write.status, 503)
  t.ok(Number(write.headers.get('retry-after')) > 0, 'Retry-After')
  t.match(await write.json(), { statusCode: 503, code: 'STORE_UNAVAILABLE', path: '/portfolios' })
}

testNeeding(t, 'PostgreSQL stopped and started under 20 writers through nginx: both instances live, ' +
  'every failure a 503, nothing acknowledged lost, nothing refused stored, serving again by itself',
[NEEDS_INITDB, NEEDS_NGINX], async t => {
  const cluster = startCluster(t)
  const ports = [await closedPort(t), await closedPort(t)]
  const metricsPorts = [await closedPort(t), await closedPort(t)]
  const instances = await Promise.all(ports.map(async (port, index) => await startInstance(t, cluster.url, port, {
    ...PRODUCTION, METRICS_PORT: String(metricsPorts[index])
  })))
  const balancer = await startNginx(t, ports)

  let writing = true
  const results: WriteResults = { acknowledged: [], failures: new Map(), codes: new Map(), retried: 0, mostSends: 0 }
  const writers = writeWhile(balancer, () => writing, 'outage', results)
  const progress = (): unknown => ({ acknowledged: results.acknowledged.length, refused: [...results.failures] })
  await until('writes acknowledged before the stop', () => results.acknowledged.length > 200, progress)
  await cluster.stop()
  const outageStart = Date.now()
  for (const instance of instances) await checkServingWithoutStore(t, instance)
  await until('the writers see the outage', () => results.codes.get('STORE_UNAVAILABLE') !== undefined, progress)
  // The outage lasts 3 s, for the breakers' backoff to reach its cap (what is asserted waits on events).
  await sleep(Math.max(0, 3000 - (Date.now() - outageStart)))

  await cluster.start()
  const returned = Date.now()
  // Each instance serves again by itself (docs/deploy.md#failure-modes): how soon is measured, not asserted.
  const recoveries = await Promise.all(instances.map(async instance => {
    let status = 0
    const serving = async (): Promise<boolean> => (status = (await create(instance.url, 'after')).status) === 201
    await until(`${instance.url} serving again`, serving, () => status)
    return Date.now() - returned
  }))
  const acknowledgedAtReturn = results.acknowledged.length
  await until('writes after the return', () => results.acknowledged.length > acknowledgedAtReturn + 200, progress)
  writing = false
  await writers

  t.comment(`recovery after the database's return: ${recoveries.join(' ms, ')} ms; ` +
    `${results.acknowledged.length} writes acknowledged, refused: ${JSON.stringify([...results.failures])}`)
  t.same([...results.failures.keys()], [503], 'every refused write is a 503')
  t.same([...results.codes.keys()], ['STORE_UNAVAILABLE'], '…STORE_UNAVAILABLE in the standard body')
  t.ok(instances.every(instance => instance.child.exitCode === null), 'both instances are still running')

  const stored = await storedIds(cluster.url, 'outage')
  t.equal(results.acknowledged.filter(id => !stored.has(id)).length, 0, 'every acknowledged write is stored')
  t.equal(stored.size, results.acknowledged.length, 'no write answered 503 was stored')
  for (const [index, instance] of instances.entries()) {
    t.equal(storeLines(instance, 'dependency unavailable'), 1, 'the outage is one warning line')
    const port = metricsPorts[index] ?? 0
    let metrics = ''
    await until('the LISTEN connection back', async () =>
      (metrics = await metricsOf(port)).includes('bff_dependency_up{dependency="change_feed"} 1'),
    () => metrics.split('\n').filter(line => line.startsWith('bff_dependency_up')))
    t.match(await metricsOf(port), /bff_dependency_up\{dependency="store"\} 1/)
  }
})

testNeeding(t, 'production started while PostgreSQL is down: alive and not ready, ready by itself once it answers',
  [NEEDS_INITDB], async t => {
    const cluster = startCluster(t)
    await cluster.stop()
    const instance = await startInstance(t, cluster.url, await closedPort(t), { ...PRODUCTION, LOG_LEVEL: 'info' }, {
      until: 'live'
    })
    await checkServingWithoutStore(t, instance)
    // The database's port answers each connection by closing it, as a server going away does: the
    // instance's attempts to reach it are counted (its migrations', backing off, and its LISTEN's).
    const knocks = await countConnections(t, new URL(cluster.url))
    await until('four more attempts to reach the database', () => knocks.count >= 4, () => knocks.count)
    await knocks.close()
    t.equal(instance.child.exitCode, null, 'still running after four attempts: no crash loop')
    t.equal(storeLines(instance, 'dependency unavailable'), 1, 'the wait is one warning line')

    await cluster.start()
    const returned = Date.now()
    let ready = 0
    await until('ready', async () => (ready = (await fetch(`${instance.url}/ready`)).status) === 200, () => ready)
    t.comment(`ready ${Date.now() - returned} ms after the database's return (start-up retries back off to every 5 s)`)
    t.equal((await create(instance.url, 'started-late')).status, 201, 'migrated and serving')
    t.equal(storeLines(instance, 'dependency available again'), 1)
  })

testNeeding(t, 'production with a database that refuses the URL (no such database): one line, exit 1, no waiting',
  [NEEDS_INITDB], async t => {
    const cluster = startCluster(t)
    const url = new URL(cluster.url)
    url.pathname = '/no_such_database'
    const child = spawn(process.execPath, [
      '--import', import.meta.resolve('tsx'), fileURLToPath(new URL('../../src/server.ts', import.meta.url))
    ], {
      env: {
        PATH: process.env.PATH ?? '',
        ...PRODUCTION,
        PORT: '0',
        JWT_SECRET: tymon.secret,
        API_KEYS: instanceApiKey,
        DATABASE_URL: url.href
      }
    })
    t.teardown(() => { child.kill('SIGKILL') })
    let err = ''
    child.stderr.on('data', chunk => { err += String(chunk) })
    const code = await new Promise<number | null>(resolve => child.once('exit', resolve))
    t.equal(code, 1)
    t.same(err.trim().split('\n'), [
      'Cannot open the database of DATABASE_URL (postgres): database "no_such_database" does not exist'
    ])
  })

/** The service's sessions ended while they waited on the test's lock, by what they ran. */
interface Ended {
  reads: number
  writes: number
}

/**
 * One round of what `pg_terminate_backend` or a failover does to connections in use: the test takes
 * `portfolios` in access exclusive mode, so that the service's statements on it wait in flight; once
 * a read (a `select`) and a write wait, every session waiting on a lock is ended, then the lock is
 * let go. So each session ended had its statement in flight (idle and listening sessions are left
 * alone, and none of those ended can have finished first). The sessions are watched from a
 * connection of their own: inside the lock's transaction `pg_stat_activity` is a snapshot taken once.
 */
async function endWaitingSessions (cluster: Cluster, load: () => unknown): Promise<Ended> {
  const locker = new pg.Client({ connectionString: cluster.url })
  const watcher = new pg.Client({ connectionString: cluster.url })
  await Promise.all([locker.connect(), watcher.connect()])
  const sessions = 'from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()'
  const waiting = `${sessions} and state = 'active' and wait_event_type = 'Lock'`
  try {
    await locker.query('begin')
    await locker.query('lock table portfolios in access exclusive mode')
    let seen: Array<{ query: string, state: string, waiting: boolean }> = []
    await until('a read and a write waiting on the lock', async () => {
      seen = (await watcher.query<{ query: string, state: string, waiting: boolean }>(
        `select left(query, 40) as query, state, state = 'active' and wait_event_type = 'Lock' as waiting ${sessions}`
      )).rows
      const reads = seen.filter(session => session.waiting).map(session => /^select/i.test(session.query))
      return reads.includes(true) && reads.includes(false)
    }, () => ({ sessions: seen, load: load() }))
    const { rows } = await watcher.query<{ read: boolean, ended: boolean }>(
      `select query ilike 'select%' as read, pg_terminate_backend(pid) as ended ${waiting}`)
    const ended = rows.filter(row => row.ended)
    return { reads: ended.filter(row => row.read).length, writes: ended.filter(row => !row.read).length }
  } finally {
    await locker.query('commit').catch(() => {})
    await Promise.all([locker.end(), watcher.end()])
  }
}

testNeeding(t, 'connections ended by the server under reads and writes in flight: each read retried, ' +
  'each write ended refused with 503, no crash, no stuck pool', [NEEDS_INITDB], async t => {
  const cluster = startCluster(t)
  const instance = await startInstance(t, cluster.url, await closedPort(t), PRODUCTION)
  t.equal((await create(instance.url, 'reader')).status, 201)
  const reads = new Map<number, number>()
  const writes = new Map<number, number>()
  const load = { going: true }
  const count = (map: Map<number, number>, status: number): void => { map.set(status, (map.get(status) ?? 0) + 1) }
  // Four readers and four writers, fewer than the pool's ten connections: no request waits for a
  // connection (a wait past the connect timeout is a 503 too, on a busy machine), so a read's 503
  // could only be a lost connection it was not retried from. A list is read from the database each
  // time (the detail of one portfolio would be answered from memory).
  // Requests answered by each client: a round is over once every client had one answered after it,
  // so that no read retried in a round (on a fresh connection, not retried again) is ended in the next.
  const answered = Array.from({ length: 8 }, () => 0)
  const clients = [
    ...Array.from({ length: 4 }, async (_, client) => {
      while (load.going) {
        const res = await fetch(`${instance.url}/portfolios?userId=reader`, {
          headers: { 'x-api-key': instanceApiKey }
        })
        await res.arrayBuffer()
        count(reads, res.status)
        answered[client] = (answered[client] ?? 0) + 1
      }
    }),
    ...Array.from({ length: 4 }, async (_, client) => {
      while (load.going) {
        const res = await create(instance.url, 'terminated')
        await res.arrayBuffer()
        count(writes, res.status)
        answered[client + 4] = (answered[client + 4] ?? 0) + 1
      }
    })
  ]
  const ended: Ended = { reads: 0, writes: 0 }
  for (let round = 0; round < 3; round++) {
    const found = await endWaitingSessions(cluster, () => ({ round, reads: [...reads], writes: [...writes], answered }))
    ended.reads += found.reads
    ended.writes += found.writes
    const before = [...answered]
    await until(`every client answered after round ${round + 1}`,
      () => answered.every((count, client) => count > (before[client] ?? 0)), () => ({ before, answered }))
  }
  load.going = false
  await Promise.all(clients)
  t.comment(`ended in flight: ${JSON.stringify(ended)}; reads ${JSON.stringify([...reads])}, ` +
    `writes ${JSON.stringify([...writes])}`)
  t.ok(ended.reads >= 3 && ended.writes >= 3, 'reads and writes were ended in flight, in each round')
  t.same([...reads.keys()], [200], 'every read answered, retried on a fresh connection when its own was ended')
  t.ok([...writes.keys()].every(status => status === 201 || status === 503), 'a write is stored or refused with 503')
  t.equal(writes.get(503), ended.writes, 'each write ended in flight refused with 503 (never sent twice), no other')
  t.equal(instance.child.exitCode, null, 'still running')
  const after = await Promise.all(Array.from({ length: 20 }, async () => (await create(instance.url, 'after')).status))
  t.same(new Set(after), new Set([201]), 'the pool serves again: no connection left broken in it')
})
