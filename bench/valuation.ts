/**
 * The live valuation benchmark: the built service in production mode on SQLite holds
 * 10 000 open valuation streams (SSE) on 1 000 portfolios over 50 symbols, quotes from a fake
 * brapi that counts its requests. It reports the memory each open stream costs, the delay from an
 * asset change to the last of its portfolio's streams hearing of it, the provider requests per
 * quote refresh, and the JWT route's throughput without and with the streams open. The service
 * runs on core 0, this process (the streams' client, the load generator, the fake) on core 1.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, request, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { cpus, tmpdir, totalmem } from 'node:os'
import { join } from 'node:path'
import { Store } from '../src/store/store.js'
import { benchDomain, benchUserToken, load, median, pinSelf, ROOT, startHelper, startService, table } from './lib.js'

const STREAMS = Number(process.env.BENCH_STREAMS ?? 10_000)
const PORTFOLIOS = 1000
const SYMBOLS = 50
const ASSETS_PER_PORTFOLIO = 5
const CHANGES = Number(process.env.BENCH_CHANGES ?? 200)
const DURATION = Number(process.env.BENCH_DURATION ?? 5)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const QUOTES_TTL = 5
const SECRET = 'bench-secret-bench-secret-bench-secret'
const API_KEY = 'bench-key'
const symbolOf = (index: number): string => `SYM${String(index).padStart(2, '0')}`

pinSelf()
const dir = mkdtempSync(join(tmpdir(), 'bff-bench-valuation-'))
const file = join(dir, 'bench.sqlite')
const store = await Store.open(`sqlite:${file}`)
const { domain, access } = benchDomain(store)
const portfolios: Array<{ id: string, assetId: string }> = []
for (let i = 0; i < PORTFOLIOS; i++) {
  const portfolio = await store.portfolios.create({ name: `Carteira ${i}`, userId: `user-${i % 100}` })
  let assetId = ''
  for (let j = 0; j < ASSETS_PER_PORTFOLIO; j++) {
    const symbol = symbolOf((i + j * 10) % SYMBOLS)
    const asset = await domain.assets.create(access, {
      name: `Ativo ${j}`, symbol, type: 'STOCK', quantity: 10, price: 20, portfolioId: portfolio.id
    })
    if (j === 0) assetId = asset.id
  }
  portfolios.push({ id: portfolio.id, assetId })
}
await store.close()

/** brapi, as far as quotes go: every ticker at a fixed price (nothing moves unless told); it counts its requests. */
const quoteRequests: Array<{ at: number, tickers: number }> = []
const brapi = createServer((incoming, response) => {
  // brapi's list of coins, asked once a day: none here.
  if (incoming.url?.startsWith('/api/v2/crypto/available') === true) {
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ coins: [] }))
    return
  }
  const tickers = decodeURIComponent(incoming.url?.split('?')[0]?.split('/').at(-1) ?? '').split(',')
  quoteRequests.push({ at: Date.now(), tickers: tickers.length })
  const results = tickers.map(symbol => ({
    symbol, currency: 'BRL', regularMarketPrice: 21, regularMarketTime: '2026-11-21T20:07:46.000Z'
  }))
  response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ results }))
})
await new Promise<void>(resolve => brapi.listen(0, '127.0.0.1', resolve))
const brapiUrl = `http://127.0.0.1:${(brapi.address() as AddressInfo).port}`

const upstream = await startHelper('fake-upstream.ts', 1)
const service = await startService({
  DATABASE_URL: `sqlite:${file}`,
  API_KEYS: API_KEY,
  JWT_SECRET: SECRET,
  BACKEND_URL: upstream.url,
  LOG_LEVEL: 'info',
  QUOTES_PROVIDER: 'brapi',
  BRAPI_URL: brapiUrl,
  BRAPI_TOKEN: 'bench',
  BRAPI_TICKERS_PER_REQUEST: String(SYMBOLS),
  QUOTES_TTL: String(QUOTES_TTL),
  VALUATION_STREAMS_PER_CREDENTIAL: String(STREAMS)
}, join(dir, 'service.log'))
const bearer = { authorization: `Bearer ${benchUserToken(SECRET, upstream.url)}` }
const profile = async (): Promise<number> =>
  (await load('profile', { url: `${service.url}/auth/profile`, duration: DURATION, headers: bearer })).requestsPerSecond

