import { createHmac } from 'node:crypto'
import t, { type Test } from 'tap'
import Fastify from 'fastify'
import errorResponses from '../../src/plugins/error-responses.js'
import auth, { bearerToken, requirePrincipal, type AuthPluginOptions } from '../../src/plugins/auth.js'
import { providerConfig, sha1Hex } from '../../src/schemas/tokens.js'
import {
  assertErrorBody,
  bearer,
  fixtureToken,
  signToken,
  tymon,
  tymonClaims,
  userToken,
  clientToken,
  TEXTS
} from '../helper.js'

const providers = providerConfig({ user: 'App\\Models\\User', client: 'App\\Models\\User\\Client' })

/** The auth plugin alone on a bare Fastify, with one route per guard. */
async function guardedApp (t: Test, overrides: Partial<AuthPluginOptions> = {}) {
  const app = Fastify()
  await app.register(errorResponses)
  await app.register(auth, {
    jwtSecret: tymon.secret,
    jwtAlgorithm: 'HS256',
    leewaySeconds: 0,
    providers,
    apiKeys: ['key-one', 'key-two'],
    // These tests send many refused tokens from one address; the budget has its own test.
    authFailuresPerMinute: 1_000_000,
    ...overrides
  })
  app.get('/any', { onRequest: [app.verifyJwt] }, async request => {
    const principal = requirePrincipal(request)
    return { id: principal.id, type: principal.type, rawToken: principal.rawToken, tokenData: principal.tokenData }
  })
  app.get('/user', { onRequest: [app.verifyJwt, app.requireUser] }, async () => ({ ok: true }))
  app.get('/client', { onRequest: [app.verifyJwt, app.requireClient] }, async () => ({ ok: true }))
  app.get('/keyed', { onRequest: [app.verifyApiKey] }, async () => ({ ok: true }))
  app.get('/open', async request => ({ principal: request.principal }))
  t.teardown(() => app.close())
  return app
}

t.test('provider hashes are sha1 of the model class names', async t => {
  t.equal(sha1Hex('App\\Models\\User'), tymon.userProviderHash)
  t.equal(sha1Hex('App\\Models\\User\\Client'), tymon.clientProviderHash)
  t.same(providers, {
    userProviderHash: tymon.userProviderHash,
    clientProviderHash: tymon.clientProviderHash,
    autoCalculated: true,
    models: { user: 'App\\Models\\User', client: 'App\\Models\\User\\Client' }
  })
  const explicit = providerConfig({ user: 'A', client: 'B' }, { client: 'c'.repeat(40) })
  t.equal(explicit.autoCalculated, false)
  t.equal(explicit.clientProviderHash, 'c'.repeat(40))
  t.equal(explicit.userProviderHash, sha1Hex('A'))
})

t.test('bearerToken reads only "Bearer <token>", scheme in any case, one space', async t => {
  t.equal(bearerToken('Bearer a.b.c'), 'a.b.c')
  t.equal(bearerToken('bearer a.b.c'), 'a.b.c')
  t.equal(bearerToken('BEARER a.b.c'), 'a.b.c')
  t.equal(bearerToken(undefined), null)
  t.equal(bearerToken('Bearer  a.b.c'), null)
  t.equal(bearerToken('Bearer\ta.b.c'), null)
  t.equal(bearerToken('Bearer a.b.c extra'), null)
  t.equal(bearerToken('Basic dXNlcjpwYXNz'), null)
  t.equal(bearerToken('Basic x, Bearer a.b.c'), null)
  t.equal(bearerToken('Bearer '), null)
  t.equal(bearerToken('a.b.c'), null)
})

t.test('every tymon fixture token gets the answer it expects', async t => {
  const app = await guardedApp(t)
  for (const fixture of tymon.tokens) {
    const res = await app.inject({ method: 'GET', url: '/any', headers: bearer(fixture.token) })
    if (fixture.expect.valid) {
      t.equal(res.statusCode, 200, `${fixture.name} is accepted`)
      t.same(res.json().type, fixture.expect.type, `${fixture.name} is a ${String(fixture.expect.type)}`)
      t.equal(res.json().id, String(fixture.payload.sub), `${fixture.name}: id is the string form of sub`)
      t.equal(res.json().rawToken, fixture.token)
    } else {
      t.equal(res.statusCode, 401, `${fixture.name} is rejected`)
    }
  }
})

