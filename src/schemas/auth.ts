import { Type, type Static } from '@sinclair/typebox'
import { MAX_REQUEST_TEXT_LENGTH, Timestamp } from './common.js'

export const PRINCIPAL_TYPES = ['user', 'client'] as const
export const PrincipalTypeSchema = Type.Union(PRINCIPAL_TYPES.map(type => Type.Literal(type)))
export type PrincipalType = Static<typeof PrincipalTypeSchema>

/**
 * NumericDate claims are whole seconds (tymon writes integers), at most the last second a
 * JavaScript Date holds: a float, `1e20` or a negative time is no time at all.
 */
const NumericDate = Type.Integer({ minimum: 0, maximum: 8_640_000_000_000 })

/** Claims of a tymon/jwt-auth token (docs/api.md#tokens), as a token is checked; custom claims pass through. */
export const JwtPayloadSchema = Type.Object({
  iss: Type.String(),
  iat: NumericDate,
  exp: NumericDate,
  nbf: NumericDate,
  sub: Type.Union([Type.String({ minLength: 1 }), Type.Integer()]),
  jti: Type.String({ minLength: 1 }),
  prv: Type.Optional(Type.String())
}, { additionalProperties: true })
export type JwtPayload = Static<typeof JwtPayloadSchema>

/**
 * A text read from a request's headers (a claim of its token): at most MAX_REQUEST_TEXT_LENGTH
 * characters, since Node refuses headers over 16 KiB together.
 */
export function HeaderText (options: { minLength?: number, description?: string } = {}) {
  return Type.String({ ...options, maxLength: MAX_REQUEST_TEXT_LENGTH })
}

/**
 * The claims of the verified token as the REST answers give them back: JwtPayloadSchema with the
 * length its texts have, the token having come in the Authorization header.
 */
export const TokenClaimsSchema = Type.Object({
  iss: HeaderText(),
  iat: NumericDate,
  exp: NumericDate,
  nbf: NumericDate,
  sub: Type.Union([HeaderText({ minLength: 1 }), Type.Integer()]),
  jti: HeaderText({ minLength: 1 }),
  prv: Type.Optional(HeaderText())
}, { additionalProperties: true, title: 'TokenClaims', description: 'The claims of a tymon/jwt-auth token' })

const NullableString = Type.Union([HeaderText(), Type.Null()])

/** What the service reads out of the claims for a frontend: the principal's `tokenData`. */
export const TokenDataSchema = Type.Object({
  issuer: HeaderText(),
  jwtId: HeaderText(),
  provider: NullableString,
  uuid: NullableString,
  email: NullableString,
  name: NullableString
})
export type TokenData = Static<typeof TokenDataSchema>

const Sha1Hex = Type.String({ pattern: '^[0-9a-f]{40}$', maxLength: 40 })

/** Provider hashes that tell a `user` token from a `client` token (sha1 of model class names, docs/api.md#tokens). */
export const ProviderConfigSchema = Type.Object({
  userProviderHash: Sha1Hex,
  clientProviderHash: Sha1Hex,
  autoCalculated: Type.Boolean(),
  models: Type.Object({ user: Type.String(), client: Type.String() })
}, { title: 'ProviderConfig' })
export type ProviderConfig = Static<typeof ProviderConfigSchema>

export const JWT_ALGORITHMS = ['HS256', 'HS384', 'HS512'] as const
export type JwtAlgorithm = typeof JWT_ALGORITHMS[number]

/**
 * `PORTFOLIO_ACCESS`: which credential opens the portfolio routes and fields
 * (docs/api.md#whose-portfolios) — a trusted server's API key, a user's token, or either.
 */
export const PORTFOLIO_ACCESS_MODES = ['api-key', 'user', 'both'] as const
export type PortfolioAccess = typeof PORTFOLIO_ACCESS_MODES[number]

/** The calling principal with its claims: `GET /auth/me` and GraphQL's `me` (never its raw token). */
export const MeSchema = Type.Object({
  id: HeaderText(),
  type: PrincipalTypeSchema,
  expiresAt: Timestamp,
  issuedAt: Timestamp,
  payload: TokenClaimsSchema
}, { title: 'Me' })
