import type { JwtPayload, PrincipalType, TokenData } from '../schemas/auth.js'

/** The verified caller of a Bearer route (docs/api.md#resources, Principal). */
export interface Principal {
  id: string
  type: PrincipalType
  payload: JwtPayload
  /** `exp` and `iat` as ISO 8601 timestamps, computed once per token. */
  expiresAt: string
  issuedAt: string
  tokenData: TokenData
  rawToken: string | null
}

/**
 * A principal's key wherever principals are counted or kept apart (rate limits, budgets,
 * idempotency): a user and a client of the same id are two callers.
 */
export function principalKey (principal: Pick<Principal, 'type' | 'id'>): string {
  return `${principal.type}:${principal.id}`
}

/**
 * Whose portfolios a caller reaches (docs/api.md#whose-portfolios), as `PORTFOLIO_ACCESS` decides:
 * `every` — a trusted server's API key, which acts for any user (the `userId` it sends is the
 * owner); `owner` — a `user` token, which reaches only the portfolios whose `userId` is its `sub`
 * (and their assets, transactions, valuations, dashboards…), until `endsAt` (its `exp` plus
 * `JWT_LEEWAY`, in epoch milliseconds), when a stream it opened ends.
 */
export type PortfolioScope =
  | { readonly kind: 'every' }
  | { readonly kind: 'owner', readonly userId: string, readonly endsAt: number }

/** The scope of a trusted server's API key: every user's portfolios. */
export const EVERY_PORTFOLIO: PortfolioScope = Object.freeze({ kind: 'every' })

/**
 * What a caller has proved, asked for by the domain services themselves: every service method
 * takes an Access first and asks it before it reads or writes anything (docs/api.md#credentials).
 * Each rejects with the credential's own error (401 `API_KEY_INVALID`, `TOKEN_INVALID`,
 * `TOKEN_EXPIRED`…, 403 `FORBIDDEN_PRINCIPAL`, or 429 once the caller's IP has failed too often).
 * The auth plugin implements it for a request (`request.access`); a host or a test may bring its own.
 *
 * Which to ask:
 * - a method over portfolios or what they hold — portfolios, assets, transactions, quotes,
 *   dashboards, valuations and their streams, performance — asks {@link Access.portfolioScope},
 *   never `apiKey()`, then keeps to that scope with src/domain/ownership.ts: `listOwner` for a
 *   `userId` filter or body, `ifReached` on a read that carries the `userId`, `Ownership` for ids
 *   whose owner the method has not read (an asset, a batch), `streamUntil` for a stream's end.
 *   Another user's record is answered as an unknown id (NOT_FOUND), never 403;
 * - a method over the whole system (`/stats`) asks `apiKey()`: a trusted server's only;
 * - a method for the caller itself (me, excluded transactions, aggregator items) asks `principal()`.
 */
export interface Access {
  /** Resolves when the caller holds a valid `x-api-key`. */
  apiKey: () => Promise<void>
  /** The principal of the caller's verified Bearer token. */
  principal: () => Promise<Principal>
  /**
   * Whose portfolios the caller reaches under `PORTFOLIO_ACCESS`: `api-key` (the default) asks
   * `apiKey()` and answers every user's; `user` asks `principal()`, refuses a `client` with 403
   * `FORBIDDEN_PRINCIPAL` and answers the user's own; `both` does the first when the request
   * carries `x-api-key`, else the second. Verified once per request, however often asked.
   */
  portfolioScope: () => Promise<PortfolioScope>
  /**
   * Who is asking, for what a caller may hold at once (its open valuation streams): its API key
   * (a digest, never the key) when it sent one, else its principal's key; asked once `apiKey()`
   * or `principal()` resolved.
   */
  caller: () => string
}
