import { Script } from 'node:vm'
import t from 'tap'
import { bearer, buildTestApp } from '../../helper.js'

t.test('/demo and its files exist outside production only', async t => {
  const production = await buildTestApp(t, { NODE_ENV: 'production' })
  for (const path of ['/demo', '/demo/demo.js', '/demo/demo.css']) {
    t.equal((await production.inject({ method: 'GET', url: path })).statusCode, 404, `${path}: 404 in production`)
  }
})

t.test('/demo: the page, its token the demo user\'s (user 1, signed with the service\'s secret), no API key in it, ' +
  'only its own files', async t => {
  const app = await buildTestApp(t)
  const page = await app.inject({ method: 'GET', url: '/demo' })
  t.equal(page.statusCode, 200)
  t.match(page.headers['content-type'], /^text\/html/)
  t.match(page.headers['content-security-policy'],
    /default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'/)
  t.match(page.headers['cache-control'], 'no-store', 'a page with a token is not kept')
  const token = /id="token" value="([^"]+)"/.exec(page.body)?.[1] ?? ''
  const me = await app.inject({ method: 'GET', url: '/auth/me', headers: bearer(token) })
  t.equal(me.statusCode, 200)
  t.match(me.json(), { id: '1', type: 'user' })
  t.notMatch(page.body, /test-key-primary|test-key-rotated/, 'never an API key')
  t.notMatch(page.body, /(?:src|href)="(?:https?:)?\/\//, 'nothing loaded from another origin')

  const script = await app.inject({ method: 'GET', url: '/demo/demo.js' })
  t.match(script.headers['content-type'], /^text\/javascript/)
  t.doesNotThrow(() => new Script(script.body), 'the script parses')
  t.match(script.body, /^\(function demoScript\(\)/)
  const style = await app.inject({ method: 'GET', url: '/demo/demo.css' })
  t.match(style.headers['content-type'], /^text\/css/)
})