t.test('fixture rejections carry the documented messages', async t => {
  const app = await guardedApp(t)
  const expired = await app.inject({ method: 'GET', url: '/any', headers: bearer(fixtureToken('expired_user').token) })
  t.equal(expired.statusCode, 401)
  t.equal(expired.json().message, TEXTS.tokenExpired)
  assertErrorBody(t, expired.json(), 401, '/any')

  const noSub = await app.inject({ method: 'GET', url: '/any', headers: bearer(fixtureToken('no_sub').token) })
  t.equal(noSub.statusCode, 401)
  t.equal(noSub.json().message, TEXTS.subjectMissing)

  const otherSecret = await app.inject({
    method: 'GET',
    url: '/any',
    headers: bearer(fixtureToken('other_secret').token)
  })
  t.equal(otherSecret.statusCode, 401)
  t.equal(otherSecret.json().message, TEXTS.tokenInvalid)
})

t.test('guards: user-only and client-only routes', async t => {
  const app = await guardedApp(t)
  const user = fixtureToken('valid_user').token
  const client = fixtureToken('valid_client').token
  t.equal((await app.inject({ url: '/user', headers: bearer(user) })).statusCode, 200)
  t.equal((await app.inject({ url: '/client', headers: bearer(client) })).statusCode, 200)

  const clientOnUser = await app.inject({ url: '/user', headers: bearer(client) })
  t.equal(clientOnUser.statusCode, 403)
  t.same(clientOnUser.json().message, TEXTS.forbiddenPrincipal)
  assertErrorBody(t, clientOnUser.json(), 403, '/user')

  const userOnClient = await app.inject({ url: '/client', headers: bearer(user) })
  t.equal(userOnClient.statusCode, 403)
  t.same(userOnClient.json().message, TEXTS.forbiddenPrincipal)

  const anonymous = await app.inject({ url: '/user' })
  t.equal(anonymous.statusCode, 401)
  t.equal(anonymous.json().message, TEXTS.tokenInvalid)

  const open = await app.inject({ url: '/open' })
  t.same(open.json(), { principal: null }, 'a route without guards has no principal')
})

t.test('tokens the verifier must refuse (RFC 8725, docs/api.md#tokens)', async t => {
  const app = await guardedApp(t)
  const claims = tymonClaims()
  const valid = signToken(claims)
  const [head, body] = valid.split('.') as [string, string, string]
  const unsignedHeader = (alg: string) => Buffer.from(JSON.stringify({ typ: 'JWT', alg })).toString('base64url')
  const tamperedBody = Buffer.from(JSON.stringify({ ...claims, sub: 1 })).toString('base64url')

  const cases: Array<[string, Record<string, string>]> = [
    ['alg none', bearer(`${unsignedHeader('none')}.${body}.`)],
    ['alg NONE', bearer(`${unsignedHeader('NONE')}.${body}.`)],
    ['alg nOnE with a signature', bearer(`${unsignedHeader('nOnE')}.${body}.${valid.split('.')[2] ?? ''}`)],
    ['another HMAC algorithm (HS512)', bearer(signToken(claims, { alg: 'HS512' }))],
    ['another HMAC algorithm (HS384)', bearer(signToken(claims, { alg: 'HS384' }))],
    ['an RSA algorithm name over an HMAC signature',
      bearer(signToken(claims, { header: { typ: 'JWT', alg: 'RS256' } }))],
    ['empty signature', bearer(`${head}.${body}.`)],
    ['tampered payload', bearer(`${head}.${tamperedBody}.${valid.split('.')[2] ?? ''}`)],
    ['wrong secret', bearer(signToken(claims, { secret: 'another-secret-of-enough-length-0123456789' }))],
    ['two segments', bearer(`${head}.${body}`)],
    ['garbage', bearer('not-a-token')],
    ['payload that is a JSON array', bearer(signToken([claims]))],
    ['payload that is a string', bearer(signToken(JSON.stringify('sub')))],
    ['payload that is not JSON', bearer(signToken('{"sub":'))],
    ['unknown prv', bearer(signToken({ ...claims, prv: 'f'.repeat(40) }))],
    ['no prv (no default type)', bearer(signToken({ ...claims, prv: undefined }))],
    ['sub of the wrong type', bearer(signToken({ ...claims, sub: { id: 1 } }))],
    ['iss of the wrong type', bearer(signToken({ ...claims, iss: ['http://a', 'http://b'] }))],
    ['exp as a string', bearer(signToken({ ...claims, exp: String(claims.exp) }))],
    ['iat as a string', bearer(signToken({ ...claims, iat: String(claims.iat) }))],
    ['unknown crit header', bearer(signToken(claims, {
      header: {
        typ: 'JWT',
        alg: 'HS256',
        crit: ['exp-ext'],
        'exp-ext': 1
      }
    }))],
    ['malformed Authorization: two spaces', { authorization: `Bearer  ${valid}` }],
    ['malformed Authorization: tab', { authorization: `Bearer\t${valid}` }],
    ['malformed Authorization: no scheme', { authorization: valid }],
    ['malformed Authorization: Basic', { authorization: `Basic ${valid}` }],
    ['malformed Authorization: two tokens', { authorization: `Bearer ${valid} Bearer ${valid}` }],
    ['no Authorization header', {}]
  ]
  for (const [name, headers] of cases) {
    const res = await app.inject({ method: 'GET', url: '/any', headers })
    t.equal(res.statusCode, 401, `${name} → 401`)
    t.equal(res.json().message, TEXTS.tokenInvalid, `${name} → ${TEXTS.tokenInvalid}`)
    t.notMatch(res.body, valid, `${name}: the token is not echoed`)
  }
})

