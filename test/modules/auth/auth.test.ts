import t from 'tap'
import {
  assertErrorBody,
  bearer,
  buildTestApp,
  clientToken,
  fixtureToken,
  signToken,
  tymon,
  tymonClaims,
  userToken,
  TEXTS
} from '../../helper.js'

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/
const user = fixtureToken('valid_user')
const client = fixtureToken('valid_client')

t.test('GET /auth/health answers without credentials', async t => {
  const app = await buildTestApp(t)
  const res = await app.inject({ method: 'GET', url: '/auth/health' })
  t.equal(res.statusCode, 200)
  t.match(res.json(), { status: 'OK', timestamp: ISO_MS, message: TEXTS.health })
  t.match(TEXTS.health, /está funcionando!$/)
})

t.test('GET /auth/profile', async t => {
  const app = await buildTestApp(t)
  const res = await app.inject({ method: 'GET', url: '/auth/profile', headers: bearer(user.token) })
  t.equal(res.statusCode, 200)
  t.same(res.json(), {
    message: 'Perfil acessado com sucesso',
    user: {
      id: '1',
      type: 'user',
      expiresAt: new Date(Number(user.payload.exp) * 1000).toISOString(),
      issuedAt: new Date(Number(user.payload.iat) * 1000).toISOString()
    }
  })
  const asClient = await app.inject({ method: 'GET', url: '/auth/profile', headers: bearer(client.token) })
  t.equal(asClient.json().user.type, 'client')

  const anonymous = await app.inject({ method: 'GET', url: '/auth/profile' })
  t.equal(anonymous.statusCode, 401)
  t.equal(anonymous.json().message, TEXTS.tokenInvalid)
  assertErrorBody(t, anonymous.json(), 401, '/auth/profile')

  const expired = await app.inject({
    method: 'GET',
    url: '/auth/profile',
    headers: bearer(fixtureToken('expired_user').token)
  })
  t.equal(expired.statusCode, 401)
  t.equal(expired.json().message, TEXTS.tokenExpired)

  const noSub = await app.inject({ method: 'GET', url: '/auth/profile', headers: bearer(fixtureToken('no_sub').token) })
  t.equal(noSub.json().message, TEXTS.subjectMissing)
})

t.test('GET /auth/me returns the principal with its claims', async t => {
  const app = await buildTestApp(t)
  const res = await app.inject({ method: 'GET', url: '/auth/me', headers: bearer(fixtureToken('string_sub').token) })
  t.equal(res.statusCode, 200)
  t.same(res.json(), {
    id: '1',
    type: 'user',
    expiresAt: new Date(Number(fixtureToken('string_sub').payload.exp) * 1000).toISOString(),
    issuedAt: new Date(Number(fixtureToken('string_sub').payload.iat) * 1000).toISOString(),
    payload: fixtureToken('string_sub').payload
  })
  t.equal((await app.inject({ method: 'GET', url: '/auth/me' })).statusCode, 401)
})

t.test('GET /auth/user/dashboard: users only', async t => {
  const app = await buildTestApp(t)
  const res = await app.inject({ method: 'GET', url: '/auth/user/dashboard', headers: bearer(user.token) })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { message: 'Dashboard do usuário', userId: '1', userType: 'user', payload: user.payload })

  const asClient = await app.inject({ method: 'GET', url: '/auth/user/dashboard', headers: bearer(client.token) })
  t.equal(asClient.statusCode, 403)
  t.equal(asClient.json().message, TEXTS.forbiddenPrincipal)
  assertErrorBody(t, asClient.json(), 403, '/auth/user/dashboard')
  t.equal((await app.inject({ method: 'GET', url: '/auth/user/dashboard' })).statusCode, 401)
})

t.test('GET /auth/client/dashboard: clients only', async t => {
  const app = await buildTestApp(t)
  const res = await app.inject({ method: 'GET', url: '/auth/client/dashboard', headers: bearer(client.token) })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { message: 'Dashboard do client', clientId: '1', userType: 'client', payload: client.payload })

  const asUser = await app.inject({ method: 'GET', url: '/auth/client/dashboard', headers: bearer(user.token) })
  t.equal(asUser.statusCode, 403)
  t.equal(asUser.json().message, TEXTS.forbiddenPrincipal)
})

t.test('GET /auth/client/test: plain OK for clients', async t => {
  const app = await buildTestApp(t)
  const res = await app.inject({
    method: 'GET',
    url: '/auth/client/test',
    headers: bearer(clientToken({ sub: 'c-9' }))
  })
  t.equal(res.statusCode, 200)
  t.equal(res.body, 'OK')
  t.match(res.headers['content-type'], /^text\/plain/)
  t.equal((await app.inject({ method: 'GET', url: '/auth/client/test', headers: bearer(userToken()) })).statusCode, 403)
  t.equal((await app.inject({ method: 'GET', url: '/auth/client/test' })).statusCode, 401)
})

