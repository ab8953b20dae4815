import t from 'tap'
import pg from 'pg'
import { postgresChangeFeed } from '../../src/store/change-feed.js'
import { DependencyHealth } from '../../src/observability/dependencies.js'
import { NEEDS_POSTGRES, POSTGRES_URL, testNeeding } from '../helper.js'
import { closedPort } from '../fixtures/fake-server.js'
import { capturedLog } from '../fixtures/captured-log.js'

function watched (): ReturnType<typeof capturedLog> & { health: DependencyHealth } {
  const captured = capturedLog()
  return { ...captured, health: new DependencyHealth('change_feed', captured.log) }
}

const status = { itemId: 'item-1', status: 'UPDATED', event: 'item/updated', updatedAt: new Date().toISOString() }

testNeeding(t, 'the LISTEN connection ended by the server comes back by itself; statuses flow again', [NEEDS_POSTGRES],
  async t => {
    const url = new URL(POSTGRES_URL ?? '')
    const name = `bff-feed-${process.pid}`
    url.searchParams.set('application_name', name)
    const { log, health, lines } = watched()
    const feed = await postgresChangeFeed({ connectionString: url.href }, log, health)
    t.teardown(() => feed.close())
    const received = feed.itemStatuses('item-1')
    await feed.publishItemStatus(status)
    t.match((await received.next()).value, status)

    const admin = new pg.Client({ connectionString: POSTGRES_URL })
    await admin.connect()
    await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1', [name])
    await admin.end()
    for (let attempt = 0; attempt < 400 && !lines.some(line => line.msg === 'dependency available again'); attempt++) {
      await new Promise(resolve => setTimeout(resolve, 25))
    }
    t.match(lines, [{ msg: 'dependency unavailable' }, { msg: 'dependency available again' }], 'one line each way')
    await feed.publishItemStatus({ ...status, status: 'LOGIN_ERROR' })
    t.match((await received.next()).value, { status: 'LOGIN_ERROR' }, 'heard again')
    await received.return?.()
  })

t.test('a LISTEN connection not made at start does not stop the start; publish fails until it is', async t => {
  const { log, health, lines } = watched()
  const feed = await postgresChangeFeed({
    connectionString: `postgres://bff@127.0.0.1:${await closedPort(t)}/bff`
  }, log, health)
  await t.rejects(feed.publishItemStatus(status), /connection down/)
  t.match(lines, [{ msg: 'dependency unavailable', dependency: 'change_feed' }])
  await feed.close()
})
