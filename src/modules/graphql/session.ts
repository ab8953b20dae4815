import { TokenExpiredError, Messages } from '../../errors.js'
import type { Access, Principal } from '../../domain/access.js'
import { callAt } from '../../domain/time.js'

/**
 * The close code of a connection whose token expired (graphql-transport-ws: unauthorized).
 * @internal Test seam: a test checks an expired token closes the connection with it.
 */
export const TOKEN_EXPIRED_CLOSE_CODE = 4401

/** What a subscription session needs of its WebSocket. */
export interface SessionSocket {
  close: (code: number, reason: string) => void
  once: (event: 'close', listener: () => void) => unknown
}

/**
 * A WebSocket connection's subscriptions, which all run with the token of its upgrade or of its
 * `connection_init`: once that token expires (its `exp` plus `JWT_LEEWAY`, when REST refuses it
 * too) no subscription starts on the connection and the connection is closed with 4401.
 */
export class SubscriptionSession {
  private cancelExpiry: (() => void) | undefined
  private closed = false

  constructor (
    private readonly socket: SessionSocket,
    private readonly leewayMs: number,
    private readonly now: () => number = Date.now
  ) {
    socket.once('close', () => {
      this.closed = true
      this.cancelExpiry?.()
    })
  }

  /** Admits a subscription of `principal`, or refuses it (and ends the connection) if its token expired. */
  admit (principal: Principal): void {
    const endsAt = Date.parse(principal.expiresAt) + this.leewayMs
    if (endsAt <= this.now()) {
      this.expire()
      throw new TokenExpiredError()
    }
    if (this.cancelExpiry !== undefined || this.closed) return
    this.cancelExpiry = callAt(endsAt, () => { this.expire() }, this.now)
  }

  private expire (): void {
    this.cancelExpiry?.()
    if (this.closed) return
    this.closed = true
    this.socket.close(TOKEN_EXPIRED_CLOSE_CODE, Messages.tokenExpired)
  }
}

/**
 * The Access of a subscription on a connection: its principal, verified as on REST, is admitted
 * by the connection's session each time a subscription starts — one that asks for the principal
 * itself, or for the portfolios of a user token (`portfolioValuation` under PORTFOLIO_ACCESS
 * `user` or `both`), so the connection closes with 4401 when that token expires.
 */
export function admittedAccess (access: Access, session: SubscriptionSession): Access {
  const admitted = async (): Promise<Principal> => {
    const principal = await access.principal()
    session.admit(principal)
    return principal
  }
  return {
    apiKey: access.apiKey.bind(access),
    caller: () => access.caller(),
    principal: admitted,
    portfolioScope: async () => {
      const scope = await access.portfolioScope()
      if (scope.kind === 'owner') await admitted()
      return scope
    }
  }
}
