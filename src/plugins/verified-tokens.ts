import { isUtf8 } from 'node:buffer'
import type { Principal } from '../domain/access.js'
import { MemoryCache } from '../cache/memory-cache.js'
import type { Telemetry } from '../observability/telemetry.js'

/**
 * What fast-jwt lets through and RFC 7515/7519 do not: every segment in canonical base64url (no
 * padding, no stray bits in the last character, so one token has one spelling), a header and
 * payload in UTF-8, and a `typ`, when present, of JWT.
 */
export function wellFormed (token: string): boolean {
  const segments = token.split('.')
  if (segments.length !== 3) return false
  const decoded = segments.map(segment => Buffer.from(segment, 'base64url'))
  if (decoded.some((bytes, index) => bytes.toString('base64url') !== segments[index])) return false
  const [header, payload] = decoded as [Buffer, Buffer, Buffer]
  if (!isUtf8(header) || !isUtf8(payload)) return false
  try {
    const typ: unknown = (JSON.parse(header.toString('utf8')) as { typ?: unknown }).typ
    return typ === undefined || (typeof typ === 'string' && typ.toUpperCase() === 'JWT')
  } catch {
    return false
  }
}
/**
 * Principals of tokens verified before, keyed by the token itself, a use of the one mechanism
 * (src/cache/memory-cache.ts) with nothing to load: frontends send one token many times, and a
 * hit then costs one cache lookup — no HMAC, no base64, no hashing. Only a token that passed every
 * check is kept, until its `exp` plus the leeway, when it is verified again (and refused as expired);
 * the least recently used entry leaves when the cache is full. A different token, even one byte
 * off, is a miss.
 */
export class VerifiedTokens {
  private readonly principals: MemoryCache<Principal>

  constructor (maxEntries: number, leewayMs: number, telemetry: Telemetry) {
    this.principals = new MemoryCache<Principal>({
      name: 'verified_tokens',
      maxEntries,
      ttlMs: (principal, now) => principal.payload.exp * 1000 + leewayMs - now,
      telemetry
    })
  }

  /** The principal of a token verified before and unexpired, counted as a hit; a miss is undefined. */
  get (token: string): Principal | undefined {
    return this.principals.lookup(token)
  }

  set (token: string, principal: Principal): void {
    this.principals.keep(token, principal)
  }
}