t.test('tokens refused to the letter of RFC 7515/7519, with the right secret (docs/api.md#tokens)', async t => {
  const app = await guardedApp(t)
  const claims = tymonClaims()
  const valid = signToken(claims)
  const [head, body, signature] = valid.split('.') as [string, string, string]
  // The last of 43 characters carries 2 unused bits: a neighbour in the alphabet decodes to the same bytes.
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
  const last = alphabet[alphabet.indexOf(signature.at(-1) ?? 'A') ^ 1] ?? ''
  const sameBytes = `${signature.slice(0, -1)}${last}`
  t.same(
    Buffer.from(sameBytes, 'base64url'),
    Buffer.from(signature, 'base64url'),
    'the altered signature decodes to the same bytes'
  )
  const signed = (headBytes: Buffer, payloadBytes: Buffer): string => {
    const input = `${headBytes.toString('base64url')}.${payloadBytes.toString('base64url')}`
    return `${input}.${createHmac('sha256', tymon.secret).update(input).digest('base64url')}`
  }
  const json = JSON.stringify(claims)
  const notUtf8 = Buffer.concat([
    Buffer.from(json.slice(0, -1)),
    Buffer.from(',"name":"'),
    Buffer.from([0xc3, 0x28]),
    Buffer.from('"}')
  ])

  const cases: Array<[string, string, string]> = [
    ['a signature in non-canonical base64url', `${head}.${body}.${sameBytes}`, TEXTS.tokenInvalid],
    ['a padded signature', `${valid}=`, TEXTS.tokenInvalid],
    [
      'a payload that is not UTF-8',
      signed(Buffer.from(JSON.stringify({ typ: 'JWT', alg: 'HS256' })), notUtf8),
      TEXTS.tokenInvalid
    ],
    ['exp as a float', signToken({ ...claims, exp: claims.exp + 0.5 }), TEXTS.tokenInvalid],
    ['exp of 1e20', signToken({ ...claims, exp: 1e20 }), TEXTS.tokenInvalid],
    ['iat as a float', signToken({ ...claims, iat: claims.iat - 0.25 }), TEXTS.tokenInvalid],
    ['nbf as a float', signToken({ ...claims, nbf: claims.nbf - 0.25 }), TEXTS.tokenInvalid],
    ['typ JWS', signToken(claims, { header: { typ: 'JWS', alg: 'HS256' } }), TEXTS.tokenInvalid],
    ['typ of another kind', signToken(claims, { header: { typ: 'at+jwt', alg: 'HS256' } }), TEXTS.tokenInvalid],
    ['typ that is not a string', signToken(claims, { header: { typ: 1, alg: 'HS256' } }), TEXTS.tokenInvalid],
    ['a blank sub', signToken({ ...claims, sub: '   ' }), TEXTS.subjectMissing]
  ]
  for (const [name, token, message] of cases) {
    const res = await app.inject({ method: 'GET', url: '/any', headers: bearer(token) })
    t.equal(res.statusCode, 401, `${name} → 401`)
    t.equal(res.json().message, message, `${name} → ${message}`)
  }
  const withoutTyp = await app.inject({
    method: 'GET',
    url: '/any',
    headers: bearer(signToken(claims, { header: { alg: 'HS256' } }))
  })
  t.equal(withoutTyp.statusCode, 200, 'typ is optional')
})

