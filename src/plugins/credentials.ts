import { hash } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ForbiddenPrincipalError, TokenInvalidError } from '../errors.js'
import type { PortfolioAccess } from '../schemas/auth.js'
import { EVERY_PORTFOLIO, principalKey, type Access, type PortfolioScope, type Principal } from '../domain/access.js'

/** Handlers on guarded routes read the principal through this, so `null` is handled once. */
export function requirePrincipal (request: FastifyRequest): Principal {
  if (request.principal === null) throw new TokenInvalidError()
  return request.principal
}

/**
 * A SHA-256 digest: API keys are compared as digests in constant time; the configured keys are kept
 * as digests, and a presented key only once it matched one (auth.ts's accepted keys).
 */
export function sha256 (text: string): Buffer {
  return hash('sha256', text, 'buffer')
}

/** The guards read the request only; a subscription's WebSocket has no reply to give them. */
const GUARDS_NEED_NO_REPLY = undefined as unknown as FastifyReply

/** Where the app keeps JWT_LEEWAY for its Credentials, in milliseconds: when a user's scope ends. */
export const LEEWAY_MS = Symbol('bff token leeway')
type WithLeeway = FastifyInstance & { [LEEWAY_MS]: number }

/**
 * The domain's Access for one request, checked by the auth plugin's guards themselves (its
 * decorators, declared in auth.ts) — so the same codes, the same failed-authentication budget —
 * and each at most once. On REST the route's
 * onRequest guard has already run and marked the request (`apiKeyVerified`, `principal`): the
 * checks then resolve at once. On GraphQL nothing runs before a field asks (per field:
 * docs/api.md#graphql), so a field that needs no credential costs none, and one failure is
 * counted once however many fields ask.
 */
export class Credentials implements Access {
  private apiKeyCheck: Promise<void> | undefined
  private principalCheck: Promise<Principal> | undefined
  private scopeCheck: Promise<PortfolioScope> | undefined

  constructor (private readonly app: FastifyInstance, private readonly request: FastifyRequest) {}

  async apiKey (): Promise<void> {
    if (this.request.apiKeyVerified) return
    this.apiKeyCheck ??= this.app.verifyApiKey(this.request, GUARDS_NEED_NO_REPLY).then(() => {})
    await this.apiKeyCheck
  }

  async principal (): Promise<Principal> {
    if (this.request.principal !== null) return this.request.principal
    this.principalCheck ??= this.app.verifyJwt(this.request, GUARDS_NEED_NO_REPLY)
      .then(() => requirePrincipal(this.request))
    return await this.principalCheck
  }

  async portfolioScope (): Promise<PortfolioScope> {
    this.scopeCheck ??= this.scopeOf(this.app.portfolioAccess)
    return await this.scopeCheck
  }

  /** A key that was verified, else the principal (a key a `user`-only service never checks counts for nothing). */
  caller (): string {
    const key = this.request.headers['x-api-key']
    if (this.request.apiKeyVerified && typeof key === 'string') return `apikey:${sha256(key).toString('base64url')}`
    const principal = this.request.principal
    return principal === null ? `ip:${this.request.ip}` : principalKey(principal)
  }

  private async scopeOf (mode: PortfolioAccess): Promise<PortfolioScope> {
    if (mode === 'api-key' || (mode === 'both' && this.request.headers['x-api-key'] !== undefined)) {
      await this.apiKey()
      return EVERY_PORTFOLIO
    }
    const principal = await this.principal()
    if (principal.type !== 'user') throw new ForbiddenPrincipalError()
    const endsAt = Date.parse(principal.expiresAt) + (this.app as WithLeeway)[LEEWAY_MS]
    return { kind: 'owner', userId: principal.id, endsAt }
  }

  /**
   * Verifies a Bearer token the request carries before the rate limit counts it, so that the
   * limit is per principal as on REST; a bad token is left for the field that needs it to report.
   */
  async identifyEarly (): Promise<void> {
    if (this.request.headers.authorization !== undefined) await this.principal().catch(() => {})
  }
}

/** Where a request keeps its Credentials once made (declared with the request's other decorators). */
export const CREDENTIALS = Symbol('bff credentials')

/** The Access of a request (REST, GraphQL, or the WebSocket upgrade of a subscription), made once. */
export function requestAccess (app: FastifyInstance, request: FastifyRequest): Credentials {
  const held = request as FastifyRequest & { [CREDENTIALS]: Credentials | null }
  held[CREDENTIALS] ??= new Credentials(app, request)
  return held[CREDENTIALS]
}
