/**
 * The performance's cost: CPU this process spends on `GET /portfolios/:id/performance?range=max`
 * of a portfolio of 20 assets with 240 dated buys and sales since 2006, in process (app.inject), quotes
 * from a fake brapi in another process (bench/fake-brapi-history.ts: daily closes of every weekday since
 * 2005, about 5 500 a symbol), on core 1 while this process runs on core 0. Three figures, medians of
 * rounds: cold (a fresh app: every history fetched and parsed, 21 of them, the SELIC and the IPCA),
 * recomputed (the histories in the quote cache, the answer dropped by a change of the portfolio), warm (the
 * answer kept). Docs: docs/api.md#performance, BENCHMARKS.md.
 * Run with `npx node --import tsx bench/performance.ts`; it stops by itself.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildApp } from '../src/app.js'
import { inProcessConfig, median, pinSelf, startHelper, table } from './lib.js'
import { caller, TRADED_ASSETS as ASSETS, tradedPortfolio } from './traded-portfolio.js'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7)
const WARM_CALLS = Number(process.env.BENCH_CALLS ?? 2_000)
const KEY = 'bench-key'
const headers = { 'x-api-key': KEY }

pinSelf()
const fake = await startHelper('fake-brapi-history.ts', 1)
const dir = mkdtempSync(join(tmpdir(), 'bff-bench-performance-'))
const config = inProcessConfig(dir, fake.url, KEY)

/** CPU ms of this process over `run`. */
async function cpuMs (run: () => Promise<unknown>): Promise<number> {
  const before = process.cpuUsage()
  await run()
  const used = process.cpuUsage(before)
  return (used.user + used.system) / 1000
}

const cold: number[] = []
const recomputed: number[] = []
const warm: number[] = []
let points = 0
let id = ''
try {
  const seeding = await buildApp(config)
  await seeding.ready()
  id = (await tradedPortfolio(caller(seeding, headers), 'BEN')).id
  await seeding.close()
  const url = `/portfolios/${id}/performance?range=max`
  for (let round = 0; round < ROUNDS; round++) {
    const app = await buildApp(config)
    await app.ready()
    const call = caller(app, headers)
    await call('GET', `/portfolios/${id}`)
    cold.push(await cpuMs(async () => { points = (await call('GET', url)).points.length }))
    await call('PATCH', `/portfolios/${id}`, { name: `Bench ${round}` })
    recomputed.push(await cpuMs(async () => await call('GET', url)))
    const calls = async (): Promise<void> => { for (let i = 0; i < WARM_CALLS; i++) await call('GET', url) }
    warm.push(await cpuMs(calls) / WARM_CALLS)
    await app.close()
  }
} finally {
  await fake.stop()
  rmSync(dir, { recursive: true, force: true })
}

process.stdout.write(`GET /portfolios/:id/performance?range=max: ${ASSETS} assets, ${ASSETS * 12} transactions, ` +
  `${points} points; ` +
  `CPU ms of this process per request, medians of ${ROUNDS} rounds (warm: of ${WARM_CALLS} requests each)\n`)
process.stdout.write(table([
  { request: 'cold: 21 daily histories fetched and parsed, SELIC, IPCA', 'CPU ms': median(cold).toFixed(1) },
  { request: 'recomputed: histories cached, the answer dropped by a change', 'CPU ms': median(recomputed).toFixed(1) },
  { request: 'warm: the answer kept', 'CPU ms': median(warm).toFixed(3) }
]))
