import { PERFORMANCE_RANGES } from '../../schemas/performance.js'

/** Text for an HTML attribute. */
function escaped (text: string): string {
  return text.replace(/[&<>"']/g, character => `&#${character.charCodeAt(0)};`)
}

/** The demo page (./index.ts), its token field filled with `token`; its script (./script.ts) does the rest. */
export function demoPage (token: string): string {
  const ranges = PERFORMANCE_RANGES.map(range =>
    `<button type="button" data-range="${range}"${range === '1y' ? ' aria-pressed="true"' : ''}>${range}</button>`)
  return `<!DOCTYPE html>
<html lang="pt-BR">
<head>
  <meta charset="utf-8">
  <title>Performance · BFF Service (development)</title>
  <meta name="robots" content="noindex">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <link rel="stylesheet" href="./demo/demo.css">
</head>
<body>
  <header>
    <h1>Desempenho da carteira</h1>
    <p>Development only: what <code>GET /portfolios/:id/performance</code>, <code>GET /portfolios/:id/income</code>
      and <code>GET /portfolios/:id/valuation/stream</code> answer (docs/api.md#performance,
      docs/api.md#corporate-events).</p>
  </header>
  <section id="credentials">
    <label>Bearer token (the demo user's, signed with the development secret)
      <input id="token" value="${escaped(token)}" autocomplete="off" spellcheck="false"></label>
    <label>API key (development fallback under PORTFOLIO_ACCESS=api-key)
      <input id="api-key" type="password" autocomplete="off" placeholder="one of API_KEYS: npm start prints it"></label>
    <label>Portfolio <select id="portfolio"></select></label>
    <button id="load" type="button">Load</button>
  </section>
  <nav id="ranges">${ranges.join('')}</nav>
  <p id="status" role="status"></p>
  <main id="view" aria-busy="true">
    <section id="chart-panel">
      <svg id="chart" xmlns="http://www.w3.org/2000/svg" width="720" height="300" viewBox="0 0 720 300"
        role="img" aria-label="Time-weighted return against IBOVESPA"></svg>
      <p class="legend"><span class="twr">Carteira (TWR)</span> <span class="ibov">IBOVESPA</span>
        <span class="estimated">○ estimated</span></p>
    </section>
    <section id="summary"><dl>
      <dt>Value</dt><dd id="value"></dd><dt>Invested</dt><dd id="invested"></dd><dt>Result</dt><dd id="result"></dd>
      <dt>TWR</dt><dd id="twr"></dd><dt>IBOVESPA</dt><dd id="ibov"></dd><dt>SELIC</dt><dd id="selic"></dd>
      <dt>IPCA</dt><dd id="ipca"></dd><dt>Prices</dt><dd id="prices"></dd>
    </dl></section>
    <section id="income-panel"><h2>Proventos (dividends, JCP, rendimentos) this year, by payment month</h2>
      <svg id="income" xmlns="http://www.w3.org/2000/svg" width="720" height="160" viewBox="0 0 720 160"
        role="img" aria-label="Net income by payment month"></svg>
      <p class="legend"><span class="paid">■ paid</span> <span class="announced">□ announced</span>
        <span id="income-total"></span></p>
    </section>
  </main>
  <section id="live"><h2>Live valuation</h2><dl>
    <dt>Market value</dt><dd id="market-value"></dd><dt>Result</dt><dd id="live-result"></dd>
    <dt>Quoted at</dt><dd id="quoted-at"></dd><dt>Messages</dt><dd id="messages">0</dd>
  </dl></section>
  <script src="./demo/demo.js"></script>
</body>
</html>
`
}

export const DEMO_STYLE = `body { font: 14px/1.4 sans-serif; margin: 24px; color: #1f2328; max-width: 760px; }
h1 { font-size: 20px; margin: 0 0 4px; }
h2 { font-size: 15px; margin: 0 0 6px; }
header p { margin: 0 0 16px; color: #57606a; }
#credentials { display: grid; gap: 8px; margin-bottom: 12px; }
#credentials label { display: grid; gap: 2px; color: #57606a; }
#credentials input, #credentials select { font: 13px monospace; padding: 4px; }
#ranges { display: flex; gap: 4px; margin-bottom: 8px; }
#ranges button[aria-pressed="true"] { background: #1f6feb; color: #fff; }
#status { min-height: 20px; color: #cf222e; margin: 4px 0; }
#view[aria-busy="true"] { opacity: 0.5; }
#chart, #income { display: block; background: #fff; border: 1px solid #d0d7de; }
.legend span { margin-right: 16px; }
.legend .twr { color: #1f6feb; } .legend .ibov { color: #bc4c00; } .legend .estimated { color: #57606a; }
.legend .paid, .legend .announced { color: #1a7f37; }
dl { display: grid; grid-template-columns: max-content auto; gap: 2px 16px; margin: 8px 0 16px; }
dt { color: #57606a; } dd { margin: 0; font-variant-numeric: tabular-nums; }
`