function rssMb (pid: number | undefined): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid ?? 0}/status`, 'utf8'))
  return Number(match?.[1] ?? 0) / 1024
}

/** One open stream: the bookValue of each valuation it hears goes to `heard`. */
interface Stream { portfolio: number, close: () => void }
const listeners = new Map<number, Array<(bookValue: number) => void>>()

async function openStream (portfolio: number): Promise<Stream> {
  const { id } = portfolios[portfolio] ?? { id: '' }
  return await new Promise((resolve, reject) => {
    const req = request(`${service.url}/portfolios/${id}/valuation/stream`, {
      agent: false, headers: { 'x-api-key': API_KEY, accept: 'text/event-stream' }
    }, (response: IncomingMessage) => {
      if (response.statusCode !== 200) { reject(new Error(`stream answered ${String(response.statusCode)}`)); return }
      let buffered = ''
      let opened = false
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => {
        buffered += chunk
        for (let end = buffered.indexOf('\n\n'); end !== -1; end = buffered.indexOf('\n\n')) {
          const message = buffered.slice(0, end)
          buffered = buffered.slice(end + 2)
          const data = /^data: (.*)$/m.exec(message)?.[1]
          if (data === undefined) continue
          if (!opened) { opened = true; resolve({ portfolio, close: () => { req.destroy() } }) }
          const bookValue = (JSON.parse(data) as { bookValue: number }).bookValue
          for (const listener of listeners.get(portfolio) ?? []) listener(bookValue)
        }
      })
      response.on('error', () => {})
    })
    req.on('error', reject)
    req.end()
  })
}

const rows: Array<Record<string, string | number>> = []
const streams: Stream[] = []
try {
  await profile()
  const withoutStreams: number[] = []
  for (let round = 0; round < ROUNDS; round++) withoutStreams.push(await profile())
  const rssBefore = rssMb(service.child.pid)

  const openedAt = Date.now()
  for (let start = 0; start < STREAMS; start += 250) {
    streams.push(...await Promise.all(Array.from({ length: Math.min(250, STREAMS - start) },
      async (_, offset) => await openStream((start + offset) % PORTFOLIOS))))
  }
  const openSeconds = (Date.now() - openedAt) / 1000
  await new Promise(resolve => setTimeout(resolve, 3000))
  const rssAfter = rssMb(service.child.pid)

  // Asset changes, each on a portfolio not changed before (no stream is held by its interval):
  // the time from the PATCH being sent to the last of the portfolio's streams hearing of it.
  const delays: number[] = []
  for (let change = 0; change < Math.min(CHANGES, PORTFOLIOS); change++) {
    const portfolio = (change * 7) % PORTFOLIOS
    const expected = 10 * 20 * (ASSETS_PER_PORTFOLIO - 1) + 11 * 20
    const waiting = streams.filter(stream => stream.portfolio === portfolio).length
    const heard = new Promise<number>(resolve => {
      let count = 0
      listeners.set(portfolio, [(bookValue: number) => {
        if (bookValue === expected && ++count === waiting) resolve(Date.now())
      }])
    })
    const sent = Date.now()
    const patched = await fetch(`${service.url}/portfolio-assets/${portfolios[portfolio]?.assetId ?? ''}`, {
      method: 'PATCH', headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' }, body: '{"quantity":11}'
    })
    if (patched.status !== 200) throw new Error(`PATCH answered ${patched.status}`)
    delays.push(await heard - sent)
    listeners.delete(portfolio)
  }

  // Quote refreshes while the streams stay open: requests come in bursts, one burst per refresh.
  const since = Date.now()
  const withStreams: number[] = []
  for (let round = 0; round < ROUNDS; round++) withStreams.push(await profile())
  while (Date.now() - since < 4 * QUOTES_TTL * 1000) await new Promise(resolve => setTimeout(resolve, 500))
  const bursts: Array<Array<{ at: number, tickers: number }>> = []
  for (const quoteRequest of quoteRequests.filter(entry => entry.at >= since)) {
    const burst = bursts.at(-1)
    if (burst !== undefined && quoteRequest.at - (burst.at(-1)?.at ?? 0) < 1000) burst.push(quoteRequest)
    else bursts.push([quoteRequest])
  }
  const sorted = [...delays].sort((a, b) => a - b)
  const p99 = sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)] ?? NaN
  const figure = (name: string, value: string | number): void => { rows.push({ figure: name, value }) }
  figure('open streams (SSE) / portfolios / symbols', `${streams.length} / ${PORTFOLIOS} / ${SYMBOLS}`)
  figure(`time to open them, ${STREAMS / 250} batches of 250`, `${openSeconds.toFixed(1)} s`)
  figure('service RSS without streams → with them', `${rssBefore.toFixed(0)} → ${rssAfter.toFixed(0)} MB`)
  figure('RSS per open stream', `${((rssAfter - rssBefore) * 1024 / streams.length).toFixed(1)} KiB`)
  figure(`asset change → last of its portfolio's streams, median (${delays.length} changes)`,
    `${median(delays).toFixed(1)} ms`)
  figure('asset change → last of its portfolio\'s streams, p99', `${p99.toFixed(1)} ms`)
  figure(`provider requests per refresh (QUOTES_TTL=${QUOTES_TTL}, ${bursts.length} refreshes)`,
    bursts.map(burst => burst.length).join(', '))
  figure('tickers per refresh request', [...new Set(bursts.flat().map(entry => entry.tickers))].join(', '))
  figure('GET /auth/profile (JWT) req/s without streams (median)', Math.round(median(withoutStreams)))
  figure(`GET /auth/profile (JWT) req/s with ${streams.length} streams open (median)`, Math.round(median(withStreams)))
  figure('ratio with / without', (median(withStreams) / median(withoutStreams)).toFixed(2))
} finally {
  for (const stream of streams) stream.close()
  await service.stop()
  await upstream.stop()
  brapi.close()
  rmSync(dir, { recursive: true, force: true })
}
const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, ` +
  `Node ${process.version}`
const report = `Live valuation benchmark — ${new Date().toISOString()}\n${machine}; production, LOG_LEVEL=info, ` +
  `SQLite; JWT load ${DURATION}s × ${ROUNDS} rounds, 10 connections\n\n${table(rows)}\n`
mkdirSync(`${ROOT}bench/results`, { recursive: true })
writeFileSync(`${ROOT}bench/results/valuation.md`, report)
process.stdout.write(`\n${report}`)
