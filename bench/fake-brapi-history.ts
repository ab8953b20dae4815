/**
 * brapi as far as a performance needs it, for bench/performance.ts: a daily history of any ticker
 * (`/api/quote/{ticker}?range=…&interval=1d`, every weekday from January 2005, a deterministic walk
 * per ticker, in reais), no coins, and the SELIC and IPCA series; for bench/corporate-events.ts, the
 * corporate events of each ticker (`/api/v2/stocks/dividends?symbols=`): those starting with `EVT` a
 * 2-for-1 split every four years and a 10 % bonus issue every five from 2008, and a dividend or JCP each
 * quarter from 2006; those starting with `EVR` a typical stock's (a dividend each year, a JCP every other, one
 * split); any other none. `/requests` answers how many requests asked for events. Each answer
 * is made once and kept, so this process's cost stays out of the service's. Prints its port on its first
 * line.
 */
import { createHash } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

const FIRST_DAY = Date.UTC(2005, 0, 3)
const DAY = 86_400_000
const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate())
const weekdays: number[] = []
for (let time = FIRST_DAY; time <= today; time += DAY) {
  const weekday = new Date(time).getUTCDay()
  if (weekday !== 0 && weekday !== 6) weekdays.push(time)
}
const brDate = (time: number): string => new Date(time).toISOString().slice(0, 10).split('-').reverse().join('/')

const answers = new Map<string, string>()
function answerOf (key: string, make: () => unknown): string {
  let answer = answers.get(key)
  if (answer === undefined) {
    answer = JSON.stringify(make())
    answers.set(key, answer)
  }
  return answer
}

function history (ticker: string): unknown {
  let price = 10 + createHash('sha256').update(ticker).digest().readUInt8(0)
  let seed = createHash('sha256').update(ticker).digest().readUInt32BE(1)
  const historicalDataPrice = weekdays.map(time => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31
    price = Math.max(1, Math.round(price * (1 + (seed / 2 ** 31 - 0.5) * 0.04) * 100) / 100)
    return { date: (time + 13 * 3_600_000) / 1000, open: price, high: price, low: price, close: price, volume: 1000 }
  })
  const close = historicalDataPrice.at(-1)?.close
  return {
    results: [{
      symbol: ticker,
      currency: 'BRL',
      regularMarketPrice: close,
      regularMarketTime: new Date().toISOString(),
      usedRange: 'max',
      usedInterval: '1d',
      historicalDataPrice
    }],
    requestedAt: new Date().toISOString(),
    took: 3
  }
}

const COMMON = { approvedOn: null, isinCode: null, assetIssued: null, remarks: '' }

/** A cash event of `month` (`YYYY-MM`): data com on the 10th, paid on the 28th. */
function cashEvent (label: string, month: string): unknown {
  return {
    ...COMMON,
    label,
    rate: 0.25,
    rawRate: 0.5,
    lastDatePrior: `${month}-10`,
    exDate: `${month}-11`,
    paymentDate: `${month}-28`,
    relatedTo: ''
  }
}

/** The dividendsData of `ticker`, as brapi's SDKs define it. */
function dividendsData (ticker: string): unknown {
  const stockDividends: unknown[] = []
  const cashDividends: unknown[] = []
  if (ticker.startsWith('EVT')) {
    for (let year = 2008; year <= new Date(today).getUTCFullYear(); year++) {
      if (year % 4 === 0) {
        stockDividends.push({
          ...COMMON,
          label: 'DESDOBRAMENTO',
          factor: 2,
          completeFactor: '2 para 1',
          lastDatePrior: `${year}-04-14`,
          exDate: `${year}-04-15`
        })
      }
      if (year % 5 === 0) {
        stockDividends.push({
          ...COMMON,
          label: 'BONIFICACAO',
          factor: 10,
          completeFactor: '11 para 10',
          lastDatePrior: `${year}-09-14`,
          exDate: `${year}-09-15`
        })
      }
    }
    for (let year = 2006; year <= new Date(today).getUTCFullYear(); year++) {
      for (const month of ['02', '05', '08', '11']) {
        cashDividends.push(cashEvent(month === '05' || month === '11' ? 'JCP' : 'DIVIDENDO', `${year}-${month}`))
      }
    }
  }
  if (ticker.startsWith('EVR')) {
    // A typical stock's: a dividend each year, a JCP every other, one 2-for-1 split.
    const split = { label: 'DESDOBRAMENTO', factor: 2, completeFactor: '2 para 1' }
    stockDividends.push({ ...COMMON, ...split, lastDatePrior: '2016-04-14', exDate: '2016-04-15' })
    for (let year = 2006; year <= new Date(today).getUTCFullYear(); year++) {
      cashDividends.push(cashEvent('DIVIDENDO', `${year}-08`))
      if (year % 2 === 0) cashDividends.push(cashEvent('JCP', `${year}-12`))
    }
  }
  return { cashDividends, stockDividends, subscriptions: [] }
}

let eventRequests = 0

const server = createServer((request, response) => {
  const url = new URL(request.url ?? '/', 'http://fake')
  let body: string
  if (url.pathname === '/requests') body = JSON.stringify({ events: eventRequests })
  else if (url.pathname === '/api/v2/stocks/dividends') {
    eventRequests++
    const symbols = (url.searchParams.get('symbols') ?? '').split(',')
    body = JSON.stringify({
      results: symbols.map(symbol => ({ symbol, requestedSymbol: symbol, data: dividendsData(symbol) })),
      requestedAt: new Date().toISOString(),
      took: 3
    })
  } else if (url.pathname === '/api/v2/crypto/available') body = answerOf('coins', () => ({ coins: [] }))
  else if (url.pathname === '/api/v2/prime-rate') {
    body = answerOf('selic', () => ({ 'prime-rate': weekdays.map(time => ({ date: brDate(time), value: '11.25' })) }))
  } else if (url.pathname === '/api/v2/inflation') {
    const months: number[] = []
    for (let month = 0; Date.UTC(2005, month + 1, 1) <= today; month++) months.push(Date.UTC(2005, month, 1))
    body = answerOf('ipca', () => ({ inflation: months.map(time => ({ date: brDate(time), value: '0.4' })) }))
  } else {
    const ticker = decodeURIComponent(url.pathname.slice('/api/quote/'.length))
    body = answerOf(ticker, () => history(ticker))
  }
  response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body)
})
server.keepAliveTimeout = 72_000
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as AddressInfo).port}\n`)
})
process.on('SIGTERM', () => { server.closeAllConnections(); server.close(() => process.exit(0)) })
