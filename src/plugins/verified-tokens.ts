import { LRUCache } from 'lru-cache'
import { isUtf8 } from 'node:buffer'
import type { Principal } from '../domain/access.js'

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
 * Principals of tokens verified before, keyed by the token itself: frontends send one token
 * many times, and a hit then costs one cache lookup — no HMAC, no base64, no hashing. Only a
 * token that passed every check is stored, until its `exp` (plus leeway); the least recently
 * used entry leaves when the cache is full. A different token, even one byte off, is a miss.
 */
export class VerifiedTokens {
  private readonly entries: LRUCache<string, { principal: Principal, validUntilMs: number }>

  constructor (maxEntries: number) {
    this.entries = new LRUCache({ max: maxEntries })
  }

  /** The principal while the token is unexpired; `'expired'` once it has lapsed. */
  get (token: string, nowMs: number): Principal | 'expired' | undefined {
    const entry = this.entries.get(token)
    if (entry === undefined) return undefined
    if (nowMs < entry.validUntilMs) return entry.principal
    this.entries.delete(token)
    return 'expired'
  }

  set (token: string, principal: Principal, validUntilMs: number): void {
    this.entries.set(token, { principal, validUntilMs })
  }
}
