import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { mock } from 'node:test'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import pixelmatch from 'pixelmatch'
import { PNG } from 'pngjs'
import type { App } from '../../../src/app.js'
import { Chromium, NEEDS_CHROMIUM } from '../../fixtures/chromium.js'
import { until } from '../../fixtures/until.js'
import { apiKey, buildTestApp, testNeeding } from '../../helper.js'

/*
 * The demo page in headless Chromium (docs/api.md#the-demo-page): on a fixed clock and the offline
 * provider's simulated prices, it draws the performance the API answers — checked point by point
 * from the DOM, then as pixels against the committed reference (test/fixtures/demo-chart.png,
 * written again with UPDATE_REFERENCE=1) — and follows the live valuation through a transaction.
 * With answers held, failed or ended by the test, it draws only its newest selection and says each
 * failure on its status line. Each wait is for the page's own word that a load has ended (its view
 * no longer `aria-busy`), then what it shows is checked: never a mark an earlier load left.
 */

const NOW = '2026-11-20T22:00:00.000Z'
const REFERENCE = new URL('../../fixtures/demo-chart.png', import.meta.url)
const TAP_FOLDER = new URL('../../../.tap/', import.meta.url)
/** Pixels that may differ (antialiasing, a font's hinting): 1 % of the chart's, each compared at pixelmatch's 0.1. */
const MAX_DIFFERENT_PIXELS = 0.01

/** The chart's geometry, as the page's script draws it (src/modules/demo/script.ts). */
const [WIDTH, HEIGHT, LEFT, RIGHT, TOP, BOTTOM] = [720, 300, 64, 16, 16, 36]

/** What the page shows of its selection, read from the DOM: what a wait on it names when it fails. */
interface Shown {
  status: string
  selected: string
  listed: string[]
  busy: string | null
  chart: string | null
  income: string | null
}
const SHOWN = `(() => {
  const select = document.getElementById('portfolio')
  return {
    status: document.getElementById('status').textContent,
    selected: select.value,
    listed: [...select.options].map(option => option.value).sort(),
    busy: document.getElementById('view').getAttribute('aria-busy'),
    chart: document.getElementById('chart').dataset.loaded ?? null,
    income: document.getElementById('income').dataset.loaded ?? null
  }
})()`

/** What the page shows once `selected`'s load ended, over the year, with `listed` (sorted) in its list. */
function showing (selected: string, listed: string[]): Shown {
  return { status: '', selected, listed, busy: 'false', chart: `${selected} 1y`, income: `${selected} 2026` }
}

/** The page in `tab`, read and driven. */
function pageIn (browser: Chromium, tab: string) {
  const page = async <T>(expression: string): Promise<T> => await browser.evaluate(tab, expression) as T
  return {
    page,
    /** Waits until the page ended the load `what` names, drawn or failed (its view not busy); answers what it shows. */
    settled: async (what: string): Promise<Shown> => {
      let seen: Shown | undefined
      await until(`the page to end ${what}`, async () => (seen = await page<Shown>(SHOWN)).busy === 'false', () => seen)
      return seen as Shown
    },
    click: async (selector: string): Promise<void> => {
      await page(`document.querySelector(${JSON.stringify(selector)}).click(); true`)
    },
    select: async (portfolioId: string): Promise<void> => {
      await page(`(() => { const select = document.getElementById('portfolio'); select.value = '${portfolioId}'; ` +
        'select.dispatchEvent(new Event(\'change\')); return true })()')
    }
  }
}

async function post (app: App, url: string, payload: Record<string, unknown>): Promise<{ id: string }> {
  const res = await app.inject({ method: 'POST', url, headers: apiKey(), payload })
  if (res.statusCode !== 201) throw new Error(`${url}: ${res.statusCode} ${res.body}`)
  return res.json()
}

/** User 1's portfolio: buys over two years, a sale, a dollar share, a coin. */
async function demoPortfolio (app: App): Promise<{ id: string, petr4: string }> {
  const { id } = await post(app, '/portfolios', { name: 'Aposentadoria', userId: '1' })
  const asset = async (
    symbol: string, type: string, quantity: number, price: number, date: string
  ): Promise<string> =>
    (await post(app, '/portfolio-assets', { name: symbol, symbol, type, quantity, price, portfolioId: id, date })).id
  const petr4 = await asset('PETR4', 'STOCK', 200, 33, '2025-01-15')
  await asset('VALE3', 'STOCK', 100, 60, '2025-08-11')
  await asset('AAPL', 'STOCK', 10, 1150, '2026-02-02')
  await asset('BTC', 'CRYPTO', 0.05, 320_000, '2026-06-15')
  await post(app, `/portfolio-assets/${petr4}/transactions`,
    { type: 'SELL', date: '2026-04-20', quantity: 80, price: 36.5, fee: 7.9 })
  return { id, petr4 }
}

