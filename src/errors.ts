import createError from '@fastify/error'

/**
 * Coded errors whose messages are fixed, user-facing texts (spec §7.3, CONTRACT §4).
 * Every error code starting with `BFF_` is safe to show, whatever its status.
 */
export const Messages = {
  tokenInvalid: 'Token não fornecido ou inválido',
  tokenExpired: 'Token expirado',
  subjectMissing: 'Subject não encontrado no token',
  forbiddenPrincipal: 'Acesso negado para este tipo de usuário',
  apiKeyInvalid: 'API key inválida ou ausente',
  webhookSecretInvalid: 'Segredo do webhook inválido ou ausente',
  upstreamUnavailable: 'Serviço externo indisponível',
  upstreamTimeout: 'Tempo limite do serviço externo excedido',
  internal: 'Erro interno do servidor'
} as const

export const TokenInvalidError = createError('BFF_AUTH_TOKEN_INVALID', Messages.tokenInvalid, 401)
export const TokenExpiredError = createError('BFF_AUTH_TOKEN_EXPIRED', Messages.tokenExpired, 401)
export const SubjectMissingError = createError('BFF_AUTH_SUBJECT_MISSING', Messages.subjectMissing, 401)
export const ForbiddenPrincipalError = createError('BFF_AUTH_FORBIDDEN_PRINCIPAL', Messages.forbiddenPrincipal, 403)
export const ApiKeyInvalidError = createError('BFF_AUTH_API_KEY_INVALID', Messages.apiKeyInvalid, 401)
export const WebhookSecretError = createError('BFF_AGGREGATOR_WEBHOOK_SECRET', Messages.webhookSecretInvalid, 401)
export const UpstreamUnavailableError = createError('BFF_UPSTREAM_UNAVAILABLE', Messages.upstreamUnavailable, 502)
export const UpstreamTimeoutError = createError('BFF_UPSTREAM_TIMEOUT', Messages.upstreamTimeout, 504)
export const QuoteNotFoundError = createError<'BFF_QUOTE_NOT_FOUND', 404, [string]>('BFF_QUOTE_NOT_FOUND', 'Cotação não encontrada para %s', 404)
/** `new NotFoundError('Portfolio')` → 'Portfolio não encontrado'. */
export const RateLimitedError = createError<'BFF_RATE_LIMITED', 429, [string]>('BFF_RATE_LIMITED', 'Muitas requisições; tente novamente em %s', 429)
export const OverloadedError = createError('BFF_OVERLOADED', 'Serviço sobrecarregado; tente novamente em instantes', 503)
export const StoreUnavailableError = createError('BFF_STORE_UNAVAILABLE', 'Banco de dados indisponível', 503)
export const DrainingError = createError('BFF_DRAINING', 'Instância em desligamento', 503)
export const AggregatorNotConfiguredError = createError('BFF_AGGREGATOR_NOT_CONFIGURED', 'Agregador não configurado', 503)
export const NotFoundError = createError<'BFF_NOT_FOUND', 404, [string]>('BFF_NOT_FOUND', '%s não encontrado', 404)
export const ForbiddenError = createError<'BFF_FORBIDDEN', 403, [string]>('BFF_FORBIDDEN', '%s', 403)
export const BadRequestError = createError<'BFF_BAD_REQUEST', 400, [string]>('BFF_BAD_REQUEST', '%s', 400)

/** True for errors this service created with a message meant for the caller. */
export function isCodedError (error: { code?: unknown }): boolean {
  return typeof error.code === 'string' && error.code.startsWith('BFF_')
}

/** The value, or a 404 naming what was looked for. */
export function orNotFound<T> (value: T | undefined, what: string): T {
  if (value === undefined) throw new NotFoundError(what)
  return value
}
