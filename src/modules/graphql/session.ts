import { TokenExpiredError, Messages } from '../../errors.js'
import type { Access, Principal } from '../../domain/access.js'

/** The close code of a connection whose token expired (graphql-transport-ws: unauthorized). */
export const TOKEN_EXPIRED_CLOSE_CODE = 4401

/** Node's timers take at most this many milliseconds; a later expiry is waited for in steps. */
const LONGEST_TIMER_MS = 2 ** 31 - 1

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
  private timer: NodeJS.Timeout | undefined
  private closed = false

  constructor (
    private readonly socket: SessionSocket,
    private readonly leewayMs: number,
    private readonly now: () => number = Date.now
  ) {
    socket.once('close', () => {
      this.closed = true
      clearTimeout(this.timer)
    })
  }

  /** Admits a subscription of `principal`, or refuses it (and ends the connection) if its token expired. */
  admit (principal: Principal): void {
    const endsAt = Date.parse(principal.expiresAt) + this.leewayMs
    if (endsAt <= this.now()) {
      this.expire()
      throw new TokenExpiredError()
    }
    if (this.timer === undefined && !this.closed) this.closeAt(endsAt)
  }

  private closeAt (endsAt: number): void {
    const wait = endsAt - this.now()
    const step = Math.min(Math.max(wait, 0), LONGEST_TIMER_MS)
    this.timer = setTimeout(() => { if (wait > LONGEST_TIMER_MS) this.closeAt(endsAt); else this.expire() }, step)
  }

  private expire (): void {
    clearTimeout(this.timer)
    if (this.closed) return
    this.closed = true
    this.socket.close(TOKEN_EXPIRED_CLOSE_CODE, Messages.tokenExpired)
  }
}

/**
 * The Access of a subscription on a connection: its principal, verified as on REST, is admitted
 * by the connection's session each time a subscription starts.
 */
export function admittedAccess (access: Access, session: SubscriptionSession): Access {
  return {
    apiKey: async () => { await access.apiKey() },
    caller: () => access.caller(),
    principal: async () => {
      const principal = await access.principal()
      session.admit(principal)
      return principal
    }
  }
}
