import { timingSafeEqual } from 'node:crypto'
import fp from 'fastify-plugin'
import fastifyJwt from '@fastify/jwt'
import { TokenError } from 'fast-jwt'
import type { FastifyInstance, FastifyRequest, onRequestAsyncHookHandler } from 'fastify'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import {
  ApiKeyInvalidError,
  ForbiddenPrincipalError,
  SubjectMissingError,
  TokenExpiredError,
  TokenInvalidError,
  errorCodeOf,
  rateLimitedFor
} from '../errors.js'
import { telemetryOf } from './metrics.js'
import {
  JwtPayloadSchema,
  type JwtAlgorithm,
  type PortfolioAccess,
  type PrincipalType,
  type ProviderConfig
} from '../schemas/auth.js'
import { WindowCounter } from '../upstream/budget.js'
import type { Principal } from '../domain/access.js'
import { CREDENTIALS, Credentials, LEEWAY_MS, requestAccess, requirePrincipal, sha256 } from './credentials.js'
import { VerifiedTokens, wellFormed } from './verified-tokens.js'

export type { Principal } from '../domain/access.js'
export { requirePrincipal } from './credentials.js'

export interface AuthPluginOptions {
  /** The HMAC secret shared with the upstream backend (tymon's `JWT_SECRET`, used as plain bytes). */
  jwtSecret: string
  /** The only algorithm accepted in a token's header (RFC 8725 §3.1). */
  jwtAlgorithm: JwtAlgorithm
  /** Clock skew in seconds allowed on `exp`, `nbf` and `iat`. */
  leewaySeconds: number
  /** Kind given to tokens without `prv`; by default they are rejected (docs/api.md#tokens). */
  defaultType?: PrincipalType
  providers: ProviderConfig
  /** Accepted `x-api-key` values; several at once allow rotation. */
  apiKeys: readonly string[]
  /** Failed authentications per client IP per minute before further ones are 429 (default 60; docs/api.md#limits). */
  authFailuresPerMinute?: number
  /**
   * Which credential opens the portfolio routes and fields (`PORTFOLIO_ACCESS`; docs/api.md#whose-portfolios):
   * `api-key` (the default: a trusted server's key, every user's portfolios), `user` (a user's token, its
   * own portfolios only) or `both` (the key when the request carries one, else the token).
   */
  portfolioAccess?: PortfolioAccess
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by `verifyJwt`; `null` on routes without a Bearer guard. */
    principal: Principal | null
    /** Set by `verifyApiKey` once the request's `x-api-key` is valid, so nothing checks it again. */
    apiKeyVerified: boolean
    /** What the caller has proved, for the domain's services: {@link requestAccess}. */
    readonly access: Credentials
  }
  interface FastifyInstance {
    /** onRequest guard: a valid Bearer token of either kind. */
    verifyJwt: onRequestAsyncHookHandler
    /** onRequest guard after `verifyJwt`: users only (403 for clients). */
    requireUser: onRequestAsyncHookHandler
    /** onRequest guard after `verifyJwt`: clients only (403 for users). */
    requireClient: onRequestAsyncHookHandler
    /** onRequest guard: `x-api-key` is one of the configured keys. */
    verifyApiKey: onRequestAsyncHookHandler
    /**
     * onRequest guard of the portfolio routes: the credential `portfolioAccess` asks for
     * (`verifyApiKey` itself under `api-key`; a user token under `user`; either under `both`).
     */
    verifyPortfolioAccess: onRequestAsyncHookHandler
    /** PORTFOLIO_ACCESS, as the auth plugin was given it: the portfolio modules document their credential by it. */
    portfolioAccess: PortfolioAccess
    providerConfig: ProviderConfig
    /**
     * What a guard throws when a credential is refused: `error` (a 401), or a 429 once the
     * client's IP has failed more than `AUTH_FAILURES_PER_MINUTE` times this minute.
     */
    refuseCredential: (request: FastifyRequest, error: Error) => Error
  }
}

/** The token of `Authorization: Bearer <token>`: scheme in any case, one space, nothing else (docs/api.md#tokens). */
const BEARER = /^bearer ([A-Za-z0-9_\-.=]+)$/i

/** @internal Test seam: every malformed header is tested directly, without an app. */
export function bearerToken (header: string | undefined): string | null {
  if (header === undefined) return null
  return BEARER.exec(header)?.[1] ?? null
}

const checkPayload = TypeCompiler.Compile(JwtPayloadSchema)

const REQUIRED_BY_VERIFIER = ['iss', 'iat', 'exp', 'nbf', 'jti']
const VERIFIED_TOKEN_CACHE_SIZE = 10_000

function optionalString (value: unknown): string | null {
  return typeof value === 'string' ? value : null
}

