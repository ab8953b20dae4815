import t, { type Test } from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Store } from '../../src/store/store.js'
import { MIGRATION_NAMES } from '../../src/store/migrations.js'
import { freshDatabaseUrl, NEEDS_POSTGRES, TEST_API_KEYS, testNeeding, tymon } from '../helper.js'
import { closedPort } from '../fixtures/fake-server.js'

const SECONDS = Number(process.env.LOAD_SECONDS ?? 5)
/** Debian's nginx, or TEST_NGINX (a path that does not exist to run as if it were absent). */
const NGINX = process.env.TEST_NGINX ?? '/usr/sbin/nginx'
const serverEntry = fileURLToPath(new URL('../../src/server.ts', import.meta.url))
const tsx = import.meta.resolve('tsx')
const apiKey = TEST_API_KEYS[0] ?? ''

/** A real service process on `port`; resolves once it answers /ready. */
async function startInstance (
  t: Test, databaseUrl: string, port: number, env: Record<string, string> = {}
): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', tsx, serverEntry], {
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      PORT: String(port),
      JWT_SECRET: tymon.secret,
      API_KEYS: apiKey,
      DATABASE_URL: databaseUrl,
      RATE_LIMIT_MAX: '1000000000',
      MAX_EVENT_LOOP_DELAY_MS: '0',
      ...env
    },
    stdio: ['ignore', 'ignore', 'inherit']
  })
  t.teardown(() => { child.kill('SIGKILL') })
  for (let attempt = 0; attempt < 300; attempt++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/ready`)).ok) return child
    } catch { /* not yet */ }
    if (child.exitCode !== null) throw new Error(`instance on ${port} exited with ${child.exitCode}`)
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  throw new Error(`instance on ${port} never became ready`)
}

/**
 * nginx on 127.0.0.1, round robin over the instances; a POST is retried on another only when it
 * could not be sent (a refused connection). Idle upstream connections close after 1 s, less
 * than the instances' drain (docs/deploy.md).
 */
async function startNginx (t: Test, ports: number[]): Promise<string> {
  const prefix = mkdtempSync(join(tmpdir(), 'bff-nginx-'))
  const listen = await closedPort(t)
  writeFileSync(
    join(prefix, 'nginx.conf'),
    `
worker_processes 1;
pid ${prefix}/nginx.pid;
error_log ${prefix}/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${prefix}/body; proxy_temp_path ${prefix}/proxy;
  fastcgi_temp_path ${prefix}/fastcgi; uwsgi_temp_path ${prefix}/uwsgi; scgi_temp_path ${prefix}/scgi;
  upstream bff {
    ${ports.map(port => `server 127.0.0.1:${port} max_fails=1 fail_timeout=30s;`).join(' ')}
    keepalive 32; keepalive_timeout 1s;
  }
  server {
    listen 127.0.0.1:${listen};
    location / {
      proxy_pass http://bff;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_next_upstream error timeout;
    }
  }
}`
  )
  const nginx = spawn(NGINX, ['-p', prefix, '-c', join(prefix, 'nginx.conf'), '-g', 'daemon off;'], {
    stdio: 'inherit'
  })
  t.teardown(() => { nginx.kill('SIGTERM') })
  const url = `http://127.0.0.1:${listen}`
  for (let attempt = 0; attempt < 100; attempt++) {
    try {
      if ((await fetch(`${url}/auth/health`)).ok) return url
    } catch { /* not yet */ }
    await new Promise(resolve => setTimeout(resolve, 50))
  }
  throw new Error('nginx did not start')
}

const needs = [
  NEEDS_POSTGRES,
  existsSync(NGINX) ? '' : `nginx at ${NGINX} (apt-get install nginx, or TEST_NGINX=<path>)`
]

testNeeding(t, 'two instances starting at once on an empty database migrate it once', needs, async t => {
  const url = await freshDatabaseUrl(t, 'postgres')
  const [a, b] = [await closedPort(t), await closedPort(t)]
  await Promise.all([startInstance(t, url, a), startInstance(t, url, b)])
  const store = await Store.open(url)
  t.teardown(() => store.close())
  t.same(await store.appliedMigrations(), MIGRATION_NAMES, 'each migration recorded once')
})

testNeeding(t, 'two instances behind nginx, one killed with SIGKILL mid-run: ' +
  `nothing acknowledged is lost (${SECONDS} s)`, needs, async t => {
  const url = await freshDatabaseUrl(t, 'postgres')
  const ports = [await closedPort(t), await closedPort(t)]
  const [victim] = await Promise.all(ports.map(async port => await startInstance(t, url, port)))
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

/**
 * Writes from 20 clients through the balancer until `deadline`: the ids acknowledged, and every failure by status or
 * error.
 */
async function writeUntil (
  balancer: string, deadline: number, userId: string
): Promise<{ acknowledged: string[], failures: Map<number | string, number> }> {
  const acknowledged: string[] = []
  const failures = new Map<number | string, number>()
  await Promise.all(Array.from({ length: 20 }, async (_, client) => {
    for (let step = 0; Date.now() < deadline; step++) {
      try {
        const res = await fetch(`${balancer}/portfolios`, {
          method: 'POST',
          headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `c${client}-${step}`, userId })
        })
        const body = res.status === 201 ? await res.json() as { id?: string } : (await res.text(), {})
        if (res.status === 201 && body.id !== undefined) acknowledged.push(body.id)
        else failures.set(res.status, (failures.get(res.status) ?? 0) + 1)
      } catch (error) {
        failures.set(String(error), (failures.get(String(error)) ?? 0) + 1)
      }
    }
  }))
  return { acknowledged, failures }
}

testNeeding(t, 'two instances behind nginx under write load, one gets SIGTERM: ' +
  'no request fails, no write is lost, it exits 0', needs, async t => {
  const url = await freshDatabaseUrl(t, 'postgres')
  const ports = [await closedPort(t), await closedPort(t)]
  const [victim] = await Promise.all(
    ports.map(async port => await startInstance(t, url, port, { SHUTDOWN_DRAIN_MS: '2000' }))
  )
  if (victim === undefined) throw new Error('no instance')
  const exited = new Promise<number | null>(resolve => victim.once('exit', code => resolve(code)))
  const balancer = await startNginx(t, ports)

  // SIGTERM after 2 s; the victim drains 2 s, then closes while the load goes on.
  const seconds = Math.max(SECONDS, 8)
  setTimeout(() => { victim.kill('SIGTERM') }, 2000)
  const { acknowledged, failures } = await writeUntil(balancer, Date.now() + seconds * 1000, 'drain')
  t.ok(acknowledged.length > 100, `${acknowledged.length} writes acknowledged`)
  t.same([...failures], [], `no request failed at the client: ${JSON.stringify([...failures])}`)
  t.equal(await exited, 0, 'the instance exited 0')

  const store = await Store.open(url)
  t.teardown(() => store.close())
  const stored = new Set(
    (await store.portfolios.list({ userId: 'drain' }, { limit: 1_000_000, offset: 0 })).map(portfolio => portfolio.id)
  )
  t.equal(acknowledged.filter(id => !stored.has(id)).length, 0, 'every acknowledged write is stored')
})
