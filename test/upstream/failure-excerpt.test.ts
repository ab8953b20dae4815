import { randomBytes } from 'node:crypto'
import { Writable } from 'node:stream'
import t, { type Test } from 'tap'
import { bearer, buildTestApp, clientToken, userToken } from '../helper.js'
import { startFakeLaravel } from '../fixtures/fake-laravel.js'
import { PLUGGY_CLIENT_ID, PLUGGY_CLIENT_SECRET, startFakePluggy } from '../fixtures/fake-pluggy.js'
import { sendJson } from '../fixtures/fake-server.js'
import { EXCERPT_CHARACTERS, failureExcerpt } from '../../src/upstream/failure-excerpt.js'

const hex = (bytes: number): string => randomBytes(bytes).toString('hex')
const part = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url')

/** Secrets of an upstream's own, as a Laravel debug page or a JSON error shows them, each unique to this run. */
function plantedSecrets () {
  return {
    appKey: `base64:${randomBytes(32).toString('base64')}`,
    dbPassword: `Pw-${hex(4)}`,
    bearerToken: `tok_${hex(8)}`,
    jwt: [part({ alg: 'HS256' }), part({ sub: '42' }), randomBytes(32).toString('base64url')].join('.'),
    mailPassword: `mail-${hex(3)}`,
    dsnPassword: `dsn${hex(3)}`
  }
}
type Secrets = ReturnType<typeof plantedSecrets>

/** The start of a debug page: the environment first, where a short excerpt would reach it. */
function debugPage (secrets: Secrets): string {
  return [
    '<!DOCTYPE html><html><head><style>body { color: red }</style><title>Server Error</title></head><body>',
    '<pre>APP_KEY=' + secrets.appKey + '\nDB_PASSWORD=' + secrets.dbPassword + '\n',
    'Authorization: Bearer ' + secrets.bearerToken + '</pre>',
    '<table><tr><td>MAIL_PASSWORD</td><td>' + secrets.mailPassword + '</td></tr></table>',
    `<p>${'Illuminate\\Database\\QueryException in Connection.php line 742. '.repeat(60)}</p>`,
    '<p>END-OF-PAGE</p></body></html>'
  ].join('')
}

/** A JSON error whose first characters hold a token and a connection string. */
function jsonFailure (secrets: Secrets): string {
  const db = `pgsql://forge:${secrets.dsnPassword}@db:5432/app`
  return JSON.stringify({ token: secrets.jwt, db, message: 'Server Error' })
}

function assertNoSecret (t: Test, text: string, secrets: Secrets): void {
  for (const [name, secret] of Object.entries(secrets)) t.notOk(text.includes(secret), `${name} is not in the log`)
  for (const piece of secrets.jwt.split('.')) t.notOk(text.includes(piece), 'no part of the JWT is in the log')
  t.notOk(text.includes(secrets.appKey.slice('base64:'.length, 'base64:'.length + 16)), 'nor a piece of APP_KEY')
}

t.test('an excerpt: at most 200 characters of the text, tags dropped, secrets masked, the rest kept', async t => {
  const secrets = plantedSecrets()
  const page = failureExcerpt(Buffer.from(debugPage(secrets)))
  t.equal(page.size, Buffer.byteLength(debugPage(secrets)))
  t.ok(page.excerpt.length <= EXCERPT_CHARACTERS + 1, `${page.excerpt.length} characters`)
  assertNoSecret(t, page.excerpt, secrets)
  t.match(page.excerpt, /^Server Error APP_KEY=\[masked\] DB_PASSWORD=\[masked\] Authorization: /)
  t.match(page.excerpt, /MAIL_PASSWORD \[masked\] Illuminate/)
  t.notMatch(page.excerpt, /color|<|END-OF-PAGE/, 'no style, no tag, not the whole page')

  const json = failureExcerpt(jsonFailure(secrets))
  assertNoSecret(t, json.excerpt, secrets)
  t.match(json.excerpt, /"message":"Server Error"/, 'what is no secret is kept')

  const others = failureExcerpt('{"password":"p w d","api_key":\'k\',' +
    '"sig":"ab12cd34ef56ab12cd34ef56ab12","id":"0123456789abcdef0123456789abcdef"}')
  t.equal(others.excerpt, '{"password":[masked],"api_key":[masked],"sig":"[masked]","id":"[masked]"}')
  t.equal(failureExcerpt('Service Unavailable').excerpt, 'Service Unavailable', 'a plain message as it is')
  t.equal(failureExcerpt(Buffer.alloc(0)).size, 0)
})

