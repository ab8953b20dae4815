import t from 'tap'
import Fastify from 'fastify'
import schemaCompilers, { compileEverySchema } from '../../src/plugins/schema-compilers.js'
import { buildTestApp } from '../helper.js'

t.test('every schema of the service compiles (they are compiled on first use, not at start)', async t => {
  const app = await buildTestApp(t)
  const count = compileEverySchema(app)
  t.ok(count > 100, `${count} validators and serializers compiled`)
  t.equal(compileEverySchema(app), count, 'compiling again finds the same, already compiled')
  t.equal(compileEverySchema(Fastify()), 0, 'an app without the compilers has none of them')
})

t.test('a route\'s validator and serializer compile on its first request, and validate as before', async t => {
  const app = Fastify()
  await app.register(schemaCompilers)
  app.post('/echo', {
    schema: {
      body: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'], additionalProperties: false },
      querystring: { type: 'object', properties: { times: { type: 'integer' } } },
      response: { 200: { type: 'object', properties: { n: { type: 'integer' }, times: { type: 'integer' } } } }
    }
  }, async request => ({ ...(request.body as object), times: (request.query as { times?: number }).times, secret: 1 }))
  await app.ready()
  t.teardown(() => app.close())

  const bad = await app.inject({ method: 'POST', url: '/echo', payload: { n: 'one' } })
  t.equal(bad.statusCode, 400, 'the first request compiles the body validator and fails it')
  t.match(bad.json().message, /must be integer/, 'with Ajv\'s errors')
  const missing = await app.inject({ method: 'POST', url: '/echo', payload: {} })
  t.match(missing.json().message, /must have required property 'n'/, 'each failure reports its own errors')
  const good = await app.inject({ method: 'POST', url: '/echo?times=3', payload: { n: 2 } })
  t.same(good.json(), { n: 2, times: 3 }, 'query coerced; the serializer leaves out what its schema does not name')
})

t.test('a schema that cannot compile fails its first request, and compileEverySchema names it', async t => {
  const app = Fastify({ logger: false })
  await app.register(schemaCompilers)
  const body = { type: 'object', properties: { n: { type: 'nonsense' } } }
  app.post('/broken', { schema: { body } }, async () => ({}))
  await app.ready()
  t.teardown(() => app.close())
  const res = await app.inject({ method: 'POST', url: '/broken', payload: { n: 1 } })
  t.equal(res.statusCode, 500)
  t.throws(() => compileEverySchema(app), /nonsense|type/)
})