t.test('a token only in the query string, a body field or a cookie is not read', async t => {
  const app = await guardedApp(t)
  const token = userToken()
  for (const res of [
    await app.inject({ method: 'GET', url: `/any?token=${token}` }),
    await app.inject({ method: 'GET', url: '/any', headers: { cookie: `token=${token}` } })
  ]) {
    t.equal(res.statusCode, 401)
    t.equal(res.json().message, TEXTS.tokenInvalid)
  }
})

t.test('each of the six claims is required; a missing sub has its own message', async t => {
  const app = await guardedApp(t)
  for (const claim of ['iss', 'iat', 'exp', 'nbf', 'jti', 'sub']) {
    const claims = tymonClaims()
    delete claims[claim]
    const res = await app.inject({ method: 'GET', url: '/any', headers: bearer(signToken(claims)) })
    t.equal(res.statusCode, 401, `without ${claim} → 401`)
    t.equal(res.json().message, claim === 'sub' ? TEXTS.subjectMissing : TEXTS.tokenInvalid, `without ${claim}`)
  }
  for (const sub of [null, '']) {
    const res = await app.inject({ method: 'GET', url: '/any', headers: bearer(signToken({ ...tymonClaims(), sub })) })
    t.equal(res.json().message, TEXTS.subjectMissing, `sub ${JSON.stringify(sub)} counts as absent`)
  }
})

t.test('time claims: exp, nbf and iat with and without leeway', async t => {
  const strict = await guardedApp(t)
  const lenient = await guardedApp(t, { leewaySeconds: 120 })
  const expired = userToken({ iatOffset: -7200, nbfOffset: -7200, expOffset: -60 })
  const notYet = userToken({ nbfOffset: 60 })
  const issuedInFuture = userToken({ iatOffset: 60 })
  const longExpired = userToken({ iatOffset: -7200, nbfOffset: -7200, expOffset: -600 })

  const res = await strict.inject({ url: '/any', headers: bearer(expired) })
  t.equal(res.statusCode, 401)
  t.equal(res.json().message, TEXTS.tokenExpired)
  t.equal((await strict.inject({ url: '/any', headers: bearer(notYet) })).json().message, TEXTS.tokenInvalid)
  t.equal((await strict.inject({ url: '/any', headers: bearer(issuedInFuture) })).json().message, TEXTS.tokenInvalid)

  t.equal(
    (await lenient.inject({ url: '/any', headers: bearer(expired) })).statusCode,
    200,
    'leeway covers a minute past exp'
  )
  t.equal(
    (await lenient.inject({ url: '/any', headers: bearer(notYet) })).statusCode,
    200,
    'leeway covers nbf a minute ahead'
  )
  t.equal(
    (await lenient.inject({ url: '/any', headers: bearer(issuedInFuture) })).statusCode,
    200,
    'leeway covers iat a minute ahead'
  )
  t.equal((await lenient.inject({ url: '/any', headers: bearer(longExpired) })).json().message, TEXTS.tokenExpired)
})

t.test('an old iat is never an age cap: refreshed tokens keep their original iat', async t => {
  const app = await guardedApp(t)
  const refreshed = userToken({ iatOffset: -30 * 86_400, nbfOffset: -5, expOffset: 3600 })
  t.equal((await app.inject({ url: '/any', headers: bearer(refreshed) })).statusCode, 200)
})