t.test('POST /auth/validate-token explains, never verifies', async t => {
  const app = await buildTestApp(t)
  for (const payload of [{}, { token: null }, { token: '' }, { token: '   ' }]) {
    const res = await app.inject({ method: 'POST', url: '/auth/validate-token', payload })
    t.equal(res.statusCode, 200, JSON.stringify(payload))
    t.same(res.json(), { valid: false, error: 'Token não fornecido' })
  }
  const given = await app.inject({ method: 'POST', url: '/auth/validate-token', payload: { token: 'anything.at.all' } })
  t.equal(given.statusCode, 200)
  t.match(given.json(), { message: /Authorization/, example: /^Authorization: Bearer / })
  t.notOk('valid' in given.json(), 'a given token is not judged')

  const wrongType = await app.inject({ method: 'POST', url: '/auth/validate-token', payload: { token: 5 } })
  t.equal(wrongType.statusCode, 400)
  t.same(wrongType.json().message, ['token must be a string'])
})

t.test('GET /auth/token/debug (development)', async t => {
  const app = await buildTestApp(t)
  const claims = { ...tymonClaims({ sub: 9 }), email: 'ana@example.com', name: 'Ana', uuid: 'uuid-9' }
  const token = signToken(claims)
  const res = await app.inject({ method: 'GET', url: '/auth/token/debug', headers: bearer(token) })
  t.equal(res.statusCode, 200)
  const body = res.json()
  t.equal(body.message, 'Debug completo do token JWT')
  t.match(body.authentication, { id: '9', type: 'user', expiresAt: ISO_MS, issuedAt: ISO_MS })
  t.same(body.rawToken, { value: token, length: token.length, parts: 3 })
  t.same(body.tokenData, {
    issuer: claims.iss,
    jwtId: claims.jti,
    provider: tymon.userProviderHash,
    uuid: 'uuid-9',
    email: 'ana@example.com',
    name: 'Ana'
  })
  t.same(body.jwtPayload, claims)
  t.same(body.extractedFields, { uuid: 'uuid-9', email: 'ana@example.com', name: 'Ana' })
  t.equal(body.laravelCompatible, true)
  t.match(body.instructions, { message: /Laravel/, example: `curl -H "Authorization: Bearer ${token}"` })
  t.match(body.instructions.example, 'http://127.0.0.1:8000/api/me')
})

t.test('GET /auth/laravel-compatibility (development)', async t => {
  const app = await buildTestApp(t)
  const res = await app.inject({ method: 'GET', url: '/auth/laravel-compatibility', headers: bearer(client.token) })
  t.equal(res.statusCode, 200)
  t.match(res.json(), {
    message: 'Dados de compatibilidade com Laravel',
    bffData: {
      userId: '1',
      userType: 'client',
      provider: tymon.clientProviderHash,
      issuer: client.payload.iss,
      jwtId: client.payload.jti
    },
    laravelFields: { sub: 1, iss: client.payload.iss, jti: client.payload.jti, prv: tymon.clientProviderHash },
    compatibility: { sameSecret: true, sameAlgorithm: true, tokenValidity: /^válido por / }
  })
})

t.test('no cache keeps an answer with the principal\'s claims or token: ' +
  'no-store, private, max-age=0, Pragma and Expires for older caches', async t => {
  const app = await buildTestApp(t)
  for (const [url, principal] of [
    ['/auth/profile', user],
    ['/auth/me', user],
    ['/auth/user/dashboard', user],
    ['/auth/client/dashboard', client],
    ['/auth/client/test', client],
    ['/auth/token/debug', user],
    ['/auth/laravel-compatibility', user]
  ] as const) {
    const res = await app.inject({ method: 'GET', url, headers: bearer(principal.token) })
    t.equal(res.statusCode, 200, url)
    t.equal(res.headers['cache-control'], 'no-store, max-age=0, private', url)
    t.equal(res.headers.pragma, 'no-cache', `${url}: Pragma`)
    t.equal(res.headers.expires, '0', `${url}: Expires`)
  }
  const refused = await app.inject({ method: 'GET', url: '/auth/user/dashboard', headers: bearer(client.token) })
  t.equal(refused.statusCode, 403)
  t.equal(refused.headers['cache-control'], 'no-store', 'a refusal is an error: no-store')
})

t.test('development-only routes do not exist in production', async t => {
  const app = await buildTestApp(t, { NODE_ENV: 'production', JWT_SECRET: tymon.secret })
  for (const url of ['/auth/token/debug', '/auth/laravel-compatibility']) {
    const res = await app.inject({ method: 'GET', url, headers: bearer(user.token) })
    t.equal(res.statusCode, 404, `${url} is 404 in production`)
    assertErrorBody(t, res.json(), 404, url)
  }
  t.equal((await app.inject({ method: 'GET', url: '/auth/profile', headers: bearer(user.token) })).statusCode, 200)
})

t.test('responses carry only the listed fields', async t => {
  const app = await buildTestApp(t)
  const res = await app.inject({
    method: 'GET',
    url: '/auth/profile',
    headers: bearer(signToken({ ...tymonClaims(), secret: 'x' }))
  })
  t.same(Object.keys(res.json().user).sort(), ['expiresAt', 'id', 'issuedAt', 'type'])
})
