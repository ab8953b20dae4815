import { reusableModule } from '../../plugins/reusable-module.js'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { ensureDomain } from '../../plugins/domain.js'
import { operationRoutes } from '../../plugins/operation-routes.js'
import { authOperations } from '../../operations/auth.js'
import { errorSchemas } from '../../plugins/error-responses.js'
import { documentRoutes } from '../../plugins/openapi.js'
import { formatDuration } from '../../domain/time.js'
import {
  ClientDashboardSchema,
  HealthSchema,
  LaravelCompatibilitySchema,
  ProfileSchema,
  TokenDebugSchema,
  UserDashboardSchema,
  ValidateTokenBodySchema,
  ValidateTokenResponseSchema
} from './schemas.js'

export interface AuthModuleOptions {
  /** Registers `/token/debug` and `/laravel-compatibility` (docs/api.md#development-only-routes). */
  devRoutes: boolean
  /** The upstream backend's base URL, shown in the debug instructions. */
  backendUrl: string
  /** The algorithm the service verifies with, compared in `/laravel-compatibility`. */
  jwtAlgorithm: string
}

const HEALTH_MESSAGE = 'BFF Service está funcionando!' as const

const authModule: FastifyPluginAsyncTypebox<AuthModuleOptions> = async (app, options) => {
  app.addHook('onRoute', documentRoutes('auth', 'bearerAuth'))
  await ensureDomain(app)
  const { principals } = app.domain
  const bearer = [app.verifyJwt]
  const unauthorized = errorSchemas(401)
  const guarded = errorSchemas(401, 403)

  app.get('/health', {
    schema: {
      operationId: 'getHealth',
      summary: 'Liveness of the service',
      description: 'Liveness: 200 while the process runs, whatever its dependencies. Never shed under load (a busy ' +
        'instance is alive); no credential. Its access log line is at debug ' +
        '(docs/deploy.md#behind-the-load-balancer).',
      security: [],
      response: { 200: HealthSchema }
    },
    // Liveness is never shed: an orchestrator would restart an instance that is only busy.
    config: { shed: false, probe: true }
  }, async () => ({ status: 'OK' as const, timestamp: new Date().toISOString(), message: HEALTH_MESSAGE }))

  app.get('/profile', {
    schema: {
      operationId: 'getProfile',
      summary: 'Profile of the calling principal',
      description: 'The principal of the Bearer token: its id, kind (user or client) and the token\'s times. Any ' +
        'valid token, user or client (docs/api.md#credentials).',
      response: { 200: ProfileSchema, ...unauthorized }
    },
    onRequest: bearer
  }, async (request, reply) => {
    reply.preventCache()
    return { message: 'Perfil acessado com sucesso', user: await principals.summary(request.access) }
  })

  operationRoutes(app, authOperations)

  app.get('/user/dashboard', {
    schema: {
      operationId: 'getUserDashboard',
      summary: 'Dashboard of a user (users only)',
      description: 'The dashboard of a user principal with its claims. A client token is 403 FORBIDDEN_PRINCIPAL ' +
        '(docs/api.md#credentials).',
      response: { 200: UserDashboardSchema, ...guarded }
    },
    onRequest: [app.verifyJwt, app.requireUser]
  }, async (request, reply) => {
    const principal = await principals.me(request.access)
    reply.preventCache()
    return {
      message: 'Dashboard do usuário',
      userId: principal.id,
      userType: principal.type,
      payload: principal.payload
    }
  })

  app.get('/client/dashboard', {
    schema: {
      operationId: 'getClientDashboard',
      summary: 'Dashboard of a client (clients only)',
      description: 'The dashboard of a client principal with its claims. A user token is 403 FORBIDDEN_PRINCIPAL ' +
        '(docs/api.md#credentials).',
      response: { 200: ClientDashboardSchema, ...guarded }
    },
    onRequest: [app.verifyJwt, app.requireClient]
  }, async (request, reply) => {
    const principal = await principals.me(request.access)
    reply.preventCache()
    return {
      message: 'Dashboard do client',
      clientId: principal.id,
      userType: principal.type,
      payload: principal.payload
    }
  })

  app.get('/client/test', {
    schema: {
      operationId: 'testClient',
      summary: 'Plain-text probe for clients',
      description: 'Answers the text OK to a client token: a probe for client integrations. A user token is 403 ' +
        'FORBIDDEN_PRINCIPAL.',
      response: {
        200: { description: 'The text OK', content: { 'text/plain': { schema: Type.Literal('OK') } } },
        ...guarded
      }
    },
    onRequest: [app.verifyJwt, app.requireClient]
  }, async (_request, reply) => reply.preventCache().type('text/plain; charset=utf-8').send('OK'))

  app.post('/validate-token', {
    schema: {
      operationId: 'validateToken',
      summary: 'Explains how to send a token (does not verify it)',
      description: 'Does not verify the token it is sent: it answers how to send one (in the Authorization header ' +
        'as a Bearer token), or that none was sent. To ask the backend API whether a token is still ' +
        'valid, use POST /backend-api/validate-token (docs/api.md#tokens).',
      security: [],
      body: Type.Optional(ValidateTokenBodySchema),
      response: { 200: ValidateTokenResponseSchema, ...errorSchemas(400) }
    }
  }, async request => {
    const token = request.body?.token
    if (token === undefined || token === null || token.trim() === '') {
      return { valid: false as const, error: 'Token não fornecido' }
    }
    return {
      message: 'Envie o token no header Authorization como Bearer token',
      example: 'Authorization: Bearer <token>'
    }
  })

  if (!options.devRoutes) return

  app.get('/token/debug', {
    schema: {
      operationId: 'debugToken',
      summary: 'Everything the service reads from the token (development only)',
      description: 'Everything the service reads from the caller\'s token: the raw token, the claims, the ' +
        'principal and a curl command for the Laravel API. Exists only when NODE_ENV is development or ' +
        'test (docs/api.md#development-only-routes).',
      response: { 200: TokenDebugSchema, ...unauthorized }
    },
    onRequest: bearer
  }, async (request, reply) => {
    const principal = await request.access.principal()
    reply.preventCache()
    const token = principal.rawToken ?? ''
    const { uuid, email, name } = principal.tokenData
    return {
      message: 'Debug completo do token JWT',
      authentication: await principals.summary(request.access),
      rawToken: { value: token, length: token.length, parts: token.split('.').length },
      tokenData: principal.tokenData,
      jwtPayload: principal.payload,
      extractedFields: { uuid, email, name },
      // Only tokens this service accepts reach a handler.
      laravelCompatible: true,
      instructions: {
        message: 'Este token pode ser usado diretamente na API Laravel',
        example: `curl -H "Authorization: Bearer ${token}" -H "Accept: application/json" ` +
          new URL('api/me', withSlash(options.backendUrl)).href
      }
    }
  })

  app.get('/laravel-compatibility', {
    schema: {
      operationId: 'getLaravelCompatibility',
      summary: 'How the token maps to the Laravel claims (development only)',
      description: 'How the caller\'s token maps to what the Laravel app (tymon/jwt-auth) wrote in it: the ' +
        'principal, the claims, and whether the algorithm and secret are the backend\'s. Development ' +
        'and test only (docs/api.md#development-only-routes).',
      response: { 200: LaravelCompatibilitySchema, ...unauthorized }
    },
    onRequest: bearer
  }, async (request, reply) => {
    const principal = await request.access.principal()
    reply.preventCache()
    const header = app.jwt.decode<{ header: { alg?: unknown } }>(principal.rawToken ?? '', { complete: true })
    const { payload } = principal
    return {
      message: 'Dados de compatibilidade com Laravel',
      bffData: {
        userId: principal.id,
        userType: principal.type,
        provider: principal.tokenData.provider,
        issuer: principal.tokenData.issuer,
        jwtId: principal.tokenData.jwtId
      },
      laravelFields: { sub: payload.sub, iss: payload.iss, jti: payload.jti, prv: payload.prv ?? null },
      compatibility: {
        // The signature verified with JWT_SECRET, so the secret is the upstream's.
        sameSecret: true,
        sameAlgorithm: header?.header.alg === options.jwtAlgorithm,
        tokenValidity: `válido por ${formatDuration(principal.payload.exp - Date.now() / 1000)}`
      }
    }
  })
}

function withSlash (base: string): string {
  return base.endsWith('/') ? base : `${base}/`
}

/** Auth routes (docs/api.md#credentials), mounted by the host (the app uses `/auth`). */
export default reusableModule(authModule, {
  name: 'bff-auth-module',
  fastify: '5.x',
  // sensible's reply.preventCache: no cache keeps an answer with the principal's claims (docs/api.md#caching).
  dependencies: ['bff-auth', '@fastify/sensible'],
  decorators: { fastify: ['verifyJwt', 'requireUser', 'requireClient'] }
})
