import createError from '@fastify/error'

/**
 * Coded errors whose messages are fixed, user-facing texts (docs/api.md#error-codes).
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
/** A user token naming another user's `userId` in a body or query (docs/api.md#whose-portfolios). */
export const ForbiddenOtherUserError = createError(
  'BFF_AUTH_FORBIDDEN_PRINCIPAL', 'Acesso negado às carteiras de outro usuário', 403
)
/** An aggregator item that is not the portfolio owner's, named in an import (docs/api.md#imports). */
export const ForbiddenOtherItemError = createError(
  'BFF_AUTH_FORBIDDEN_PRINCIPAL', 'Acesso negado a itens de outro usuário', 403
)
export const ApiKeyInvalidError = createError('BFF_AUTH_API_KEY_INVALID', Messages.apiKeyInvalid, 401)
export const WebhookSecretError = createError('BFF_AGGREGATOR_WEBHOOK_SECRET', Messages.webhookSecretInvalid, 401)
export const UpstreamUnavailableError = createError('BFF_UPSTREAM_UNAVAILABLE', Messages.upstreamUnavailable, 502)
export const UpstreamTimeoutError = createError('BFF_UPSTREAM_TIMEOUT', Messages.upstreamTimeout, 504)
/** The quote provider's quota is spent (brapi's 429 or 402): 503 until it says it is back. */
export const UpstreamQuotaError = createError<'BFF_UPSTREAM_QUOTA', 503, [string]>(
  'BFF_UPSTREAM_QUOTA',
  'Limite de requisições do provedor de cotações atingido; tente novamente em %s segundos',
  503
)
export const QuoteNotFoundError = createError<'BFF_QUOTE_NOT_FOUND', 404, [string]>(
  'BFF_QUOTE_NOT_FOUND',
  'Cotação não encontrada para %s',
  404
)
/** `new NotFoundError('Portfolio')` → 'Portfolio não encontrado'. */
export const RateLimitedError = createError<'BFF_RATE_LIMITED', 429, [string]>(
  'BFF_RATE_LIMITED',
  'Muitas requisições; tente novamente em %s',
  429
)

/** An error that knows how long to wait before trying again: the error handler sends it as `Retry-After`. */
export function withRetryAfter<E extends Error> (error: E, seconds: number): E & { retryAfterSeconds: number } {
  return Object.assign(error, { retryAfterSeconds: seconds })
}

/** The quote provider's quota is spent for `seconds` more: 503 with `Retry-After`. */
export function upstreamQuotaSpent (seconds: number): Error & { retryAfterSeconds: number } {
  return withRetryAfter(new UpstreamQuotaError(String(seconds)), seconds)
}

/** A 429 that knows how long to wait. */
export function rateLimitedFor (seconds: number): Error & { retryAfterSeconds: number } {
  return withRetryAfter(new RateLimitedError(`${seconds} seconds`), seconds)
}
export const OverloadedError = createError(
  'BFF_OVERLOADED',
  'Serviço sobrecarregado; tente novamente em instantes',
  503
)
export const StoreUnavailableError = createError('BFF_STORE_UNAVAILABLE', 'Banco de dados indisponível', 503)
/** What a client waits before retrying a request the store could not serve: about one reconnection attempt. */
const STORE_RETRY_AFTER_SECONDS = 2

/**
 * The store is unreachable, full or read-only (docs/deploy.md#failure-modes): 503 with
 * `Retry-After`, its driver's error kept as `cause` for the logs.
 */
export function storeUnavailable (
  cause: unknown
): InstanceType<typeof StoreUnavailableError> & { retryAfterSeconds: number } {
  return withRetryAfter(new StoreUnavailableError({ cause }), STORE_RETRY_AFTER_SECONDS)
}

/** The store's outage is logged once by the store itself: a request it fails is not logged again. */
export function isStoreUnavailable (error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'BFF_STORE_UNAVAILABLE'
}

/** What an operator reads of a store's failure: the driver's error behind a 503 (`database is locked`), else itself. */
export function storeFault (error: unknown): unknown {
  return isStoreUnavailable(error) ? (error as Error).cause : error
}
export const DrainingError = createError('BFF_DRAINING', 'Instância em desligamento', 503)
export const AggregatorNotConfiguredError = createError(
  'BFF_AGGREGATOR_NOT_CONFIGURED',
  'Agregador não configurado',
  503
)
/** The aggregator refused this service's credentials from where it runs (Pluggy's IP allowlist): an operator's fix. */
export const AggregatorRefusedError = createError(
  'BFF_AGGREGATOR_REFUSED',
  'Agregador recusou as credenciais deste serviço',
  503
)
/**
 * The service's own refusals to serve, which it answers on purpose and reports elsewhere: shutting
 * down (the drain's log lines), shedding load (`bff_load_shed_total`), an upstream left
 * unconfigured (the configuration line at start). Logged at `debug`, without a stack.
 */
