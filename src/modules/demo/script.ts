/// <reference lib="dom" />
import type { ErrorBody } from '../../plugins/error-responses.js'
import type { PortfolioIncome } from '../../schemas/corporate-events.js'
import type { PortfolioPerformance } from '../../schemas/performance.js'
import type { PortfolioValuation } from '../../schemas/valuation.js'

/*
 * The demo page's script (./index.ts serves it as `(demoScript)()`): self-contained — it runs in
 * the browser, so it names nothing outside itself but the types of the answers it reads, which
 * compilation erases. Type-checked and linted with the service.
 */

/* c8 ignore start -- runs in the browser: test/modules/demo/demo-browser.slow.test.ts drives it */
export function demoScript (): void {
  const SVG = 'http://www.w3.org/2000/svg'
  const LABEL = { 'font-size': 11, fill: '#57606a' }
  const [WIDTH, HEIGHT, LEFT, RIGHT, TOP, BOTTOM] = [720, 300, 64, 16, 16, 36]
  const element = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T
  const token = element<HTMLInputElement>('token')
  const apiKey = element<HTMLInputElement>('api-key')
  const portfolio = element<HTMLSelectElement>('portfolio')
  const status = element('status')
  const view = element('view')
  const chart = document.getElementById('chart') as unknown as SVGSVGElement
  const incomeChart = document.getElementById('income') as unknown as SVGSVGElement
  const money = new Intl.NumberFormat('pt-BR', { style: 'currency', currency: 'BRL' })
  const percent = (value: number | null): string => (value === null ? '—' : `${value.toFixed(2)} %`)
  let range = '1y'
  /** The load of what the view shows (the list, a performance, an income): the next one aborts it. */
  let loading: AbortController | undefined
  /** The live valuation's stream: following another portfolio aborts it. */
  let live: AbortController | undefined
  /** The status line: the load's failure and the stream's, each cleared when it starts again. */
  const failures = { load: '', live: '' }

  /** The credentials as headers: the Bearer token always, the API key only when given (development fallback). */
  function headers (): Record<string, string> {
    const sent: Record<string, string> = {}
    if (token.value.trim() !== '') sent.authorization = `Bearer ${token.value.trim()}`
    if (apiKey.value.trim() !== '') sent['x-api-key'] = apiKey.value.trim()
    return sent
  }

  /** A refusal as an Error: the error body's code and message, or what a proxy's page (not JSON) leaves. */
  async function refusal (answer: Response): Promise<Error> {
    const body = await answer.json().catch(() => ({})) as Partial<ErrorBody>
    const message = Array.isArray(body.message) ? body.message.join('; ') : body.message ?? answer.statusText
    return new Error(`${answer.status} ${body.code ?? answer.url}: ${message}`)
  }

  async function api<T> (path: string, signal: AbortSignal): Promise<T> {
    const answer = await fetch(path, { headers: headers(), signal })
    if (!answer.ok) throw await refusal(answer)
    return await answer.json() as T
  }

  /** The token's subject, the user whose portfolios are listed. */
  function userOf (jwt: string): string {
    try {
      const encoded = (jwt.split('.')[1] ?? '').replace(/-/g, '+').replace(/_/g, '/')
      const payload = JSON.parse(atob(encoded)) as { sub?: unknown }
      return String(payload.sub ?? '')
    } catch {
      return ''
    }
  }

  function show (id: string, text: string, data?: string): void {
    const target = element(id)
    target.textContent = text
    if (data === undefined) delete target.dataset.value
    else target.dataset.value = data
  }

  /** Shows `source`'s failure on the status line beside the other's ('' clears it). */
  function fail (source: keyof typeof failures, message: string): void {
    failures[source] = message
    status.textContent = Object.values(failures).filter(text => text !== '').join(' · ')
  }

  function svg (
    name: string, attributes: Record<string, string | number>, text?: string, parent: SVGSVGElement = chart
  ): SVGElement {
    const node = document.createElementNS(SVG, name)
    for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value))
    if (text !== undefined) node.textContent = text
    parent.appendChild(node)
    return node
  }

  /** The year's net income by payment month: paid solid, announced hollow above it (docs/api.md#corporate-events). */
  function drawIncome (income: PortfolioIncome): void {
    incomeChart.replaceChildren()
    const [height, bottom, top] = [160, 24, 12]
    const highest = Math.max(0.01, ...income.months.map(month => month.net))
    const slot = (WIDTH - LEFT - RIGHT) / 12
    const scale = (value: number): number => value / highest * (height - top - bottom)
    svg('text', { ...LABEL, x: LEFT - 6, y: top + 4, 'text-anchor': 'end' }, money.format(highest), incomeChart)
    svg('line', { stroke: '#d0d7de', x1: LEFT, x2: WIDTH - RIGHT, y1: height - bottom, y2: height - bottom },
      undefined, incomeChart)
    income.months.forEach((month, index) => {
      const x = LEFT + index * slot + 3
      const bar = { x: x.toFixed(2), width: (slot - 6).toFixed(2), stroke: '#1a7f37' }
      svg('rect', {
        ...bar,
        'data-month': month.month,
        'data-net': month.net,
        y: (height - bottom - scale(month.net)).toFixed(2),
        height: scale(month.net).toFixed(2),
        fill: '#fff'
      }, undefined, incomeChart)
      const paid = scale(month.paid)
      svg('rect', { ...bar, y: (height - bottom - paid).toFixed(2), height: paid.toFixed(2), fill: '#1a7f37' },
        undefined, incomeChart)
      svg('text', { ...LABEL, x: (x + (slot - 6) / 2).toFixed(2), y: height - 8, 'text-anchor': 'middle' },
        month.month.slice(5), incomeChart)
    })
  }

  /** The time-weighted return and IBOVESPA, percent from `from`, on one scale; estimated points hollow. */
  function draw (performance: PortfolioPerformance): void {
    chart.replaceChildren()
    const points = performance.points
    const values = points.flatMap(point => (point.ibov === null ? [point.twr] : [point.twr, point.ibov]))
    const min = Math.min(0, ...values)
    const max = Math.max(min + 1, 0, ...values)
    const [first, last] = [Date.parse(performance.from), Date.parse(performance.to)]
    const x = (date: string): string =>
      (LEFT + (Date.parse(date) - first) / Math.max(1, last - first) * (WIDTH - LEFT - RIGHT)).toFixed(2)
    const y = (value: number): string => (TOP + (max - value) / (max - min) * (HEIGHT - TOP - BOTTOM)).toFixed(2)
    chart.dataset.min = String(min)
    chart.dataset.max = String(max)
    for (const mark of [min, 0, max]) {
      const grid = { stroke: '#d0d7de', 'stroke-dasharray': mark === 0 ? '' : '3 3' }
      svg('line', { ...grid, x1: LEFT, x2: WIDTH - RIGHT, y1: y(mark), y2: y(mark) })
      svg('text', { ...LABEL, x: LEFT - 6, y: Number(y(mark)) + 4, 'text-anchor': 'end' }, percent(mark))
    }
    svg('text', { ...LABEL, x: LEFT, y: HEIGHT - 12 }, performance.from)
    svg('text', { ...LABEL, x: WIDTH - RIGHT, y: HEIGHT - 12, 'text-anchor': 'end' }, performance.to)
    const ibov = points.filter(point => point.ibov !== null)
    if (ibov.length > 0) {
      svg('polyline', {
        'data-series': 'ibov',
        points: ibov.map(point => `${x(point.date)},${y(point.ibov as number)}`).join(' '),
        fill: 'none',
        stroke: '#bc4c00',
        'stroke-width': 2
      })
    }
    svg('polyline', {
      'data-series': 'twr',
      points: points.map(point => `${x(point.date)},${y(point.twr)}`).join(' '),
      fill: 'none',
      stroke: '#1f6feb',
      'stroke-width': 2
    })
    const radius = points.length > 60 ? 1.5 : 3
    for (const point of points) {
      svg('circle', {
        'data-date': point.date,
        'data-twr': point.twr,
        'data-estimated': String(point.estimated),
        cx: x(point.date),
        cy: y(point.twr),
        r: radius,
        fill: point.estimated ? '#fff' : '#1f6feb',
        stroke: '#1f6feb'
      })
    }
  }

  /**
   * Runs `task`, the load before it aborted: its requests end and nothing it was answered is drawn, so an older
   * answer never overwrites a newer selection. While it runs the view is busy and its charts carry no `loaded`
   * mark; a failure empties the view (nothing of another selection stays drawn) and shows on the status line.
   */
  function load (task: (signal: AbortSignal) => Promise<void>): void {
    loading?.abort()
    const controller = new AbortController()
    loading = controller
    view.setAttribute('aria-busy', 'true')
    delete chart.dataset.loaded
    delete incomeChart.dataset.loaded
    fail('load', '')
    task(controller.signal).catch((error: Error) => {
      if (controller.signal.aborted) return // replaced by a newer load, which shows its own outcome
      chart.replaceChildren()
      incomeChart.replaceChildren()
      for (const figure of view.querySelectorAll<HTMLElement>('dd, #income-total')) show(figure.id, '')
      fail('load', error.message)
    }).finally(() => { if (loading === controller) view.setAttribute('aria-busy', 'false') })
  }

  /** Lists the user's portfolios, the selected one kept while it is listed (else the first), and loads it. */
  async function loadAll (signal: AbortSignal): Promise<void> {
    const user = userOf(token.value.trim())
    const path = `/portfolios?userId=${encodeURIComponent(user)}&limit=100`
    const portfolios = await api<Array<{ id: string, name: string }>>(path, signal)
    const selected = portfolio.value
    portfolio.replaceChildren(...portfolios.map(({ id, name }) => new Option(name, id)))
    if (portfolios.length === 0) throw new Error(`user ${user} has no portfolio`)
    if (portfolios.some(({ id }) => id === selected)) portfolio.value = selected
    follow(portfolio.value)
    await loadSelection(signal)
  }

  /** The selected portfolio's performance over the range and its income, drawn together once both are in. */
  async function loadSelection (signal: AbortSignal): Promise<void> {
    const [id, shown] = [portfolio.value, range]
    if (id === '') throw new Error('no portfolio listed: press Load')
    const path = `/portfolios/${encodeURIComponent(id)}`
    const [performance, income] = await Promise.all([
      api<PortfolioPerformance>(`${path}/performance?range=${shown}`, signal),
      api<PortfolioIncome>(`${path}/income`, signal)
    ])
    signal.throwIfAborted() // an answer read in full just before the abort is not drawn either
    draw(performance)
    show('value', money.format(performance.value), String(performance.value))
    show('invested', money.format(performance.invested), String(performance.invested))
    show('result', money.format(performance.result), String(performance.result))
    show('twr', percent(performance.twr), String(performance.twr))
    show('ibov', percent(performance.benchmarks.ibov))
    show('selic', percent(performance.benchmarks.selic))
    show('ipca', percent(performance.benchmarks.ipca))
    // A price that is not a market price is said to be so (docs/api.md#performance).
    const market = performance.quoteSource === 'brapi.dev'
    show('prices', market ? 'market closes (brapi.dev)' : `simulated, not market prices (${performance.quoteSource})`,
      performance.quoteSource)
    chart.dataset.loaded = `${id} ${shown}`
    drawIncome(income)
    show('income-total', `${money.format(income.total.net)} net (${money.format(income.total.withheld)} withheld)`,
      String(income.total.net))
    incomeChart.dataset.loaded = `${id} ${income.year}`
  }

  /** Follows `id`'s live valuation, the stream before it aborted; its figures empty until its first message. */
  function follow (id: string): void {
    live?.abort()
    const controller = new AbortController()
    live = controller
    for (const figure of ['market-value', 'live-result', 'quoted-at']) show(figure, '')
    show('messages', '0', '0')
    fail('live', '')
    stream(id, controller.signal).catch((error: Error) => {
      if (!controller.signal.aborted) fail('live', error.message) // an aborted stream was replaced
    })
  }

  /** Server-Sent Events read from fetch (a browser's EventSource cannot send the credential headers). */
  async function stream (id: string, signal: AbortSignal): Promise<void> {
    let count = 0
    const path = `/portfolios/${encodeURIComponent(id)}/valuation/stream`
    const answer = await fetch(path, { headers: headers(), signal })
    if (!answer.ok) throw await refusal(answer)
    if (answer.body === null) throw new Error(`${path}: no body`)
    const reader = answer.body.pipeThrough(new TextDecoderStream()).getReader()
    let buffered = ''
    for (;;) {
      const { value, done } = await reader.read()
      // The service ends a stream as it shuts down or the token expires: the figures would stop without a word.
      if (done) throw new Error('The live valuation ended: press Load to follow it again')
      buffered += value.replace(/\r\n/g, '\n')
      for (let end = buffered.indexOf('\n\n'); end !== -1; end = buffered.indexOf('\n\n')) {
        const lines = buffered.slice(0, end).split('\n')
        buffered = buffered.slice(end + 2)
        const event = lines.find(line => line.startsWith('event:'))?.slice(6).trim()
        const data = lines.filter(line => line.startsWith('data:')).map(line => line.slice(5).trim()).join('\n')
        if (event === 'deleted') throw new Error('The portfolio was deleted')
        if (event !== 'valuation') continue
        const valuation = JSON.parse(data) as PortfolioValuation
        show('market-value', money.format(valuation.marketValue), String(valuation.marketValue))
        show('live-result', money.format(valuation.result), String(valuation.result))
        show('quoted-at', valuation.quotedAt ?? '—')
        show('messages', String(++count), String(count))
      }
    }
  }

  const buttons = [...document.querySelectorAll<HTMLButtonElement>('#ranges button')]
  for (const button of buttons) {
    button.addEventListener('click', () => {
      range = button.dataset.range ?? '1y'
      for (const other of buttons) other.setAttribute('aria-pressed', String(other === button))
      load(loadSelection)
    })
  }
  element('load').addEventListener('click', () => { load(loadAll) })
  portfolio.addEventListener('change', () => {
    follow(portfolio.value)
    load(loadSelection)
  })
  load(loadAll)
}
/* c8 ignore stop */