async function auth (app: FastifyInstance, options: AuthPluginOptions): Promise<void> {
  const leewayMs = options.leewaySeconds * 1000
  const { userProviderHash, clientProviderHash } = options.providers

  await app.register(fastifyJwt, {
    secret: options.jwtSecret,
    verify: {
      algorithms: [options.jwtAlgorithm],
      clockTolerance: leewayMs,
      // `sub` is checked below, so that its absence gets its own message (`Subject não encontrado no token`).
      requiredClaims: REQUIRED_BY_VERIFIER
    }
  })

  function principalType (prv: string | undefined): PrincipalType | null {
    if (prv === undefined) return options.defaultType ?? null
    if (prv === userProviderHash) return 'user'
    if (prv === clientProviderHash) return 'client'
    return null
  }

  function principalFrom (claims: Record<string, unknown>, rawToken: string): Principal {
    const custom = claims
    if (
      claims.sub === undefined ||
      claims.sub === null ||
      (typeof claims.sub === 'string' && claims.sub.trim() === '')
    ) {
      throw new SubjectMissingError()
    }
    if (!checkPayload.Check(claims)) throw new TokenInvalidError()
    // tymon rejects a token issued in the future; fast-jwt only checks `iat` for maxAge.
    if (claims.iat * 1000 > Date.now() + leewayMs) throw new TokenInvalidError()
    const type = principalType(claims.prv)
    if (type === null) throw new TokenInvalidError()
    return {
      id: String(claims.sub),
      type,
      payload: claims,
      expiresAt: new Date(claims.exp * 1000).toISOString(),
      issuedAt: new Date(claims.iat * 1000).toISOString(),
      tokenData: {
        issuer: claims.iss,
        jwtId: claims.jti,
        provider: claims.prv ?? null,
        uuid: optionalString(custom.uuid),
        email: optionalString(custom.email),
        name: optionalString(custom.name)
      },
      rawToken
    }
  }

  const apiKeyDigests = options.apiKeys.map(sha256)
  // Failures only: a valid credential from a throttled IP keeps working (OWASP API4).
  const failures = new WindowCounter(options.authFailuresPerMinute ?? 60)
  const telemetry = telemetryOf(app)
  const verified = new VerifiedTokens(VERIFIED_TOKEN_CACHE_SIZE, leewayMs, telemetry)
  function refuseCredential (request: FastifyRequest, error: Error): Error {
    telemetry.authFailure(errorCodeOf(error as { code?: unknown }, 401).toLowerCase())
    const wait = failures.hit(request.ip)
    if (wait === undefined) return error
    telemetry.rateLimited('auth_failures')
    return rateLimitedFor(wait)
  }
  app.decorate('refuseCredential', refuseCredential)

  app.decorateRequest('principal', null)
  app.decorateRequest('apiKeyVerified', false)
  // A field of every request rather than a WeakMap: an entry per request in a WeakMap cost
  // /auth/profile 13 µs of CPU a request (38 → 51 µs, the built service, interleaved A/B).
  app.decorateRequest(CREDENTIALS, null)
  app.decorateRequest('access', {
    getter (this: FastifyRequest) { return requestAccess(app, this) }
  })
  app.decorate('providerConfig', options.providers)
  app.decorate('portfolioAccess', options.portfolioAccess ?? 'api-key')
  app.decorate(LEEWAY_MS, leewayMs)

  app.decorate('verifyJwt', async function verifyJwt (request: FastifyRequest) {
    try {
      request.principal = principalOf(bearerToken(request.headers.authorization))
    } catch (error) {
      throw refuseCredential(request, error as Error)
    }
  })

  /** The principal of a Bearer token, from the cache or verified; throws the 401 to answer. */
  function principalOf (token: string | null): Principal {
    if (token === null) throw new TokenInvalidError()
    const known = verified.get(token)
    if (known !== undefined) return known
    if (!wellFormed(token)) throw new TokenInvalidError()
    let claims: Record<string, unknown>
    try {
      claims = app.jwt.verify<Record<string, unknown>>(token)
    } catch (error) {
      if (error instanceof TokenError && error.code === TokenError.codes.expired) throw new TokenExpiredError()
      throw new TokenInvalidError()
    }
    // A signed array or scalar payload is not a claims set (RFC 7519 §7.2).
    if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) throw new TokenInvalidError()
    const principal = principalFrom(claims, token)
    verified.set(token, principal)
    return principal
  }

  app.decorate('requireUser', async function requireUser (request: FastifyRequest) {
    if (requirePrincipal(request).type !== 'user') throw new ForbiddenPrincipalError()
  })

  app.decorate('requireClient', async function requireClient (request: FastifyRequest) {
    if (requirePrincipal(request).type !== 'client') throw new ForbiddenPrincipalError()
  })

  /**
   * Keys that passed the constant-time check, so that a valid key is hashed once per process, not
   * on every request (its SHA-256 was about 1 µs of a portfolio read: BENCHMARKS.md). Only
   * a configured key passes, so it never holds more entries than API_KEYS names: keys a client
   * makes up are never kept. A key not found here is checked in constant time as before; the
   * lookup compares a presented key's characters with a kept one only when their hashes are equal,
   * which a client cannot aim at without knowing the key.
   */
  const acceptedKeys = new Set<string>()
  app.decorate('verifyApiKey', async function verifyApiKey (request: FastifyRequest) {
    const presented = request.headers['x-api-key']
    if (typeof presented !== 'string' || presented.length === 0) {
      throw refuseCredential(request, new ApiKeyInvalidError())
    }
    if (!acceptedKeys.has(presented)) {
      // Digests have one length, so timingSafeEqual never throws; every key is compared, no early exit.
      const digest = sha256(presented)
      let valid = false
      for (const key of apiKeyDigests) valid = timingSafeEqual(digest, key) || valid
      if (!valid) throw refuseCredential(request, new ApiKeyInvalidError())
      acceptedKeys.add(presented)
    }
    request.apiKeyVerified = true
  })

  app.decorate('verifyPortfolioAccess', app.portfolioAccess === 'api-key'
    ? app.verifyApiKey
    : async function verifyPortfolioAccess (request: FastifyRequest) {
      await requestAccess(app, request).portfolioScope()
    })
}

/** JWT (tymon/jwt-auth HS*) and API-key guards, and `request.principal` (docs/api.md#credentials, #tokens). */
export default fp(auth, { name: 'bff-auth', fastify: '5.x' })
