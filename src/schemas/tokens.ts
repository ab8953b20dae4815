import { createHash, randomBytes } from 'node:crypto'
import { createSigner } from 'fast-jwt'
import type { JwtAlgorithm, PrincipalType, ProviderConfig } from './auth.js'

/** @internal Test seam: a test checks it against the provider hashes tymon/jwt-auth writes. */
export function sha1Hex (text: string): string {
  return createHash('sha1').update(text, 'utf8').digest('hex')
}

/** Provider hashes from the model class names (tymon's `prv`), unless explicit hashes are configured. */
export function providerConfig (
  models: { user: string, client: string },
  explicit: { user?: string, client?: string } = {}
): ProviderConfig {
  return {
    userProviderHash: explicit.user ?? sha1Hex(models.user),
    clientProviderHash: explicit.client ?? sha1Hex(models.client),
    autoCalculated: explicit.user === undefined && explicit.client === undefined,
    models: { ...models }
  }
}

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

/** Mints a token with the claims tymon/jwt-auth puts in one (docs/api.md#tokens), for development and benchmarks. */
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
