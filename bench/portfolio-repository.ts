/**
 * The portfolio repository's calls (its columns, projections and update follow from the schemas):
 * the CPU time this process spends per call of each read and write of `PortfolioRepository`, and per
 * `sameValuation`, through the store opened as the service opens it (`Store.open`): SQLite on a temporary
 * file, and PostgreSQL too when DATABASE_URL is a postgres URL (in a schema of its own, dropped afterwards).
 * Calls run one after another; each figure is the median of the rounds. Figures: src/store/portfolios.ts.
 * `PATCH /portfolios/:id` is also timed through the whole app (`inject`, the store the same), the request's CPU.
 * Run with `npx node --import tsx bench/portfolio-repository.ts` (no build needed); it stops by itself.
 */
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config/config.js'
import { Store } from '../src/store/store.js'
import type { QuoteInReais } from '../src/domain/reais.js'
import { sameValuation, valuate } from '../src/domain/portfolio-valuation.js'
import type { Asset } from '../src/schemas/asset.js'
import type { UpdatePortfolioInput } from '../src/schemas/portfolio.js'
import { benchDomain, median, onEachEngine, table, type BenchDatabase } from './lib.js'

const CALLS = Number(process.env.BENCH_CALLS ?? 2_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7)
const ASSETS = 10

/** CPU µs (user + system) of this process per call, the median of ROUNDS rounds of CALLS calls after a warm-up. */
async function cpuPerCall (call: () => unknown): Promise<number> {
  const round = async (): Promise<number> => {
    const before = process.cpuUsage()
    for (let i = 0; i < CALLS; i++) await call()
    const used = process.cpuUsage(before)
    return (used.user + used.system) / CALLS
  }
  await round()
  const rounds: number[] = []
  for (let i = 0; i < ROUNDS; i++) rounds.push(await round())
  return median(rounds)
}

async function measure ({ engine, url, schema }: BenchDatabase): Promise<Array<Record<string, string>>> {
  const store = await Store.open(url, { schema })
  try {
    const { portfolios } = store
    const { domain, access } = benchDomain(store)
    const { id } = await portfolios.create({ name: 'Bench', description: null, userId: 'bench' })
    for (let i = 0; i < ASSETS; i++) {
      const name = `Ativo ${i}`
      const asset = { name, symbol: `SYM${i}`, type: 'STOCK' as const, quantity: i + 1, price: 10, portfolioId: id }
      await domain.assets.create(access, asset)
    }
    const change = async (input: UpdatePortfolioInput): Promise<unknown> =>
      await store.write(async work => await work.portfolios.change(id, input))
    for (let i = 0; i < 49; i++) await portfolios.create({ name: `Other ${i}`, userId: 'bench' })
    let n = 0
    const calls: Array<[string, () => unknown]> = [
      ['portfolioOnly', async () => await portfolios.portfolioOnly(id)],
      ['portfolioAndAssets', async () => await portfolios.portfolioAndAssets(id)],
      ['list of 50', async () => await portfolios.list({ userId: 'bench' }, { limit: 50, offset: 0 })],
      ['create', async () => await portfolios.create({ name: 'New', userId: 'bench-new' })],
      ['change name (in its write)', async () => await change({ name: `Bench ${n++}` })],
      ['change name and description', async () => await change({ name: `B ${n++}`, description: 'D' })]
    ]
    const rows: Array<Record<string, string>> = []
    for (const [call, run] of calls) rows.push({ engine, call, 'CPU µs/call': (await cpuPerCall(run)).toFixed(1) })
    rows.push(...await valuationCheck(engine, (await portfolios.portfolioAndAssets(id))?.assets ?? []))
    const patch = await patchCpu(url, schema)
    rows.push({ engine, call: 'PATCH /portfolios/:id (the app)', 'CPU µs/call': patch.toFixed(1) })
    return rows
  } finally {
    await store.close()
  }
}

/** `sameValuation` of two equal valuations of `assets` (all quoted but one), and the `valuate` before it. */
async function valuationCheck (engine: string, assets: Asset[]): Promise<Array<Record<string, string>>> {
  const unquoted = assets[0]?.symbol
  const quotes = {
    get: (symbol: string): QuoteInReais | undefined =>
      symbol === unquoted ? undefined : { symbol, price: 2, lastUpdate: '2026-01-01T00:00:00.000Z' },
    source: 'brapi.dev'
  }
  const a = valuate('p', assets, quotes, new Date(0))
  const b = valuate('p', assets, quotes, new Date(1))
  const same = await cpuPerCall(() => sameValuation(a, b))
  const valued = await cpuPerCall(() => valuate('p', assets, quotes, new Date(0)))
  return [
    { engine, call: 'sameValuation (equal)', 'CPU µs/call': same.toFixed(3) },
    { engine, call: `valuate (${assets.length} assets), which precedes it`, 'CPU µs/call': valued.toFixed(1) }
  ]
}

/** CPU µs per `PATCH /portfolios/:id` (a new name) through the whole app on the store of `url`. */
async function patchCpu (url: string, schema?: string): Promise<number> {
  const headers = { 'x-api-key': 'bench-key' }
  const app = await buildApp(loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    MAX_EVENT_LOOP_DELAY_MS: '0',
    JWT_SECRET: 'bench-secret-bench-secret-bench-secret',
    API_KEYS: 'bench-key',
    DATABASE_URL: url,
    ...(schema === undefined ? {} : { DATABASE_SCHEMA: schema }),
    QUOTES_PROVIDER: 'offline',
    // Thousands of requests a round: this measures a request's CPU, not the rate limit's refusals.
    RATE_LIMIT_MAX: '100000000'
  }))
  try {
    const payload = { name: 'Patched', userId: 'bench-patch' }
    const { id } = (await app.inject({ method: 'POST', url: '/portfolios', headers, payload })).json<{ id: string }>()
    let n = 0
    return await cpuPerCall(async () => {
      const patch = { name: `P ${n++}` }
      const res = await app.inject({ method: 'PATCH', url: `/portfolios/${id}`, headers, payload: patch })
      if (res.statusCode !== 200) throw new Error(`PATCH: ${res.statusCode} ${res.body}`)
    })
  } finally {
    await app.close()
  }
}

console.log(table(await onEachEngine('portfolio-repository', measure)))
