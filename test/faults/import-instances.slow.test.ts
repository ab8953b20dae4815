import t from 'tap'
import { freshDatabase, NEEDS_POSTGRES, testNeeding, userToken } from '../helper.js'
import { startFakePluggy, PLUGGY_CLIENT_ID, PLUGGY_CLIENT_SECRET, type FakePluggy } from '../fixtures/fake-pluggy.js'
import { closedPort } from '../fixtures/fake-server.js'
import { startInstance, type Instance } from '../fixtures/instances.js'
import { pluggyInvestment, pluggyInvestmentTransaction } from '../fixtures/pluggy-shapes.js'
import { until } from '../fixtures/until.js'

/*
 * An import under way on a service process that ends: SIGTERM (closing gives the import back to the queue) and
 * SIGKILL (its lease ends, JOB_LEASE_MS after its last renewal); either way the other process, on the same
 * PostgreSQL, finishes it, and nothing is read or written twice that the first had finished. Real processes
 * (test/fixtures/instances.ts), a fake Pluggy whose second investment's read never answers the first time.
 */

t.setTimeout(300_000)

const OWNER = 'ana'

function threeInvestments (pluggy: FakePluggy): void {
  pluggy.items.set('item-ana', OWNER)
  for (const index of [0, 1, 2]) {
    const id = `inv-${index}`
    pluggy.investments.set(id, pluggyInvestment(id, 'item-ana', { code: `ABCD${index + 3}`, quantity: 10 }))
    pluggy.investmentTransactions.set(id, [pluggyInvestmentTransaction(`${id}-t0`, id, { quantity: 10 })])
  }
}

async function call (
  instance: Instance, method: string, path: string, body?: object
): Promise<Record<string, unknown>> {
  const res = await fetch(`${instance.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${userToken({ sub: OWNER })}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  return await res.json() as Record<string, unknown>
}

const reads = (pluggy: FakePluggy, id: string): number =>
  pluggy.received.filter(request => request.path === `/investments/${id}/transactions`).length

for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
  testNeeding(t, `${signal} mid-import: the other instance finishes it`, [NEEDS_POSTGRES], async t => {
    const pluggy = await startFakePluggy(t)
    threeInvestments(pluggy)
    // The first read of the second investment hangs: the first instance is mid-import when the signal comes.
    let hung = false
    let release = (): void => {}
    t.teardown(() => { release() })
    pluggy.once('/investments/inv-1/transactions', async (_request, res) => {
      hung = true
      await new Promise<void>(resolve => { release = resolve })
      res.destroy()
    })
    const { env: database } = await freshDatabase(t, 'postgres')
    const env = {
      AGGREGATOR_URL: pluggy.url,
      AGGREGATOR_CLIENT_ID: PLUGGY_CLIENT_ID,
      AGGREGATOR_CLIENT_SECRET: PLUGGY_CLIENT_SECRET,
      // The hanging read ends the first instance's run (given back) this long after SIGTERM at most.
      AGGREGATOR_TIMEOUT_MS: '3000',
      PORTFOLIO_ACCESS: 'user',
      JOB_POLL_MS: '50',
      JOB_LEASE_MS: '3000',
      IMPORT_RETRY_MS: '20'
    }
    const first = await startInstance(t, database, await closedPort(t), env)
    const portfolio = await call(first, 'POST', '/portfolios', { name: 'Importada', userId: OWNER })
    const portfolioId = String(portfolio.id)
    const asked = await call(first, 'POST', `/portfolios/${portfolioId}/imports`, { itemId: 'item-ana' })
    await until('the first instance mid-import', () => hung)
    const second = await startInstance(t, database, await closedPort(t), env)
    const exited = new Promise(resolve => first.child.once('exit', resolve))
    first.child.kill(signal)
    await exited
    let seen: Record<string, unknown> = {}
    await until('the import done by the second instance', async () => {
      seen = await call(second, 'GET', `/portfolios/${portfolioId}/imports/${String(asked.id)}`)
      return seen.status === 'done'
    }, () => seen)
    t.match(seen, { counts: { investments: 3, assetsCreated: 3, transactionsRecorded: 3 }, error: null })
    t.equal(reads(pluggy, 'inv-0'), 1, 'what the first instance wrote is not read again')
    t.equal(reads(pluggy, 'inv-1'), 2, 'the read the first instance never finished, then the second\'s')
    t.equal(reads(pluggy, 'inv-2'), 1)
    const assets = await fetch(`${second.url}/portfolio-assets?portfolioId=${portfolioId}`, {
      headers: { authorization: `Bearer ${userToken({ sub: OWNER })}` }
    })
    t.same((await assets.json() as Array<{ quantity: number }>).map(asset => asset.quantity), [10, 10, 10])
  })
}