const EXPECTED_REFUSALS: ReadonlySet<string> = new Set([
  'BFF_DRAINING', 'BFF_OVERLOADED', 'BFF_AGGREGATOR_NOT_CONFIGURED'
])

export function isExpectedRefusal (error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && EXPECTED_REFUSALS.has(code)
}
export const NotFoundError = createError<'BFF_NOT_FOUND', 404, [string]>('BFF_NOT_FOUND', '%s não encontrado', 404)
/** The same 404 for a feminine noun: `new NotFoundFeminineError('Exclusão')` → 'Exclusão não encontrada'. */
export const NotFoundFeminineError = createError<'BFF_NOT_FOUND', 404, [string]>(
  'BFF_NOT_FOUND',
  '%s não encontrada',
  404
)
export const ForbiddenError = createError<'BFF_FORBIDDEN', 403, [string]>('BFF_FORBIDDEN', '%s', 403)
export const BadRequestError = createError<'BFF_BAD_REQUEST', 400, [string]>('BFF_BAD_REQUEST', '%s', 400)
/**
 * A domain rule on amounts: one asset is worth at most 10¹³ BRL (docs/api.md#inputs), so sums stay exact;
 * answered as BAD_REQUEST, nothing written. `new PositionTooLargeError('10000000000000')`.
 */
export const PositionTooLargeError = createError<'BFF_POSITION_TOO_LARGE', 400, [string]>(
  'BFF_POSITION_TOO_LARGE',
  'totalValue must not be greater than %s',
  400
)
/** A 415 says what to send, plainly (docs/api.md#inputs). */
export const UNSUPPORTED_MEDIA_TYPE_MESSAGE = 'Content-Type must be application/json'
export const UnsupportedMediaTypeError = createError('BFF_UNSUPPORTED_MEDIA_TYPE', UNSUPPORTED_MEDIA_TYPE_MESSAGE, 415)
/** Safe retries and concurrent edits (docs/api.md, Safe retries): a key still running or reused, a stale `If-Match`. */
export const IdempotencyKeyInFlightError = createError('BFF_IDEMPOTENCY_KEY_IN_FLIGHT',
  'Uma requisição com esta Idempotency-Key ainda está em andamento', 409)
export const IdempotencyKeyReusedError = createError('BFF_IDEMPOTENCY_KEY_REUSED',
  'Esta Idempotency-Key já foi usada com outra requisição', 422)
export const PreconditionFailedError = createError('BFF_PRECONDITION_FAILED',
  'O recurso mudou desde a versão indicada em If-Match', 412)
/**
 * A sale of more than is held at its date, or the removal of a transaction that would leave less
 * than nothing held at some date (docs/api.md#transactions): nothing is written.
 * `new InsufficientQuantityError('2024-03-15')`.
 */
export const InsufficientQuantityError = createError<'BFF_INSUFFICIENT_QUANTITY', 422, [string]>(
  'BFF_INSUFFICIENT_QUANTITY',
  'Quantidade insuficiente: em %s a posição ficaria negativa',
  422
)

export interface ValidationIssue {
  keyword: string
  instancePath: string
  schemaPath: string
  params: Record<string, unknown>
  message: string
}

/**
 * A rule checked in code rather than by the schema, failing as Fastify's schema validation does
 * (`validation`, `validationContext`), so every error handler — ours or a host's — sees the same.
 */
export class ValidationError extends Error {
  readonly statusCode = 400
  readonly code = 'FST_ERR_VALIDATION'
  constructor (readonly validationContext: string, readonly validation: ValidationIssue[]) {
    super(
      validation
        .map(issue => `${validationContext}${issue.instancePath.replaceAll('/', '.')} ${issue.message}`)
        .join(', ')
    )
  }
}