function compared (actual: PNG, reference: PNG): number {
  if (actual.width !== reference.width || actual.height !== reference.height) return Infinity
  const difference = new PNG({ width: actual.width, height: actual.height })
  const { width, height } = actual
  const different = pixelmatch(actual.data, reference.data, difference.data, width, height, { threshold: 0.1 })
  mkdirSync(TAP_FOLDER, { recursive: true })
  writeFileSync(new URL('demo-chart.difference.png', TAP_FOLDER), PNG.sync.write(difference))
  return different / (actual.width * actual.height)
}

testNeeding(t, 'the demo page draws the performance the API answers against IBOVESPA, point by point and as the ' +
  'reference picture, follows the live valuation through a transaction, and draws the income by month',
[NEEDS_CHROMIUM], async t => {
  mock.timers.enable({ apis: ['Date'], now: Date.parse(NOW) })
  t.teardown(() => { mock.timers.reset() })
  const app = await buildTestApp(t, { QUOTES_TTL: '1', VALUATION_MIN_INTERVAL_MS: '100' })
  const url = await app.listen({ port: 0, host: '127.0.0.1' })
  const { id, petr4 } = await demoPortfolio(app)

  const browser = await Chromium.launch(t, 'chromium-demo')
  const tab = await browser.open(`${url}/demo`)
  const viewport = { width: 800, height: 1100, deviceScaleFactor: 1, mobile: false }
  await browser.send('Emulation.setDeviceMetricsOverride', viewport, tab)
  const { page, settled, click, select } = pageIn(browser, tab)

  t.match(await settled('its first load'), { status: /API_KEY_INVALID/, chart: null }, 'the API key is needed')
  await page(`document.getElementById('api-key').value = ${JSON.stringify(apiKey()['x-api-key'])}; true`)
  await click('#load')
  t.same(await settled('the Load'), showing(id, [id]), 'the portfolio listed, and drawn')

  const answer = (await app.inject({ method: 'GET', url: `/portfolios/${id}/performance`, headers: apiKey() })).json()
  type Drawn = { twr: string, ibov: string, min: string, max: string, circles: Array<Record<string, string>> }
  const drawn = await page<Drawn>(`(() => {
    const chart = document.getElementById('chart')
    return {
      twr: chart.querySelector('polyline[data-series="twr"]').getAttribute('points'),
      ibov: chart.querySelector('polyline[data-series="ibov"]').getAttribute('points'),
      min: chart.dataset.min,
      max: chart.dataset.max,
      circles: [...chart.querySelectorAll('circle')].map(circle => ({ ...circle.dataset }))
    }
  })()`)
  type Point = { date: string, twr: number, ibov: number | null, estimated: boolean }
  const points = answer.points as Point[]
  t.ok(points.length > 50, `a point a week over the year: ${points.length}`)
  const values = points.flatMap(point => (point.ibov === null ? [point.twr] : [point.twr, point.ibov]))
  const [min, max] = [Math.min(0, ...values), Math.max(0, ...values)]
  t.same([Number(drawn.min), Number(drawn.max)], [min, max], 'the scale spans every value and zero')
  const [first, last] = [Date.parse(answer.from), Date.parse(answer.to)]
  const at = (date: string, value: number): [number, number] => [
    LEFT + (Date.parse(date) - first) / (last - first) * (WIDTH - LEFT - RIGHT),
    TOP + (max - value) / (max - min) * (HEIGHT - TOP - BOTTOM)
  ]
  const coordinates = (text: string): number[][] => text.split(' ').map(pair => pair.split(',').map(Number))
  const near = (a: number[][], b: number[][]): boolean => a.length === b.length &&
    a.every((pair, index) => pair.every((value, axis) => Math.abs(value - (b[index]?.[axis] ?? NaN)) < 0.01))
  t.ok(near(coordinates(drawn.twr), points.map(point => at(point.date, point.twr))),
    'the portfolio\'s line: each point at its TWR')
  const ibov = points.filter(point => point.ibov !== null)
  t.ok(near(coordinates(drawn.ibov), ibov.map(point => at(point.date, point.ibov as number))),
    'IBOVESPA\'s line: each point at its change')
  const dots = points.map(point => ({ date: point.date, twr: String(point.twr), estimated: String(point.estimated) }))
  t.same(drawn.circles, dots, 'a dot per point, hollow where estimated')
  t.equal(await page('document.getElementById("twr").dataset.value'), String(answer.twr))
  t.equal(await page('document.getElementById("prices").textContent'),
    'simulated, not market prices (offline (cotações simuladas))', 'offline closes said to be simulated')

  const box = await page<{ x: number, y: number, width: number, height: number }>('(() => { ' +
    'const { x, y, width, height } = document.getElementById("chart").getBoundingClientRect(); ' +
    'return { x, y, width, height } })()')
  const clip = { ...box, scale: 1 }
  const { data } = await browser.send('Page.captureScreenshot', { format: 'png', clip }, tab) as { data: string }
  const actual = PNG.sync.read(Buffer.from(data, 'base64'))
  mkdirSync(TAP_FOLDER, { recursive: true })
  writeFileSync(new URL('demo-chart.png', TAP_FOLDER), PNG.sync.write(actual))
  if (process.env.UPDATE_REFERENCE === '1' || !existsSync(REFERENCE)) {
    writeFileSync(REFERENCE, PNG.sync.write(actual))
    t.fail(`the reference was written (${fileURLToPath(REFERENCE)}): look at it, commit it, run again`)
  } else {
    const share = compared(actual, PNG.sync.read(readFileSync(REFERENCE)))
    t.ok(share <= MAX_DIFFERENT_PIXELS, `the chart is the reference picture: ${(share * 100).toFixed(2)} % of pixels ` +
      'differ (.tap/demo-chart.png, .tap/demo-chart.difference.png)')
  }

  const valuation = async (): Promise<number> =>
    (await app.inject({ method: 'GET', url: `/portfolios/${id}/valuation`, headers: apiKey() })).json().marketValue
  const live = { shown: NaN, answered: NaN }
  const following = async (): Promise<boolean> => {
    live.shown = Number(await page('document.getElementById("market-value").dataset.value'))
    live.answered = await valuation()
    return live.shown === live.answered
  }
  await until('the live valuation shown', following, () => live)
  const buy = { type: 'BUY', date: '2026-11-20', quantity: 50, price: 34 }
  await post(app, `/portfolio-assets/${petr4}/transactions`, buy)
  await until('the valuation after a buy shown', following, () => live)
  t.pass('the live valuation followed the buy')

  // The income by month, beside the performance: a portfolio of the offline provider's symbols with events.
  const { id: earning } = await post(app, '/portfolios', { name: 'Proventos', userId: '1' })
  for (const [symbol, type] of [['HGLG11', 'FUND'], ['ITUB4', 'STOCK']]) {
    await post(app, '/portfolio-assets', {
      name: symbol,
      symbol,
      type,
      quantity: 100,
      price: 30,
      portfolioId: earning,
      date: '2025-06-02'
    })
  }
  // Listed before or after the first (created at the same instant of the fixed clock, they are ordered by their
  // random ids): a Load keeps the selection either way, so one of these two Loads keeps one listed second.
  const both = [id, earning].sort()
  await click('#load')
  t.same(await settled('the Load of a new portfolio'), showing(id, both),
    'the new portfolio listed, the selected one kept')
  await select(earning)
  t.same(await settled('the selection of the new portfolio'), showing(earning, both), 'the new portfolio drawn')
  const income = (await app.inject({ method: 'GET', url: `/portfolios/${earning}/income`, headers: apiKey() })).json()
  const bars = await page<Array<[string, string]>>('[...document.querySelectorAll("#income rect[data-month]")]' +
    '.map(bar => [bar.dataset.month, bar.dataset.net])')
  t.same(bars, income.months.map((month: { month: string, net: number }) => [month.month, String(month.net)]),
    'a bar a month, each the API\'s net')
  t.ok(income.total.net > 0, `the rendimentos and JCP of the year: ${String(income.total.net)}`)
  t.equal(await page('document.getElementById("income-total").dataset.value'), String(income.total.net))
  await click('#load')
  t.same(await settled('the Load with the new portfolio selected'), showing(earning, both), 'the selection kept again')
})

