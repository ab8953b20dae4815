/**
 * The writes of an asset through the whole app (`inject`), production settings and every protection on but the
 * access line (LOG_LEVEL=silent: a constant per request, and no terminal to write it to): an asset's create
 * (`POST /portfolio-assets`), a dated SELL (`POST /portfolio-assets/:id/transactions`, back-dated a year), a PATCH
 * of quantity (`PATCH /portfolio-assets/:id`, recorded as a BUY or SELL dated today), an asset's delete, and a
 * portfolio's rename (`PATCH /portfolios/:id`), each under the API key and under a user's token
 * (PORTFOLIO_ACCESS=both): SQLite on a temporary file, and PostgreSQL too when DATABASE_URL is a postgres URL (in a
 * schema of its own, dropped afterwards). The SELL and the PATCH write to an asset holding 100 transactions when its
 * round starts (each call adds one), made afresh each round. Each figure is the median of ROUNDS rounds of CALLS
 * requests one after another, the variants in alternating rounds: this process's CPU µs per request (what the
 * service spends) and the wall µs (what a client waits, the database's round trips included). Figures:
 * BENCHMARKS.md. Run with `npx node --import tsx bench/asset-writes.ts` (no build needed); it stops by itself.
 */
import { performance } from 'node:perf_hooks'
import { buildApp, type App } from '../src/app.js'
import { median, onEachEngine, productionConfig, productionUserToken, table, type BenchDatabase } from './lib.js'

const CALLS = Number(process.env.BENCH_CALLS ?? 100)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7)
const HELD = 100

const dateBefore = (days: number): string => new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 10)

type Headers = Record<string, string>

interface Call { cpu: number, wall: number }

/** A write measured: `prepare` (not measured) makes what each of its `calls` writes to, afresh every round. */
interface Write {
  prepare: () => Promise<(index: number) => Promise<void>>
}

async function send (app: App, method: 'POST' | 'PATCH' | 'DELETE', url: string, headers: Headers, payload?: object) {
  const res = await app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) })
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`)
  return res.json<{ id: string }>()
}

/** CPU and wall µs per call of one round of `write`, its preparation left out. */
async function round (write: Write): Promise<Call> {
  const call = await write.prepare()
  const cpu = process.cpuUsage()
  const start = performance.now()
  for (let index = 0; index < CALLS; index++) await call(index)
  const wall = (performance.now() - start) * 1000 / CALLS
  const used = process.cpuUsage(cpu)
  return { cpu: (used.user + used.system) / CALLS, wall }
}

function writesOf (app: App, portfolioId: string, headers: Headers): Record<string, Write> {
  const asset = { name: 'Ativo', symbol: 'PETR4', type: 'STOCK', price: 32.5, portfolioId }
  /** An asset of 100 bought a year and a half ago, holding `HELD` transactions in all. */
  const heldAsset = async (): Promise<string> => {
    const { id } = await send(app, 'POST', '/portfolio-assets', headers,
      { ...asset, quantity: 100_000, date: dateBefore(540) })
    for (let index = 1; index < HELD; index++) {
      const buy = { type: 'BUY', date: dateBefore(500 - index), quantity: 10, price: 30 + index / 100, fee: 1 }
      await send(app, 'POST', `/portfolio-assets/${id}/transactions`, headers, buy)
    }
    return id
  }
  return {
    'create an asset': {
      prepare: async () => async index => {
        await send(app, 'POST', '/portfolio-assets', headers, { ...asset, quantity: index + 1 })
      }
    },
    'a dated SELL': {
      prepare: async () => {
        const id = await heldAsset()
        return async index => {
          const sale = { type: 'SELL', date: dateBefore(365), quantity: 1 + index / 8, price: 35.1, fee: 4.9 }
          await send(app, 'POST', `/portfolio-assets/${id}/transactions`, headers, sale)
        }
      }
    },
    'a PATCH of quantity': {
      prepare: async () => {
        const id = await heldAsset()
        return async index => {
          const quantity = 150_000 + (index % 2 === 0 ? 5 : -5)
          await send(app, 'PATCH', `/portfolio-assets/${id}`, headers, { quantity })
        }
      }
    },
    'delete an asset': {
      prepare: async () => {
        const ids: string[] = []
        for (let index = 0; index < CALLS; index++) {
          ids.push((await send(app, 'POST', '/portfolio-assets', headers, { ...asset, quantity: 1 })).id)
        }
        return async index => { await send(app, 'DELETE', `/portfolio-assets/${ids[index] ?? ''}`, headers) }
      }
    },
    'rename a portfolio': {
      prepare: async () => async index => {
        await send(app, 'PATCH', `/portfolios/${portfolioId}`, headers, { name: `Carteira ${index}` })
      }
    }
  }
}

async function measure (database: BenchDatabase): Promise<Array<Record<string, string>>> {
  const app = await buildApp(productionConfig(database, { PORTFOLIO_ACCESS: 'both' }))
  try {
    await app.ready()
    const token = productionUserToken()
    const credentials: Record<string, Headers> = {
      'API key': { 'x-api-key': 'bench-key' },
      'user token': { authorization: `Bearer ${token}` }
    }
    const { id: portfolioId } = await send(app, 'POST', '/portfolios', credentials['API key'] ?? {},
      { name: 'Bench', userId: '1' })
    const variants = Object.entries(credentials).flatMap(([credential, headers]) =>
      Object.entries(writesOf(app, portfolioId, headers))
        .map(([write, run]) => ({ name: `${write}, ${credential}`, run })))
    const rounds = new Map(variants.map(variant => [variant.name, [] as Call[]]))
    for (const variant of variants) await round(variant.run)
    for (let index = 0; index < ROUNDS; index++) {
      for (const variant of variants) rounds.get(variant.name)?.push(await round(variant.run))
    }
    return variants.map(({ name }) => {
      const calls = rounds.get(name) ?? []
      return {
        engine: database.engine,
        write: name,
        'CPU µs': median(calls.map(call => call.cpu)).toFixed(0),
        'wall µs': median(calls.map(call => call.wall)).toFixed(0)
      }
    })
  } finally {
    await app.close()
  }
}

console.log(table(await onEachEngine('asset-writes', measure)))
