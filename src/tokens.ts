import { randomBytes } from 'node:crypto'
import { createSigner } from 'fast-jwt'
import type { JwtAlgorithm, PrincipalType, ProviderConfig } from './plugins/auth.js'

export interface MintOptions {
  secret: string
  algorithm: JwtAlgorithm
  providers: ProviderConfig
  type: PrincipalType
  sub: string | number
  /** `iss` as tymon sets it: the URL of the endpoint that minted the token. */
  issuer: string
  ttlSeconds: number
  /** Seconds since the epoch; defaults to now. */
  now?: number
}

/** Mints a token with the claims tymon/jwt-auth puts in one (CONTRACT §8), for development and benchmarks. */
export function mintToken (options: MintOptions): string {
  const iat = options.now ?? Math.floor(Date.now() / 1000)
  const sign = createSigner({ key: options.secret, algorithm: options.algorithm })
  return sign({
    iss: options.issuer,
    iat,
    exp: iat + options.ttlSeconds,
    nbf: iat,
    jti: randomBytes(12).toString('base64url'),
    sub: options.sub,
    prv: options.type === 'user' ? options.providers.userProviderHash : options.providers.clientProviderHash
  })
}