testNeeding(t, 'the demo page under any order of answers: an older selection\'s requests, held in the browser, are ' +
  'aborted when another portfolio is selected and never drawn; a failed request empties the view and says so on the ' +
  'status line; a deleted portfolio is said to be', [NEEDS_CHROMIUM], async t => {
  mock.timers.enable({ apis: ['Date'], now: Date.parse(NOW) })
  t.teardown(() => { mock.timers.reset() })
  const app = await buildTestApp(t)
  const url = await app.listen({ port: 0, host: '127.0.0.1' })
  const ids: string[] = []
  for (const [name, symbol, type] of [['Ações', 'PETR4', 'STOCK'], ['Fundos', 'HGLG11', 'FUND']]) {
    const { id } = await post(app, '/portfolios', { name, userId: '1' })
    const asset = { name: symbol, symbol, type, quantity: 100, price: 30, portfolioId: id, date: '2025-06-02' }
    await post(app, '/portfolio-assets', asset)
    ids.push(id)
  }
  const listed = [...ids].sort()

  const browser = await Chromium.launch(t, 'chromium-demo-order')
  const tab = await browser.open(`${url}/demo`)
  const { page, settled, click, select } = pageIn(browser, tab)
  await settled('its first load')
  await page(`document.getElementById('api-key').value = ${JSON.stringify(apiKey()['x-api-key'])}; true`)
  await click('#load')
  const loaded = await settled('the Load')
  const one = loaded.selected // listed first
  const other = ids.find(id => id !== one) ?? ''
  t.same(loaded, showing(one, listed), 'the one listed first, drawn')

  // The browser holds the requests the test names (Fetch) and reports each request's end (Network).
  const held: Array<{ requestId: string, networkId: string, url: string }> = []
  const canceled = new Set<string>()
  browser.on('Fetch.requestPaused', tab, params => {
    const paused = params as { requestId: string, networkId: string, request: { url: string } }
    held.push({ requestId: paused.requestId, networkId: paused.networkId, url: paused.request.url })
  })
  browser.on('Network.loadingFailed', tab, params => {
    if (params.canceled === true) canceled.add(params.requestId as string)
  })
  await browser.send('Network.enable', {}, tab)
  const hold = async (...paths: string[]): Promise<void> => {
    held.length = 0
    await browser.send('Fetch.enable', { patterns: paths.map(path => ({ urlPattern: `*${path}` })) }, tab)
  }

  await hold(`/portfolios/${other}/performance*`, `/portfolios/${other}/income`)
  await select(other)
  await until('the other\'s performance and income held', () => held.length === 2, () => held)
  await select(one)
  await until('both aborted by the page once the one is selected again',
    () => held.every(request => canceled.has(request.networkId)), () => ({ held, canceled: [...canceled] }))
  t.same(await settled('the selection after the held one'), showing(one, listed),
    'the newer selection drawn, nothing of the older')

  await hold(`/portfolios/${one}/income`)
  await click('#ranges [data-range="6m"]')
  await until('the income held', () => held.length === 1, () => held)
  await browser.send('Fetch.failRequest', { requestId: held[0]?.requestId, errorReason: 'Failed' }, tab)
  t.same(await settled('the load whose income failed'),
    { status: 'Failed to fetch', selected: one, listed, busy: 'false', chart: null, income: null },
    'the failure on the status line')
  const figures = '[...document.querySelectorAll("#view svg *, #summary dd, #income-total")]' +
    '.map(node => node.textContent)'
  t.same(await page(figures), Array(9).fill(''), 'nothing drawn beside it: no chart, no figure of the 8, no income')
  await browser.send('Fetch.disable', {}, tab)
  await click('#ranges [data-range="1y"]')
  t.same(await settled('the load after the failure'), showing(one, listed), 'drawn again, the status line cleared')

  const deleted = await app.inject({ method: 'DELETE', url: `/portfolios/${one}`, headers: apiKey() })
  t.equal(deleted.statusCode, 200)
  let status = ''
  const said = async (): Promise<boolean> =>
    (status = await page('document.getElementById("status").textContent')) === 'The portfolio was deleted'
  await until('the deletion said on the status line', said, () => status)
})
