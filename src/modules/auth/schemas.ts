import { Type } from '@sinclair/typebox'
import { HeaderText, PrincipalTypeSchema, TokenClaimsSchema, TokenDataSchema } from '../../schemas/auth.js'
import { DURATION_PATTERN, MAX_REQUEST_TEXT_LENGTH, Timestamp } from '../../schemas/common.js'

const NullableString = Type.Union([HeaderText(), Type.Null()])

export const HealthSchema = Type.Object({
  status: Type.Literal('OK'),
  timestamp: Timestamp,
  message: Type.Literal('BFF Service está funcionando!')
}, { title: 'Health' })

const PrincipalSummarySchema = Type.Object({
  id: HeaderText(),
  type: PrincipalTypeSchema,
  expiresAt: Timestamp,
  issuedAt: Timestamp
}, { title: 'PrincipalSummary' })

export const ProfileSchema = Type.Object({
  message: Type.Literal('Perfil acessado com sucesso'),
  user: PrincipalSummarySchema
}, { title: 'Profile' })

export const UserDashboardSchema = Type.Object({
  message: Type.Literal('Dashboard do usuário'),
  userId: HeaderText(),
  userType: PrincipalTypeSchema,
  payload: TokenClaimsSchema
}, { title: 'UserDashboard' })

export const ClientDashboardSchema = Type.Object({
  message: Type.Literal('Dashboard do client'),
  clientId: HeaderText(),
  userType: PrincipalTypeSchema,
  payload: TokenClaimsSchema
}, { title: 'ClientDashboard' })

/** The token's length and parts: it came whole in the Authorization header. */
const TokenMeasure = Type.Integer({ minimum: 0, maximum: MAX_REQUEST_TEXT_LENGTH })

export const TokenDebugSchema = Type.Object({
  message: Type.Literal('Debug completo do token JWT'),
  authentication: PrincipalSummarySchema,
  rawToken: Type.Object({ value: HeaderText(), length: TokenMeasure, parts: TokenMeasure }),
  tokenData: TokenDataSchema,
  jwtPayload: TokenClaimsSchema,
  extractedFields: Type.Object({ uuid: NullableString, email: NullableString, name: NullableString }),
  laravelCompatible: Type.Boolean(),
  instructions: Type.Object({
    message: Type.Literal('Este token pode ser usado diretamente na API Laravel'),
    // The curl command around the token and BACKEND_URL's `api/me`.
    example: Type.String({ maxLength: 2 * MAX_REQUEST_TEXT_LENGTH })
  })
}, { title: 'TokenDebug' })

export const ValidateTokenBodySchema = Type.Object({
  token: Type.Optional(Type.Union([Type.String({ maxLength: 8192 }), Type.Null()]))
}, { title: 'ValidateTokenInput', examples: [{ token: '<JWT>' }] })

export const ValidateTokenResponseSchema = Type.Union([
  Type.Object({ valid: Type.Literal(false), error: Type.Literal('Token não fornecido') }),
  Type.Object({
    message: Type.Literal('Envie o token no header Authorization como Bearer token'),
    example: Type.Literal('Authorization: Bearer <token>')
  })
], { title: 'ValidateTokenAnswer' })

export const LaravelCompatibilitySchema = Type.Object({
  message: Type.Literal('Dados de compatibilidade com Laravel'),
  bffData: Type.Object({
    userId: HeaderText(),
    userType: PrincipalTypeSchema,
    provider: NullableString,
    issuer: HeaderText(),
    jwtId: HeaderText()
  }),
  laravelFields: Type.Object({
    sub: TokenClaimsSchema.properties.sub,
    iss: HeaderText(),
    jti: HeaderText(),
    prv: NullableString
  }),
  compatibility: Type.Object({
    sameSecret: Type.Boolean(),
    sameAlgorithm: Type.Boolean(),
    tokenValidity: Type.String({ pattern: `^válido por ${DURATION_PATTERN}$`, maxLength: 11 + 20 })
  })
}, { title: 'LaravelCompatibility' })
