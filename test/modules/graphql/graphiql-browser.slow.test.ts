import t from 'tap'
import { Chromium, NEEDS_CHROMIUM } from '../../fixtures/chromium.js'
import { buildTestApp, testNeeding } from '../../helper.js'

/**
 * What the page does once its scripts ran: GraphiQL's editor shown, the schema introspected over
 * /graphql, and nothing loaded from another origin (the machine has no internet: a CDN's script
 * would leave the page blank). Polled, with a bound far above any busy machine's delay.
 */
const RENDERED = `new Promise((resolve, reject) => {
  const until = Date.now() + 60000
  const poll = () => {
    const resources = performance.getEntriesByType('resource').map(entry => entry.name)
    const editor = document.querySelector('.graphiql-container .graphiql-query-editor')
    const introspected = resources.some(name => name === location.origin + '/graphql')
    if (editor !== null && introspected) {
      resolve({ resources, origins: [...new Set(resources.map(name => new URL(name).origin))], title: document.title })
    } else if (Date.now() > until) {
      reject(new Error('GraphiQL did not render: ' + document.body.innerText.slice(0, 200)))
    } else setTimeout(poll, 100)
  }
  poll()
})`

testNeeding(t, 'GraphiQL renders in headless Chromium from the service\'s own files, no CDN', [NEEDS_CHROMIUM],
  async t => {
    const app = await buildTestApp(t)
    const url = await app.listen({ port: 0, host: '127.0.0.1' })
    const chromium = await Chromium.launch(t, 'chromium-graphiql')
    const page = await chromium.open(`${url}/graphiql`)
    const rendered = await chromium.evaluate(page, RENDERED) as
      { resources: string[], origins: string[], title: string }
    t.equal(rendered.title, 'GraphiQL · BFF Service')
    t.same(rendered.origins, [new URL(url).origin], 'every file from the service itself')
    for (const file of ['react.js', 'react-dom.js', 'graphiql.js', 'graphiql.css']) {
      t.ok(rendered.resources.includes(`${url}/graphiql/${file}`), `${file} from the service`)
    }
  })