/** The machine-readable codes (docs/api.md#error-codes), one on every error body. */
export const ERROR_CODES = [
  'VALIDATION_FAILED', 'BAD_REQUEST',
  'TOKEN_INVALID', 'TOKEN_EXPIRED', 'SUBJECT_MISSING', 'API_KEY_INVALID', 'WEBHOOK_SECRET_INVALID',
  'FORBIDDEN_PRINCIPAL', 'FORBIDDEN', 'NOT_FOUND',
  'REQUEST_TIMEOUT', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'RATE_LIMITED',
  'UPSTREAM_UNAVAILABLE', 'UPSTREAM_TIMEOUT',
  'OVERLOADED', 'NOT_CONFIGURED', 'DRAINING', 'STORE_UNAVAILABLE',
  'IDEMPOTENCY_KEY_IN_FLIGHT', 'IDEMPOTENCY_KEY_REUSED', 'PRECONDITION_FAILED',
  'INSUFFICIENT_QUANTITY',
  'INTERNAL_ERROR'
] as const
export type ErrorCode = typeof ERROR_CODES[number]

/** The code of each of the service's own errors. */
const CODE_OF_ERROR: Record<string, ErrorCode> = {
  BFF_AUTH_TOKEN_INVALID: 'TOKEN_INVALID',
  BFF_AUTH_TOKEN_EXPIRED: 'TOKEN_EXPIRED',
  BFF_AUTH_SUBJECT_MISSING: 'SUBJECT_MISSING',
  BFF_AUTH_FORBIDDEN_PRINCIPAL: 'FORBIDDEN_PRINCIPAL',
  BFF_AUTH_API_KEY_INVALID: 'API_KEY_INVALID',
  BFF_AGGREGATOR_WEBHOOK_SECRET: 'WEBHOOK_SECRET_INVALID',
  BFF_UPSTREAM_UNAVAILABLE: 'UPSTREAM_UNAVAILABLE',
  BFF_UPSTREAM_TIMEOUT: 'UPSTREAM_TIMEOUT',
  BFF_UPSTREAM_QUOTA: 'UPSTREAM_UNAVAILABLE',
  BFF_QUOTE_NOT_FOUND: 'NOT_FOUND',
  BFF_RATE_LIMITED: 'RATE_LIMITED',
  BFF_OVERLOADED: 'OVERLOADED',
  BFF_STORE_UNAVAILABLE: 'STORE_UNAVAILABLE',
  BFF_DRAINING: 'DRAINING',
  BFF_AGGREGATOR_NOT_CONFIGURED: 'NOT_CONFIGURED',
  BFF_AGGREGATOR_REFUSED: 'NOT_CONFIGURED',
  BFF_NOT_FOUND: 'NOT_FOUND',
  BFF_FORBIDDEN: 'FORBIDDEN',
  BFF_BAD_REQUEST: 'BAD_REQUEST',
  BFF_POSITION_TOO_LARGE: 'BAD_REQUEST',
  BFF_UNSUPPORTED_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  BFF_IDEMPOTENCY_KEY_IN_FLIGHT: 'IDEMPOTENCY_KEY_IN_FLIGHT',
  BFF_IDEMPOTENCY_KEY_REUSED: 'IDEMPOTENCY_KEY_REUSED',
  BFF_PRECONDITION_FAILED: 'PRECONDITION_FAILED',
  BFF_INSUFFICIENT_QUANTITY: 'INSUFFICIENT_QUANTITY'
}

/** Errors raised by Fastify or a plugin: their status says which code they are. */
const CODE_OF_STATUS: Record<number, ErrorCode> = {
  400: 'BAD_REQUEST',
  401: 'TOKEN_INVALID',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'NOT_FOUND',
  408: 'REQUEST_TIMEOUT',
  413: 'PAYLOAD_TOO_LARGE',
  414: 'NOT_FOUND',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMITED',
  502: 'UPSTREAM_UNAVAILABLE',
  503: 'OVERLOADED',
  504: 'UPSTREAM_TIMEOUT'
}

/** The error code (docs/api.md#error-codes) of an error answered with `status`. */
export function errorCodeOf (error: { code?: unknown }, status: number): ErrorCode {
  const own = typeof error.code === 'string' ? CODE_OF_ERROR[error.code] : undefined
  if (own !== undefined) return own
  return CODE_OF_STATUS[status] ?? (status >= 500 ? 'INTERNAL_ERROR' : 'BAD_REQUEST')
}

/** True for errors this service created with a message meant for the caller. */
export function isCodedError (error: { code?: unknown }): boolean {
  return typeof error.code === 'string' && error.code.startsWith('BFF_')
}
