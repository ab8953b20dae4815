import { Type } from '@sinclair/typebox'
import { DurationSchema, MillisecondsSchema } from '../../schemas/common.js'

export const BackendHealthSchema = Type.Object({
  status: Type.Literal('OK'),
  laravel: Type.Object({ connected: Type.Boolean(), responseTime: MillisecondsSchema }),
  token: Type.Object({ valid: Type.Boolean(), expiresIn: DurationSchema })
}, { title: 'BackendHealth' })

const BackendUserSchema = Type.Object({
  id: Type.String(),
  email: Type.Union([Type.String(), Type.Null()]),
  name: Type.Union([Type.String(), Type.Null()])
}, { title: 'BackendUser' })

export const ValidateTokenResultSchema = Type.Object({
  valid: Type.Boolean(),
  user: Type.Union([BackendUserSchema, Type.Null()])
}, { title: 'BackendTokenValidation' })

/**
 * Headers a frontend may add to a proxied call; everything else is refused (Host, Authorization, Cookie, hop-by-hop,
 * X-Forwarded-*…).
 */
export const PROXY_HEADER_ALLOWLIST = [
  'accept-language',
  'if-none-match',
  'if-modified-since',
  'x-request-id',
  'x-correlation-id'
] as const

const HeaderValue = Type.String({ maxLength: 1024, pattern: '^[\\x20-\\x7e\\t]*$' })

export const ProxyBodySchema = Type.Object({
  method: Type.Unsafe<'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'>({
    type: 'string',
    enum: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']
  }),
  /** GET: the query (strings, numbers or booleans); another method: the JSON body, any object (docs/api.md#relays). */
  params: Type.Optional(Type.Record(Type.String({ maxLength: 200 }), Type.Unknown(), { maxProperties: 100 })),
  headers: Type.Optional(Type.Record(Type.String({ maxLength: 100 }), HeaderValue, { maxProperties: 20 }))
}, { title: 'BackendProxyInput', examples: [{ method: 'GET', params: { page: 1 } }] })

export const ProxyParamsSchema = Type.Object({ '*': Type.String({ maxLength: 2048 }) })
