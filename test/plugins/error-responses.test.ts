import t, { type Test } from 'tap'
import Fastify from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import errorResponses, { frameworkErrors, validationMessages } from '../../src/plugins/error-responses.js'
import { UpstreamTimeoutError } from '../../src/errors.js'
import { assertErrorBody } from '../helper.js'

async function appWithRoutes (t: Test) {
  const app = Fastify({ ajv: { customOptions: { allErrors: true, verbose: true, coerceTypes: false } } })
    .withTypeProvider<TypeBoxTypeProvider>()
  await app.register(errorResponses)
  app.post('/things', {
    schema: {
      body: Type.Object({
        name: Type.String({ minLength: 1, maxLength: 5 }),
        userId: Type.String(),
        quantity: Type.Number({ exclusiveMinimum: 0 }),
        price: Type.Number({ minimum: 0 }),
        type: Type.Union([Type.Literal('STOCK'), Type.Literal('BOND')]),
        kind: Type.Optional(Type.Unsafe<string>({ type: 'string', enum: ['A', 'B'] })),
        nested: Type.Optional(Type.Object({ id: Type.String({ format: 'uuid' }) }))
      })
    }
  }, async request => request.body)
  app.get('/things/:id', { schema: { params: Type.Object({ id: Type.String({ maxLength: 4 }) }) } }, async () => ({}))
  app.get('/boom', async () => { throw new Error('secret internals at /srv/app.js:12') })
  app.get('/timeout', async () => { throw new UpstreamTimeoutError() })
  app.get('/teapot', async () => { throw Object.assign(new Error('short and stout'), { statusCode: 418 }) })
  app.get('/kept-then-failed', async (_request, reply) => {
    reply.header('cache-control', 'private, no-cache')
    throw new UpstreamTimeoutError()
  })
  t.teardown(() => app.close())
  return app
}

t.test('validation failures become 400 with one class-validator phrase per failed rule', async t => {
  const app = await appWithRoutes(t)
  const res = await app.inject({
    method: 'POST',
    url: '/things',
    payload: { name: '', quantity: 0, price: -1, type: 'GOLD', kind: 'C', nested: { id: 'x' } }
  })
  t.equal(res.statusCode, 400)
  assertErrorBody(t, res.json(), 400, '/things')
  t.equal(res.json().error, 'Bad Request')
  t.same(res.json().message.sort(), [
    'kind must be one of the following values: A, B',
    'name should not be empty',
    'nested.id must be a UUID',
    'price must not be less than 0',
    'quantity must be greater than 0',
    'type must be one of the following values: STOCK, BOND',
    'userId must be a string',
    'userId should not be empty'
  ])
})

t.test('wrong types are reported, not coerced', async t => {
  const app = await appWithRoutes(t)
  const res = await app.inject({
    method: 'POST',
    url: '/things',
    payload: { name: 'abcdefg', userId: 12, quantity: '3', price: true, type: 'STOCK' }
  })
  t.equal(res.statusCode, 400)
  t.same(res.json().message.sort(), [
    'name must be shorter than or equal to 5 characters',
    'price must be a number conforming to the specified constraints',
    'quantity must be a number conforming to the specified constraints',
    'userId must be a string'
  ])
})

t.test('a body that is not an object, malformed JSON, other content types, oversize', async t => {
  const app = await appWithRoutes(t)
  const array = await app.inject({
    method: 'POST',
    url: '/things',
    payload: '[1,2]',
    headers: { 'content-type': 'application/json' }
  })
  t.equal(array.statusCode, 400)
  t.same(array.json().message, ['body must be an object'])

  const malformed = await app.inject({
    method: 'POST',
    url: '/things',
    payload: '{"name":',
    headers: { 'content-type': 'application/json' }
  })
  t.equal(malformed.statusCode, 400)
  assertErrorBody(t, malformed.json(), 400, '/things')

  const text = await app.inject({
    method: 'POST',
    url: '/things',
    payload: 'name=x',
    headers: { 'content-type': 'application/x-www-form-urlencoded' }
  })
  t.equal(text.statusCode, 415)
  assertErrorBody(t, text.json(), 415, '/things')

  const huge = await app.inject({
    method: 'POST',
    url: '/things',
    payload: JSON.stringify({ name: 'x'.repeat(1_100_000) }),
    headers: { 'content-type': 'application/json' }
  })
  t.equal(huge.statusCode, 413)
  assertErrorBody(t, huge.json(), 413, '/things')

  const poisoned = await app.inject({
    method: 'POST',
    url: '/things',
    payload: '{"__proto__":{"admin":true}}',
    headers: { 'content-type': 'application/json' }
  })
  t.equal(poisoned.statusCode, 400)
})

