import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { requirePrincipal, type Principal } from '../plugins/auth.js'

export type { Principal }

/**
 * What a caller has proved, asked for by the domain services themselves: every service method
 * takes an Access first and calls `apiKey()` or `principal()` before it reads or writes anything
 * (docs/api.md#credentials). Each rejects with the credential's own error (401 `API_KEY_INVALID`,
 * `TOKEN_INVALID`, `TOKEN_EXPIRED`…, or 429 once the caller's IP has failed too often).
 */
export interface Access {
  /** Resolves when the caller holds a valid `x-api-key`. */
  apiKey: () => Promise<void>
  /** The principal of the caller's verified Bearer token. */
  principal: () => Promise<Principal>
}

/** The guards read the request only; a subscription's WebSocket has no reply to give them. */
const GUARDS_NEED_NO_REPLY = undefined as unknown as FastifyReply

/**
 * The Access of one request, checked by the auth plugin's guards themselves — so the same codes,
 * the same failed-authentication budget — and each at most once. On REST the route's onRequest
 * guard has already run and marked the request (`apiKeyVerified`, `principal`): the checks then
 * resolve at once. On GraphQL nothing runs before a field asks (per field: docs/api.md#graphql),
 * so a field that needs no credential costs none, and one failure is counted once however many
 * fields ask.
 */
export class Credentials implements Access {
  private apiKeyCheck: Promise<void> | undefined
  private principalCheck: Promise<Principal> | undefined

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

  /**
   * Verifies a Bearer token the request carries before the rate limit counts it, so that the
   * limit is per principal as on REST; a bad token is left for the field that needs it to report.
   */
  async identifyEarly (): Promise<void> {
    if (this.request.headers.authorization !== undefined) await this.principal().catch(() => {})
  }
}

const credentialsOf = new WeakMap<FastifyRequest, Credentials>()

/** The Access of a request (REST, GraphQL, or the WebSocket upgrade of a subscription), made once. */
export function requestAccess (app: FastifyInstance, request: FastifyRequest): Credentials {
  let credentials = credentialsOf.get(request)
  if (credentials === undefined) {
    credentials = new Credentials(app, request)
    credentialsOf.set(request, credentials)
  }
  return credentials
}
