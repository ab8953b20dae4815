import t from 'tap'
import { Validator } from '@seriousme/openapi-schema-validator'
import { registeredRoutes } from '../../src/plugins/openapi.js'
import { buildTestApp } from '../helper.js'

interface Operation { summary?: string, tags?: string[], security?: unknown[], responses?: Record<string, unknown> }

t.test('GET /docs/json is a valid OpenAPI 3 document that lists every route', async t => {
  const app = await buildTestApp(t)
  const res = await app.inject({ method: 'GET', url: '/docs/json' })
  t.equal(res.statusCode, 200)
  const doc = res.json() as {
    openapi: string
    paths: Record<string,
    Record<string,
    Operation>>
    components: { securitySchemes: Record<string, unknown> }
  }
  t.match(doc.openapi, /^3\./)
  const validation = await new Validator().validate(res.json() as Record<string, unknown>)
  t.ok(validation.valid, `valid OpenAPI 3: ${JSON.stringify(validation.errors ?? []).slice(0, 500)}`)
  t.same(Object.keys(doc.components.securitySchemes).sort(), ['apiKey', 'bearerAuth', 'webhookSecret'])
  // @fastify/sensible is registered without its shared schema: errors are documented as ErrorBody alone.
  t.notMatch(res.body, /HttpError/, 'no second error schema for generated clients')

  // GraphQL is described by schema.graphql, not by OpenAPI; GraphiQL and the demo page are pages, not the API.
  const routes = registeredRoutes(app).filter(
    route =>
      route.method !== 'HEAD' &&
      route.method !== 'OPTIONS' &&
      !route.url.startsWith('/docs') &&
      !/^\/(graph(ql|iql)|demo)/.test(route.url)
  )
  t.ok(routes.length >= 30, `${routes.length} routes`)
  for (const route of routes) {
    const path = route.url.replace(/:(\w+)/g, '{$1}').replace(/\*$/, '{path}').replace(/(.)\/$/, '$1')
    const operation = doc.paths[path]?.[route.method.toLowerCase()]
    t.ok(operation, `${route.method} ${route.url} is documented as ${path}`)
    if (operation === undefined) continue
    t.ok((operation.summary ?? '').length > 0, `${route.method} ${path} has a summary`)
    t.equal(operation.tags?.length, 1, `${route.method} ${path} has its module's tag`)
    t.ok(Array.isArray(operation.security), `${route.method} ${path} states its security`)
    const codes = Object.keys(operation.responses ?? {})
    t.ok(codes.some(code => /^2/.test(code)), `${route.method} ${path} documents its success`)
    if (operation.security?.length !== 0) {
      t.ok(codes.some(code => /^[45]/.test(code)), `${route.method} ${path} documents its errors`)
    }
  }
  t.same(doc.paths['/portfolios']?.get?.security, [{ apiKey: [] }])
  t.same(doc.paths['/auth/profile']?.get?.security, [{ bearerAuth: [] }])
  t.same(doc.paths['/auth/health']?.get?.security, [{}], 'open: one empty requirement')
  t.same(doc.paths['/aggregator/webhook']?.post?.security, [{ webhookSecret: [] }])
  t.same(doc.paths['/auth/profile']?.get?.tags, ['auth'])

  const ui = await app.inject({ method: 'GET', url: '/docs/' })
  t.equal(ui.statusCode, 200)
  t.match(ui.body, /swagger-ui/i)
})

t.test('production documents no development-only route', async t => {
  const app = await buildTestApp(t, { NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(40) })
  const doc = (await app.inject({ method: 'GET', url: '/docs/json' })).json() as { paths: Record<string, unknown> }
  t.notOk('/reset' in doc.paths)
  t.notOk('/auth/token/debug' in doc.paths)
  t.ok('/auth/profile' in doc.paths)
})

t.test('/docs carries a strict CSP that still works over plain HTTP', async t => {
  const app = await buildTestApp(t)
  const res = await app.inject({ method: 'GET', url: '/docs' })
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-security-policy'], /default-src 'self'/)
  t.notMatch(
    res.headers['content-security-policy'],
    /upgrade-insecure-requests/,
    'no upgrade to HTTPS the server may not have'
  )
})