t.test('a path id longer than its schema allows names nothing: 404, the id not echoed', async t => {
  const app = await appWithRoutes(t)
  const res = await app.inject({ method: 'GET', url: '/things/toolong?x=1' })
  t.equal(res.statusCode, 404)
  t.match(res.json(), { code: 'NOT_FOUND', path: '/things/:id' })
  t.notMatch(res.body, 'toolong')
})

t.test('500s leak nothing; coded 5xx keep their fixed message; 4xx keep theirs', async t => {
  const app = await appWithRoutes(t)
  const boom = await app.inject({ method: 'GET', url: '/boom' })
  t.equal(boom.statusCode, 500)
  t.same(boom.json().message, 'Erro interno do servidor')
  t.equal(boom.json().error, 'Internal Server Error')
  t.notMatch(boom.body, /secret|srv|stack/)

  const timeout = await app.inject({ method: 'GET', url: '/timeout' })
  t.equal(timeout.statusCode, 504)
  t.equal(timeout.json().message, 'Tempo limite do serviço externo excedido')
  t.equal(timeout.json().error, 'Gateway Timeout')

  const teapot = await app.inject({ method: 'GET', url: '/teapot' })
  t.equal(teapot.statusCode, 418)
  t.equal(teapot.json().message, 'short and stout')
})

t.test('unknown routes get the standard body', async t => {
  const app = await appWithRoutes(t)
  const missing = await app.inject({ method: 'DELETE', url: '/nowhere?a=b' })
  t.equal(missing.statusCode, 404)
  t.same(missing.json().message, 'Cannot DELETE /nowhere')
  assertErrorBody(t, missing.json(), 404, '/nowhere')
})

t.test('no cache keeps an error: Cache-Control no-store from the error handlers themselves', async t => {
  // The plugin alone: no other plugin sets a default, as in a host app.
  const app = await appWithRoutes(t)
  for (const [method, url] of [
    ['POST', '/things'],
    ['GET', '/things/toolong'],
    ['GET', '/boom'],
    ['GET', '/teapot'],
    ['DELETE', '/nowhere'],
    ['GET', '/kept-then-failed']
  ] as const) {
    const res = await app.inject({ method, url })
    t.ok(res.statusCode >= 400, `${method} ${url}: ${res.statusCode}`)
    t.equal(res.headers['cache-control'], 'no-store', `${method} ${url}`)
  }
  // Errors Fastify answers before any route or hook runs (a bad escape in the URL).
  const framework = Fastify({ frameworkErrors })
  t.teardown(() => framework.close())
  await framework.register(errorResponses)
  framework.get('/things/:id', async () => ({}))
  const badUrl = await framework.inject({ method: 'GET', url: '/things/%zz' })
  t.equal(badUrl.statusCode, 400)
  t.equal(badUrl.headers['cache-control'], 'no-store', 'a framework error')
})

t.test('validationMessages falls back to a phrase for unknown keywords and empty lists', async t => {
  t.same(validationMessages([], 'body'), ['body is invalid'])
  t.same(
    validationMessages(
      [{ keyword: 'multipleOf', instancePath: '/n', schemaPath: '#/multipleOf', params: {}, message: '' }],
      'body'
    ),
    ['n is invalid']
  )
  t.same(
    validationMessages(
      [{ keyword: 'type', instancePath: '/n', schemaPath: '#/type', params: { type: 'string,null' }, message: '' }],
      'body'
    ),
    ['n must be a string']
  )
})