t.test('upstream 5xx: status, size and a masked excerpt logged, on relays (undici) and own calls (got)', async t => {
  const secrets = plantedSecrets()
  const page = debugPage(secrets)
  const laravel = await startFakeLaravel(t)
  laravel.on('/api/crash', (_request, res) => { res.writeHead(500, { 'content-type': 'text/html' }); res.end(page) })
  laravel.on('/api/user/profile', (_request, res) => {
    res.writeHead(500, { 'content-type': 'application/json' })
    res.end(jsonFailure(secrets))
  })
  const pluggy = await startFakePluggy(t)
  pluggy.on('/items/item-x', (_request, res) => { res.writeHead(503, { 'content-type': 'text/html' }); res.end(page) })
  pluggy.on('/categories', (_request, res) => sendJson(res, 500, JSON.parse(jsonFailure(secrets)) as unknown))
  let logged = ''
  const stream = new Writable({ write (chunk, _encoding, done) { logged += String(chunk); done() } })
  const app = await buildTestApp(t, {
    BACKEND_URL: laravel.url,
    AGGREGATOR_URL: pluggy.url,
    AGGREGATOR_CLIENT_ID: PLUGGY_CLIENT_ID,
    AGGREGATOR_CLIENT_SECRET: PLUGGY_CLIENT_SECRET
  }, { logger: { level: 'trace', stream } })

  const user = bearer(userToken())
  const aggregator = async (headers: Record<string, string>, endpoint: string) =>
    await app.inject({ method: 'POST', url: '/aggregator', headers, payload: { endpoint, method: 'GET' } })
  const calls = [
    await app.inject({
      method: 'POST',
      url: '/backend-api/proxy/api/crash',
      headers: user,
      payload: { method: 'GET' }
    }),
    await app.inject({ method: 'GET', url: '/backend-api/user/profile', headers: user }),
    await aggregator(user, '/categories'),
    // A client's ownership lookup goes through got.
    await aggregator(bearer(clientToken()), '/items/item-x')
  ]
  t.same(calls.map(call => call.statusCode), [502, 502, 502, 502])

  const lines = logged.trim().split('\n').map(line => JSON.parse(line) as Record<string, unknown>)
  const failures = lines.filter(line => line.msg === 'upstream failed')
  t.equal(failures.length, 4, 'one line per failure')
  const expected = [
    { upstream: 'backend', status: 500, size: Buffer.byteLength(page) },
    { upstream: 'backend', status: 500, size: Buffer.byteLength(jsonFailure(secrets)) },
    { upstream: 'aggregator', status: 500, size: Buffer.byteLength(jsonFailure(secrets)) },
    { upstream: 'aggregator', status: 503, size: Buffer.byteLength(page) }
  ]
  failures.forEach((line, index) => {
    t.match(line, { ...expected[index], excerpt: /\[masked\]/ }, `failure ${index + 1}: status, size, masked excerpt`)
    t.equal(line.body, undefined, 'no body field')
    t.ok(String(line.excerpt).length <= EXCERPT_CHARACTERS + 1)
  })
  assertNoSecret(t, logged, secrets)
  t.notOk(logged.includes('END-OF-PAGE'), 'never the whole page')
})
