/**
 * What corporate events cost (docs/api.md#corporate-events): CPU this process spends, in process (app.inject), on an
 * asset read, a dashboard and a warm performance of a portfolio of 20 assets (240 dated buys and sales since 2006)
 * whose symbols have events at brapi — a split every four years, a bonus issue every five, a dividend or JCP each
 * quarter: about 90 each — and of symbols with a typical stock's (a dividend a year, a JCP every other, one split)
 * beside the same portfolio of symbols without any, in one run, quotes from a fake brapi in
 * another process (bench/fake-brapi-history.ts) on core 1 while this process runs on core 0; and how many requests
 * asked brapi for events. Run it on a checkout without events too (with bench/traded-portfolio.ts, which makes the
 * portfolios): the same script measures that version's cost.
 * Run with `npx node --import tsx bench/corporate-events.ts`; it stops by itself. BENCH_MEASURE=read (or dashboard,
 * performance) measures only those requests, so that one's figure is not moved by the garbage of the others.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildApp } from '../src/app.js'
import { inProcessConfig, median, pinSelf, startHelper, table } from './lib.js'
import { caller, TRADED_ASSETS as ASSETS, tradedPortfolio, type Call } from './traded-portfolio.js'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const CALLS = Number(process.env.BENCH_CALLS ?? 1_000)
const DASHBOARDS = Number(process.env.BENCH_DASHBOARDS ?? 100)
const MEASURED = new Set((process.env.BENCH_MEASURE ?? 'read,dashboard,performance').split(','))
const KEY = 'bench-key'
const headers = { 'x-api-key': KEY }

pinSelf()
const fake = await startHelper('fake-brapi-history.ts', 1)
const dir = mkdtempSync(join(tmpdir(), 'bff-bench-events-'))
const config = inProcessConfig(dir, fake.url, KEY)

/** CPU ms of this process per call of `url`, over `calls` calls. */
async function cpuMsPerCall (call: Call, url: string, calls: number): Promise<number> {
  const before = process.cpuUsage()
  for (let i = 0; i < calls; i++) await call('GET', url)
  const used = process.cpuUsage(before)
  return (used.user + used.system) / 1000 / calls
}

const eventRequests = async (): Promise<number> =>
  (await (await fetch(`${fake.url}/requests`)).json() as { events: number }).events

const kinds = ['EVT', 'EVR', 'BEN'] as const
const figures = Object.fromEntries(kinds.map(kind => [kind, {
  read: [] as number[],
  dashboard: [] as number[],
  performance: [] as number[]
}]))
const asked: number[] = []
const events = { EVT: 0, EVR: 0 }
try {
  const seeding = await buildApp(config)
  await seeding.ready()
  const seed = caller(seeding, headers)
  const portfolios = {
    EVT: await tradedPortfolio(seed, 'EVT'),
    EVR: await tradedPortfolio(seed, 'EVR'),
    BEN: await tradedPortfolio(seed, 'BEN')
  }
  for (const kind of ['EVT', 'EVR'] as const) {
    // A version without events has no such route: none.
    const url = `/portfolio-assets/${portfolios[kind].assetId}/events`
    const listed = await seeding.inject({ method: 'GET', url, headers })
    events[kind] = listed.statusCode === 200 ? (listed.json() as unknown[]).length : 0
  }
  await seeding.close()
  for (let round = 0; round < ROUNDS; round++) {
    const app = await buildApp(config)
    await app.ready()
    const call = caller(app, headers)
    const before = await eventRequests()
    for (const kind of kinds) {
      const { id, assetId } = portfolios[kind]
      const performance = `/portfolios/${id}/performance?range=max`
      if (MEASURED.has('performance')) await call('GET', performance)
      if (MEASURED.has('dashboard')) await cpuMsPerCall(call, `/portfolio-assets/${assetId}/dashboard`, 10)
    }
    // The kinds measured in another order each round: what warms up is not counted to one of them.
    for (const kind of [...kinds.slice(round % kinds.length), ...kinds.slice(0, round % kinds.length)]) {
      const { id, assetId } = portfolios[kind]
      const performance = `/portfolios/${id}/performance?range=max`
      const measured = figures[kind] as { read: number[], dashboard: number[], performance: number[] }
      if (MEASURED.has('read')) measured.read.push(await cpuMsPerCall(call, `/portfolio-assets/${assetId}`, CALLS))
      if (MEASURED.has('dashboard')) {
        measured.dashboard.push(await cpuMsPerCall(call, `/portfolio-assets/${assetId}/dashboard`, DASHBOARDS))
      }
      if (MEASURED.has('performance')) measured.performance.push(await cpuMsPerCall(call, performance, CALLS))
    }
    asked.push(await eventRequests() - before)
    await app.close()
  }
} finally {
  await fake.stop()
  rmSync(dir, { recursive: true, force: true })
}

const of = (kind: string, what: 'read' | 'dashboard' | 'performance'): number =>
  median((figures[kind] as Record<string, number[]>)[what] as number[])
process.stdout.write(`${ASSETS} assets, ${ASSETS * 12} transactions; events an asset was entitled to: ${events.EVT} ` +
  `(heavy), ${events.EVR} (typical); CPU ms of this process per request, medians of ${ROUNDS} rounds; requests ` +
  `for events per round (a fresh app, ${kinds.length * ASSETS} symbols): ${asked.join(', ')}\n`)
const measuredRequests = (['read', 'dashboard', 'performance'] as const).filter(what => MEASURED.has(what))
process.stdout.write(table(measuredRequests.map(what => ({
  request: { read: 'GET /portfolio-assets/:id', dashboard: 'GET …/dashboard', performance: 'warm performance' }[what],
  'without events': of('BEN', what).toFixed(3),
  'typical events': of('EVR', what).toFixed(3),
  ratio: (of('EVR', what) / of('BEN', what)).toFixed(2),
  'heavy events': of('EVT', what).toFixed(3),
  'ratio ': (of('EVT', what) / of('BEN', what)).toFixed(2)
}))))
process.stdout.write('\n')
