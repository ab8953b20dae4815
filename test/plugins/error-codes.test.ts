import t from 'tap'
import type { InjectOptions } from 'fastify'
import { apiKey, bearer, buildTestApp, signToken, tymonClaims, userToken, clientToken } from '../helper.js'

t.test('every error body carries its documented code; the texts stay as they are', async t => {
  const app = await buildTestApp(t, { RATE_LIMIT_MAX: '1000' })
  const cases: Array<{ name: string, request: InjectOptions, status: number, code: string, message?: string }> = [
    {
      name: 'validation',
      request: { method: 'POST', url: '/portfolios', headers: apiKey(), payload: {} },
      status: 400,
      code: 'VALIDATION_FAILED'
    },
    {
      name: 'malformed JSON',
      request: {
        method: 'POST',
        url: '/portfolios',
        headers: { ...apiKey(), 'content-type': 'application/json' },
        payload: '{"name":'
      },
      status: 400,
      code: 'BAD_REQUEST'
    },
    {
      name: 'no token',
      request: { method: 'GET', url: '/auth/profile' },
      status: 401,
      code: 'TOKEN_INVALID',
      message: 'Token não fornecido ou inválido'
    },
    {
      name: 'expired token',
      request: {
        method: 'GET',
        url: '/auth/profile',
        headers: bearer(userToken({ iatOffset: -7200, nbfOffset: -7200, expOffset: -3600 }))
      },
      status: 401,
      code: 'TOKEN_EXPIRED',
      message: 'Token expirado'
    },
    {
      name: 'no subject',
      request: {
        method: 'GET',
        url: '/auth/profile',
        headers: bearer(signToken({ ...tymonClaims(), sub: undefined }))
      },
      status: 401,
      code: 'SUBJECT_MISSING',
      message: 'Subject não encontrado no token'
    },
    {
      name: 'wrong API key',
      request: { method: 'GET', url: '/portfolios', headers: apiKey('nope') },
      status: 401,
      code: 'API_KEY_INVALID',
      message: 'API key inválida ou ausente'
    },
    {
      name: 'wrong principal kind',
      request: { method: 'GET', url: '/auth/user/dashboard', headers: bearer(clientToken()) },
      status: 403,
      code: 'FORBIDDEN_PRINCIPAL',
      message: 'Acesso negado para este tipo de usuário'
    },
    {
      name: 'another client\'s records',
      request: {
        method: 'GET',
        url: '/openfinance-excluded-transactions?client_id=someone-else',
        headers: bearer(clientToken({ sub: 'me' }))
      },
      status: 403,
      code: 'FORBIDDEN'
    },
    {
      name: 'unknown id',
      request: { method: 'GET', url: '/portfolios/nope', headers: apiKey() },
      status: 404,
      code: 'NOT_FOUND'
    },
    { name: 'unknown route', request: { method: 'GET', url: '/nowhere' }, status: 404, code: 'NOT_FOUND' },
    {
      name: 'too large',
      request: {
        method: 'POST',
        url: '/portfolios',
        headers: { ...apiKey(), 'content-type': 'application/json' },
        payload: `{"name":"${'x'.repeat(1024 * 1024)}"}`
      },
      status: 413,
      code: 'PAYLOAD_TOO_LARGE'
    },
    {
      name: 'not JSON',
      request: {
        method: 'POST',
        url: '/portfolios',
        headers: { ...apiKey(), 'content-type': 'text/plain' },
        payload: 'hello'
      },
      status: 415,
      code: 'UNSUPPORTED_MEDIA_TYPE'
    },
    {
      name: 'aggregator without credentials',
      request: {
        method: 'POST',
        url: '/aggregator',
        headers: bearer(userToken()),
        payload: { endpoint: '/connectors', method: 'GET' }
      },
      status: 503,
      code: 'NOT_CONFIGURED'
    }
  ]
  for (const { name, request, status, code, message } of cases) {
    const res = await app.inject(request)
    t.equal(res.statusCode, status, name)
    t.equal(res.json().code, code, name)
    if (message !== undefined) t.equal(res.json().message, message, name)
  }
})

t.test('429 is RATE_LIMITED', async t => {
  const app = await buildTestApp(t, { RATE_LIMIT_MAX: '1' })
  await app.inject({ method: 'GET', url: '/auth/health' })
  const res = await app.inject({ method: 'GET', url: '/auth/health' })
  t.equal(res.statusCode, 429)
  t.equal(res.json().code, 'RATE_LIMITED')
})

t.test('the OpenAPI document lists the codes as an enum of the error body', async t => {
  const app = await buildTestApp(t)
  const doc = (await app.inject({ method: 'GET', url: '/docs/json' })).json()
  const text = JSON.stringify(doc)
  t.match(text, /"enum":\["VALIDATION_FAILED","BAD_REQUEST","TOKEN_INVALID","TOKEN_EXPIRED","SUBJECT_MISSING"/)
})

t.test('a body over the limit is a 413 the client can read, over real HTTP with fetch (sized and chunked)', async t => {
  const app = await buildTestApp(t)
  const url = await app.listen({ port: 0, host: '127.0.0.1' })
  const headers = { ...apiKey(), 'content-type': 'application/json' }
  const body = JSON.stringify({ name: 'x'.repeat(8 * 1024 * 1024), userId: 'u' })
  const sized = await fetch(`${url}/portfolios`, { method: 'POST', headers, body })
  t.equal(sized.status, 413)
  t.match(await sized.json(), { code: 'PAYLOAD_TOO_LARGE' })
  const chunks = new ReadableStream({
    start (controller) {
      controller.enqueue(new TextEncoder().encode(body))
      controller.close()
    }
  })
  const chunked = await fetch(`${url}/portfolios`, {
    method: 'POST',
    headers,
    body: chunks,
    duplex: 'half'
  } as RequestInit)
  t.equal(chunked.status, 413)
  t.match(await chunked.json(), { code: 'PAYLOAD_TOO_LARGE' })
})
