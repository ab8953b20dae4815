import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { MercuriusContext } from 'mercurius'
import { requirePrincipal, type Principal } from '../../plugins/auth.js'
import type { ItemOwnership } from '../aggregator/ownership.js'
import type { SubscriptionSession } from './session.js'

/** The guards read the request only; a subscription's WebSocket has no reply to give them. */
const GUARDS_NEED_NO_REPLY = undefined as unknown as FastifyReply

/**
 * The credentials of one GraphQL request, each checked at most once, when the first field that
 * needs it resolves (per field: docs/api.md#graphql), by the REST guards themselves — so the same
 * codes, the same failed-authentication budget, and one failure counted however many fields
 * ask. Fields that need nothing cost nothing.
 */
export class Credentials {
  private apiKeyCheck: Promise<void> | undefined
  private principalCheck: Promise<Principal> | undefined

  constructor (private readonly app: FastifyInstance, private readonly request: FastifyRequest) {}

  /** Resolves when `x-api-key` is valid; rejects with the REST guard's error otherwise. */
  async apiKey (): Promise<void> {
    this.apiKeyCheck ??= this.app.verifyApiKey.call(this.app, this.request, GUARDS_NEED_NO_REPLY).then(() => {})
    await this.apiKeyCheck
  }

  /** The Bearer token's principal; rejects with the REST guard's error otherwise. */
  async principal (): Promise<Principal> {
    this.principalCheck ??= this.app.verifyJwt.call(this.app, this.request, GUARDS_NEED_NO_REPLY).then(() => requirePrincipal(this.request))
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

/** The credentials of a request (HTTP or the WebSocket upgrade of a subscription), made once. */
export function requestCredentials (app: FastifyInstance, request: FastifyRequest): Credentials {
  let credentials = credentialsOf.get(request)
  if (credentials === undefined) {
    credentials = new Credentials(app, request)
    credentialsOf.set(request, credentials)
  }
  return credentials
}

/** What every resolver receives besides Mercurius's own context. */
export interface GraphqlContext extends MercuriusContext {
  credentials: Credentials
  /** Who owns an aggregator item (a client subscribes only to its own). */
  ownership: ItemOwnership
  /** The request's logger: upstream lines carry its request id. */
  log: FastifyBaseLogger
  /** A subscription connection's session (WebSocket only): it ends with the connection's token. */
  session?: SubscriptionSession
}