t.test('prv decides the kind; JWT_DEFAULT_TYPE takes tokens without prv', async t => {
  const lenient = await guardedApp(t, { defaultType: 'user' })
  const noPrv = signToken({ ...tymonClaims(), prv: undefined })
  const res = await lenient.inject({ url: '/any', headers: bearer(noPrv) })
  t.equal(res.statusCode, 200)
  t.equal(res.json().type, 'user')
  const unknown = await lenient.inject({
    url: '/any',
    headers: bearer(signToken({ ...tymonClaims(), prv: '0'.repeat(40) }))
  })
  t.equal(unknown.statusCode, 401, 'an unknown prv stays invalid with a default type')
  t.equal((await lenient.inject({ url: '/any', headers: bearer(clientToken()) })).json().type, 'client')
})

t.test('only the configured algorithm verifies', async t => {
  const app = await guardedApp(t, { jwtAlgorithm: 'HS512' })
  const claims = tymonClaims()
  t.equal((await app.inject({ url: '/any', headers: bearer(signToken(claims, { alg: 'HS512' })) })).statusCode, 200)
  t.equal((await app.inject({ url: '/any', headers: bearer(signToken(claims, { alg: 'HS256' })) })).statusCode, 401)
})

t.test('tokenData carries the issuer, jti, provider and the custom claims uuid, email, name', async t => {
  const app = await guardedApp(t)
  const claims = { ...tymonClaims({ sub: 7 }), uuid: 'u-1', email: 'ana@example.com', name: 'Ana', extra: 5 }
  const res = await app.inject({ url: '/any', headers: bearer(signToken(claims)) })
  t.equal(res.statusCode, 200)
  t.same(res.json().tokenData, {
    issuer: claims.iss,
    jwtId: claims.jti,
    provider: tymon.userProviderHash,
    uuid: 'u-1',
    email: 'ana@example.com',
    name: 'Ana'
  })
  t.equal(res.json().id, '7')
})

t.test('API key: any configured key, compared whole', async t => {
  const app = await guardedApp(t)
  t.equal((await app.inject({ url: '/keyed', headers: { 'x-api-key': 'key-one' } })).statusCode, 200)
  t.equal((await app.inject({
    url: '/keyed',
    headers: { 'x-api-key': 'key-two' }
  })).statusCode, 200, 'rotation: the second key works too')
  t.equal((await app.inject({ url: '/keyed', headers: { 'x-api-key': 'key-one' } })).statusCode, 200, 'accepted again')
  // Refused whole after both keys were accepted (and remembered) once.
  for (const headers of [
    {},
    { 'x-api-key': '' },
    { 'x-api-key': 'key-on' },
    { 'x-api-key': 'key-one ' },
    { 'x-api-key': 'KEY-ONE' },
    { authorization: 'Bearer key-one' }
  ]) {
    const res = await app.inject({ url: '/keyed', headers })
    t.equal(res.statusCode, 401, `${JSON.stringify(headers)} → 401`)
    t.equal(res.json().message, TEXTS.apiKeyInvalid)
    assertErrorBody(t, res.json(), 401, '/keyed')
  }
})

t.test('requirePrincipal refuses a request without one', async t => {
  const app = Fastify()
  await app.register(errorResponses)
  await app.register(auth, { jwtSecret: 's', jwtAlgorithm: 'HS256', leewaySeconds: 0, providers, apiKeys: ['k'] })
  app.get('/misconfigured', async request => requirePrincipal(request).id)
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/misconfigured' })
  t.equal(res.statusCode, 401)
})

t.test('a token verified before is refused once it expires: the verified-token cache never outlives exp', async t => {
  const app = await guardedApp(t)
  const token = userToken({ expOffset: 2 })
  const exp = Number(JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()).exp)
  const first = await app.inject({ url: '/any', headers: bearer(token) })
  t.equal(first.statusCode, 200, 'verified, and now cached')
  // Wait for the wall clock to pass exp (a state, not a duration: no assertion on time).
  while (Date.now() < (exp + 1) * 1000) await new Promise(resolve => setTimeout(resolve, 100))
  const later = await app.inject({ url: '/any', headers: bearer(token) })
  t.equal(later.statusCode, 401)
  t.equal(later.json().message, TEXTS.tokenExpired)
  t.equal((await app.inject({ url: '/any', headers: bearer(token) })).statusCode, 401, 'and stays refused')
})
