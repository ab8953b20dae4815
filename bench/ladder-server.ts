/**
 * One rung of the cost ladder (`bench/ladder.ts`): a Fastify app with the first LADDER_STEP
 * layers of the production stack, built from the service's own plugins and hooks, serving
 * `GET /portfolios/:id` (API-key rungs) or `GET /auth/profile` (the JWT rung). Prints its port.
 */
import Fastify from 'fastify'
import { openSync } from 'node:fs'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import auth, { requirePrincipal } from '../src/plugins/auth.js'
import store from '../src/plugins/store.js'
import { addCors, addRateLimit, addSecurityHeaders, addShedding } from '../src/plugins/protection.js'
import { echoRequestId, loggingOptions, requestId } from '../src/observability/logging.js'
import { standardOutputLines } from '../src/observability/log-destination.js'
import { providerConfig } from '../src/schemas/tokens.js'
import { IdParamsSchema } from '../src/schemas/common.js'
import { PortfolioDetailSchema } from '../src/schemas/portfolio.js'
import { LADDER, LADDER_API_KEY, LADDER_SECRET, layersOf } from './ladder-steps.js'

const step = Number(process.env.LADDER_STEP ?? 0)
const layers = new Set(layersOf(step))
const has = (layer: string): boolean => layers.has(layer)

// Logs go to a file, as an operator's stdout would; the port goes to stdout.
const logging = has('access log at info')
  ? loggingOptions('info', standardOutputLines(openSync(process.env.LADDER_LOG ?? '/dev/null', 'a')))
  : { logger: false }
const app = Fastify({
  ...logging,
  ...(has('request id') ? { genReqId: requestId, requestIdHeader: false } : {})
}).withTypeProvider<TypeBoxTypeProvider>()

await app.register(store, { url: process.env.DATABASE_URL ?? 'sqlite::memory:' })
await app.register(auth, {
  jwtSecret: LADDER_SECRET,
  jwtAlgorithm: 'HS256',
  leewaySeconds: 0,
  providers: providerConfig({ user: 'App\\Models\\User', client: 'App\\Models\\User\\Client' }),
  apiKeys: [LADDER_API_KEY]
})
if (has('security headers')) addSecurityHeaders(app)
if (has('CORS')) await addCors(app, ['https://app.example'])
if (has('rate limit')) await addRateLimit(app, { rateLimitMax: 1_000_000_000, rateLimitWindowMs: 60_000 })
if (has('load shedding')) await addShedding(app, 1000)
if (has('request id')) app.addHook('onRequest', echoRequestId)

const id = process.env.PORTFOLIO_ID ?? ''
const constant = { id, name: 'Bench portfolio', description: null, userId: '1', totalValue: 0, assets: [] }

if (LADDER[step]?.branch === 'jwt') {
  app.get('/auth/profile', {
    onRequest: [app.verifyJwt],
    schema: {
      response: {
        200: Type.Object({
          message: Type.String(),
          user: Type.Object({
            id: Type.String(),
            type: Type.String(),
            expiresAt: Type.String(),
            issuedAt: Type.String()
          })
        })
      }
    }
  }, async request => {
    const { id, type, expiresAt, issuedAt } = requirePrincipal(request)
    return { message: 'Perfil acessado com sucesso', user: { id, type, expiresAt, issuedAt } }
  })
} else {
  const serialised = has('response schema')
  app.get('/portfolios/:id', {
    ...(has('API-key guard') ? { onRequest: [app.verifyApiKey] } : {}),
    ...(serialised ? { schema: { params: IdParamsSchema, response: { 200: PortfolioDetailSchema } } } : {})
  }, async request => {
    const { id } = request.params as { id: string }
    if (!has('store read')) return constant
    // The detail as the service makes it of its one read (PortfolioService.taggedDetail). Without a response schema
    // Fastify serialises with JSON.stringify: the rungs before the schema measure that.
    const read = await app.store.portfolios.portfolioAndAssets(id)
    return read === undefined ? undefined : { ...read.portfolio, assets: read.assets }
  })
}

const address = await app.listen({ port: 0, host: '127.0.0.1' })
process.stdout.write(`${new URL(address).port}\n`)
process.on('SIGTERM', () => { app.close().then(() => process.exit(0)) })
