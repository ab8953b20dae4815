/**
 * An investment import through the whole app, production settings and every protection on (LOG_LEVEL=silent): an
 * aggregator item of INVESTMENTS listed investments with TRADES buys and sales each, served by a stub of the
 * aggregator in this process (its key exchange, the item, the pages of investments and of transactions, as
 * test/fixtures/fake-pluggy.ts serves them), imported into a new portfolio (`POST /portfolios/:id/imports`, then
 * the queue's run) — every asset created and every trade recorded — and imported again at once, when nothing is
 * new (every investment read and replayed, nothing written). SQLite on a temporary file, and PostgreSQL too when
 * DATABASE_URL is a postgres URL. Each figure is the median of ROUNDS rounds: this process's CPU ms per import (the
 * service's, the stub's JSON and a poll of the import's row every 20 ms included) and the wall ms from the request
 * to the import's end. Figures: BENCHMARKS.md. Run with `npx node --import tsx bench/imports.ts`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { performance } from 'node:perf_hooks'
import { buildApp, type App } from '../src/app.js'
import { median, onEachEngine, productionConfig, productionUserToken, table, type BenchDatabase } from './lib.js'

const INVESTMENTS = Number(process.env.BENCH_INVESTMENTS ?? 20)
const TRADES = Number(process.env.BENCH_TRADES ?? 50)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
/** The user productionUserToken signs for: the item's owner. */
const OWNER = '1'

const base64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url')
const dayOf = (offset: number): string => new Date(Date.UTC(2025, 0, 2) + offset * 86_400_000).toISOString()

function page (all: unknown[], url: URL): object {
  const number = Number(url.searchParams.get('page') ?? 1)
  const size = Number(url.searchParams.get('pageSize') ?? 20)
  return {
    results: all.slice((number - 1) * size, number * size),
    page: number,
    total: all.length,
    totalPages: Math.ceil(all.length / size)
  }
}

/** The aggregator as an import reads it: one item of `OWNER`'s, its investments, their trades (a sale every fifth). */
async function startAggregator (): Promise<{ url: string, close: () => Promise<void> }> {
  const investments = Array.from({ length: INVESTMENTS }, (_, index) => ({
    id: `inv-${index}`,
    itemId: 'item',
    type: 'EQUITY',
    subtype: 'STOCK',
    code: `BNCH${index + 3}`,
    name: `Ação ${index}`,
    currencyCode: 'BRL',
    date: '2026-01-15T00:00:00.000Z',
    quantity: TRADES * 10,
    value: 30,
    balance: TRADES * 300,
    status: 'ACTIVE'
  }))
  const trades = (id: string) => Array.from({ length: TRADES }, (_, index) => ({
    id: `${id}-t${index}`,
    investmentId: id,
    type: index % 5 === 4 ? 'SELL' : 'BUY',
    quantity: 10,
    value: 30 + index / 100,
    amount: null,
    date: dayOf(index),
    tradeDate: dayOf(index),
    expenses: { brokerageFee: 4.9, incomeTax: null }
  }))
  const send = (res: ServerResponse, status: number, body: unknown): void => {
    res.writeHead(status, { 'content-type': 'application/json' })
    res.end(JSON.stringify(body))
  }
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://stub')
    req.resume()
    if (req.method === 'POST' && url.pathname === '/auth') {
      const exp = Math.floor(Date.now() / 1000) + 7200
      return send(res, 200, { apiKey: `${base64url({ alg: 'HS256' })}.${base64url({ exp })}.sig` })
    }
    if (url.pathname === '/items/item') return send(res, 200, { id: 'item', clientUserId: OWNER, status: 'UPDATED' })
    if (url.pathname === '/investments') return send(res, 200, page(investments, url))
    const [, , id = '', what] = url.pathname.split('/')
    if (what === 'transactions') return send(res, 200, page(trades(id), url))
    send(res, 404, { code: 404, message: 'not found' })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => { await new Promise(resolve => server.close(resolve)) }
  }
}

interface Run { cpu: number, wall: number }

async function importOnce (app: App, headers: Record<string, string>, portfolioId: string): Promise<Run> {
  const cpu = process.cpuUsage()
  const start = performance.now()
  const res = await app.inject({
    method: 'POST',
    url: `/portfolios/${portfolioId}/imports`,
    headers,
    payload: { itemId: 'item' }
  })
  if (res.statusCode !== 202) throw new Error(`import not asked for: ${res.statusCode} ${res.body}`)
  const { id } = res.json<{ id: string }>()
  for (;;) {
    const record = await app.store.imports.get(id)
    if (record?.status === 'failed') throw new Error(`import failed: ${record.error ?? ''}`)
    if (record?.status === 'done') break
    await new Promise(resolve => setTimeout(resolve, 20))
  }
  const wall = performance.now() - start
  const used = process.cpuUsage(cpu)
  return { cpu: (used.user + used.system) / 1000, wall }
}

async function measure (database: BenchDatabase): Promise<Array<Record<string, string>>> {
  const aggregator = await startAggregator()
  const app = await buildApp(productionConfig(database, {
    PORTFOLIO_ACCESS: 'user',
    AGGREGATOR_URL: aggregator.url,
    AGGREGATOR_CLIENT_ID: 'bench',
    AGGREGATOR_CLIENT_SECRET: 'bench',
    AGGREGATOR_WEBHOOK_SECRET: 'bench-webhook-secret',
    // Rounds of imports of one user's item: this measures the imports, not the budget's waits.
    AGGREGATOR_REQUESTS_PER_MINUTE: '1000000',
    AGGREGATOR_REQUESTS_PER_PRINCIPAL_PER_MINUTE: '1000000'
  }))
  try {
    await app.ready()
    const headers = { authorization: `Bearer ${productionUserToken()}` }
    const first: Run[] = []
    const again: Run[] = []
    for (let round = 0; round <= ROUNDS; round++) {
      const created = await app.inject({
        method: 'POST',
        url: '/portfolios',
        headers,
        payload: { name: `Bench ${round}`, userId: OWNER }
      })
      const { id } = created.json<{ id: string }>()
      const runs = [await importOnce(app, headers, id), await importOnce(app, headers, id)]
      // The first round warms the code up; it is left out.
      if (round === 0) continue
      first.push(runs[0] as Run)
      again.push(runs[1] as Run)
    }
    const trades = INVESTMENTS * TRADES
    return [['first import', first], ['again, nothing new', again]].map(([name, runs]) => {
      const cpu = median((runs as Run[]).map(run => run.cpu))
      return {
        engine: database.engine,
        import: `${name as string} (${INVESTMENTS} investments, ${trades} trades)`,
        'CPU ms': cpu.toFixed(0),
        'CPU µs a trade': (cpu * 1000 / trades).toFixed(0),
        'wall ms': median((runs as Run[]).map(run => run.wall)).toFixed(0)
      }
    })
  } finally {
    await app.close()
    await aggregator.close()
  }
}

console.log(table(await onEachEngine('imports', measure)))
