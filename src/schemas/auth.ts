import { Type, type Static } from '@sinclair/typebox'
import { Timestamp } from './common.js'

export const PRINCIPAL_TYPES = ['user', 'client'] as const
export const PrincipalTypeSchema = Type.Union(PRINCIPAL_TYPES.map(type => Type.Literal(type)))
export type PrincipalType = Static<typeof PrincipalTypeSchema>

/**
 * NumericDate claims are whole seconds (tymon writes integers), at most the last second a
 * JavaScript Date holds: a float, `1e20` or a negative time is no time at all.
 */
const NumericDate = Type.Integer({ minimum: 0, maximum: 8_640_000_000_000 })

/** Claims of a tymon/jwt-auth token (docs/api.md#tokens); custom claims pass through. */
export const JwtPayloadSchema = Type.Object({
  iss: Type.String(),
  iat: NumericDate,
  exp: NumericDate,
  nbf: NumericDate,
  sub: Type.Union([Type.String({ minLength: 1 }), Type.Integer()]),
  jti: Type.String({ minLength: 1 }),
  prv: Type.Optional(Type.String())
}, { additionalProperties: true, title: 'TokenClaims', description: 'The claims of a tymon/jwt-auth token' })
export type JwtPayload = Static<typeof JwtPayloadSchema>

const NullableString = Type.Union([Type.String(), Type.Null()])

/** What the service reads out of the claims for a frontend: the principal's `tokenData`. */
export const TokenDataSchema = Type.Object({
  issuer: Type.String(),
  jwtId: Type.String(),
  provider: NullableString,
  uuid: NullableString,
  email: NullableString,
  name: NullableString
})
export type TokenData = Static<typeof TokenDataSchema>

const Sha1Hex = Type.String({ pattern: '^[0-9a-f]{40}$' })

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

/** The calling principal with its claims: `GET /auth/me` and GraphQL's `me` (never its raw token). */
export const MeSchema = Type.Object({
  id: Type.String(),
  type: PrincipalTypeSchema,
  expiresAt: Timestamp,
  issuedAt: Timestamp,
  payload: JwtPayloadSchema
}, { title: 'Me' })
