import { Type, type Static } from '@sinclair/typebox'
import { JwtPayloadSchema, PrincipalTypeSchema, TokenDataSchema } from '../../schemas/auth.js'
import { Timestamp } from '../../schemas/common.js'

const NullableString = Type.Union([Type.String(), Type.Null()])

export const HealthSchema = Type.Object({
  status: Type.Literal('OK'),
  timestamp: Timestamp,
  message: Type.String()
}, { title: 'Health' })

export const PrincipalSummarySchema = Type.Object({
  id: Type.String(),
  type: PrincipalTypeSchema,
  expiresAt: Timestamp,
  issuedAt: Timestamp
}, { title: 'PrincipalSummary' })

export const ProfileSchema = Type.Object({
  message: Type.String(),
  user: PrincipalSummarySchema
}, { title: 'Profile' })

export const UserDashboardSchema = Type.Object({
  message: Type.String(),
  userId: Type.String(),
  userType: PrincipalTypeSchema,
  payload: JwtPayloadSchema
}, { title: 'UserDashboard' })

export const ClientDashboardSchema = Type.Object({
  message: Type.String(),
  clientId: Type.String(),
  userType: PrincipalTypeSchema,
  payload: JwtPayloadSchema
}, { title: 'ClientDashboard' })

export const TokenDebugSchema = Type.Object({
  message: Type.String(),
  authentication: PrincipalSummarySchema,
  rawToken: Type.Object({ value: Type.String(), length: Type.Integer(), parts: Type.Integer() }),
  tokenData: TokenDataSchema,
  jwtPayload: JwtPayloadSchema,
  extractedFields: Type.Object({ uuid: NullableString, email: NullableString, name: NullableString }),
  laravelCompatible: Type.Boolean(),
  instructions: Type.Object({ message: Type.String(), example: Type.String() })
}, { title: 'TokenDebug' })

export const ValidateTokenBodySchema = Type.Object({
  token: Type.Optional(Type.Union([Type.String({ maxLength: 8192 }), Type.Null()]))
}, { title: 'ValidateTokenInput', examples: [{ token: '<JWT>' }] })
export type ValidateTokenBody = Static<typeof ValidateTokenBodySchema>

export const ValidateTokenResponseSchema = Type.Union([
  Type.Object({ valid: Type.Literal(false), error: Type.String() }),
  Type.Object({ message: Type.String(), example: Type.String() })
], { title: 'ValidateTokenAnswer' })

export const LaravelCompatibilitySchema = Type.Object({
  message: Type.String(),
  bffData: Type.Object({
    userId: Type.String(),
    userType: PrincipalTypeSchema,
    provider: NullableString,
    issuer: Type.String(),
    jwtId: Type.String()
  }),
  laravelFields: Type.Object({
    sub: Type.Union([Type.String(), Type.Integer()]),
    iss: Type.String(),
    jti: Type.String(),
    prv: NullableString
  }),
  compatibility: Type.Object({
    sameSecret: Type.Boolean(),
    sameAlgorithm: Type.Boolean(),
    tokenValidity: Type.String()
  })
}, { title: 'LaravelCompatibility' })
