import type { FastifyBaseLogger } from 'fastify'
import type { MercuriusContext } from 'mercurius'
import type { Access } from '../../domain/access.js'
import type { Domain } from '../../domain/index.js'
import type { SubscriptionSession } from './session.js'

/** What every resolver receives besides Mercurius's own context. */
export interface GraphqlContext extends MercuriusContext {
  /**
   * The request's credentials (src/domain/access.ts), handed to every service call: a service
   * checks what it needs when the field that calls it resolves (per field: docs/api.md#graphql).
   */
  access: Access
  /** The domain services; resolvers only map arguments to them and their answers to fields. */
  domain: Domain
  /** The request's logger: upstream lines carry its request id. */
  log: FastifyBaseLogger
  /** A subscription connection's session (WebSocket only): it ends with the connection's token. */
  session?: SubscriptionSession
}
