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
 * What a caller has proved, asked for by the domain services themselves: every service method
 * takes an Access first and calls `apiKey()` or `principal()` before it reads or writes anything
 * (docs/api.md#credentials). Each rejects with the credential's own error (401 `API_KEY_INVALID`,
 * `TOKEN_INVALID`, `TOKEN_EXPIRED`…, or 429 once the caller's IP has failed too often). The auth
 * plugin implements it for a request (`request.access`); a host or a test may bring its own.
 */
export interface Access {
  /** Resolves when the caller holds a valid `x-api-key`. */
  apiKey: () => Promise<void>
  /** The principal of the caller's verified Bearer token. */
  principal: () => Promise<Principal>
  /**
   * Who is asking, for what a caller may hold at once (its open valuation streams): its API key
   * (a digest, never the key) when it sent one, else its principal's key; asked once `apiKey()`
   * or `principal()` resolved.
   */
  caller: () => string
}
