import type { FastifyBaseLogger, FastifyError } from 'fastify'
import { GraphQLError, type ExecutionResult, type GraphQLFormattedError } from 'graphql'
import {
  errorCodeOf, isCodedError, isStoreUnavailable, Messages, type ErrorCode, type ValidationIssue
} from '../errors.js'
import { validationMessages } from './error-responses.js'

/** Codes beyond REST's (docs/api.md#error-codes): those the automatic-persisted-query protocol expects. */
type GraphqlErrorCode = ErrorCode | 'PERSISTED_QUERY_NOT_FOUND' | 'PERSISTED_QUERY_NOT_SUPPORTED'

/*
 * GraphQL's errors in the service's vocabulary, beside REST's (error-responses.ts): the same codes
 * and messages, validation failures worded by the same table, internals never shown.
 */

/** A query refused before it runs: too large, too deep, too costly. */
export class QueryRefusedError extends GraphQLError {
  constructor (message: string, extensions: Record<string, unknown>) {
    super(message, { extensions: { code: 'BAD_REQUEST', ...extensions } })
  }
}

/** Deeper queries are refused before they run (docs/api.md#graphql). */
export const MAX_QUERY_DEPTH = 10

const PERSISTED_QUERY_CODES: Record<string, GraphqlErrorCode> = {
  PersistedQueryNotFound: 'PERSISTED_QUERY_NOT_FOUND',
  PersistedQueryNotSupported: 'PERSISTED_QUERY_NOT_SUPPORTED'
}

/** GraphQL's "Did you mean …?" hints, which name fields, arguments, types and enum values. */
const SUGGESTION = / Did you mean (?:[a-z ]+ )?"[^"]*"(?:(?:, |,? or )"[^"]*")*\?/g

/** A message without GraphQL's suggestions: where introspection is off, they would reveal the schema. */
function withoutSuggestions (message: string): string {
  return message.replace(SUGGESTION, '')
}

/**
 * One error as the caller sees it: the REST error code in `extensions.code`, the REST message
 * (validation failures: every phrase, joined, and as an array in `extensions.messages`),
 * and nothing of the internals of an unexpected failure, which is logged instead. With
 * `hideSuggestions` (production), GraphQL's own messages lose their "Did you mean …?".
 */
export function formatGraphqlError (
  error: GraphQLError, log: FastifyBaseLogger, hideSuggestions = false
): GraphQLFormattedError {
  type Original = FastifyError & { validation?: ValidationIssue[], retryAfterSeconds?: number }
  const original = error.originalError as Original | undefined
  const located = {
    ...(error.locations === undefined ? {} : { locations: error.locations }),
    ...(error.path === undefined ? {} : { path: error.path })
  }
  if (original?.validation !== undefined) {
    const messages = validationMessages(original.validation, original.validationContext ?? 'input')
    return { message: messages.join('; '), ...located, extensions: { code: 'VALIDATION_FAILED', messages } }
  }
  if (original !== undefined && isCodedError(original)) {
    const status = original.statusCode ?? 500
    if (status >= 500 && !isStoreUnavailable(original)) log.warn({ err: original }, original.message)
    return {
      message: original.message,
      ...located,
      extensions: {
        code: errorCodeOf(original, status),
        ...(original.retryAfterSeconds === undefined ? {} : { retryAfter: original.retryAfterSeconds })
      }
    }
  }
  if (error.path !== undefined || (original !== undefined && !(original instanceof GraphQLError))) {
    // A resolver's unexpected failure, a value it could not serialize, a non-null field left null.
    log.error({ err: original ?? error }, 'graphql field failed')
    return { message: Messages.internal, ...located, extensions: { code: 'INTERNAL_ERROR' } }
  }
  const message = hideSuggestions ? withoutSuggestions(error.message) : error.message
  if (typeof error.extensions.code === 'string') return { message, ...located, extensions: error.extensions }
  // Refused before execution (GraphQL's own words): a syntax error is a malformed request,
  // anything else — unknown fields, wrong argument or variable types — fails the schema.
  const code: ErrorCode = error.message.startsWith('Syntax Error') ? 'BAD_REQUEST' : 'VALIDATION_FAILED'
  return { message, ...located, extensions: { code } }
}

/**
 * A subscription's refusal as the client will see it: Mercurius sends a subscription's errors
 * as they are thrown, without the formatter, so they are formatted here.
 */
export function formattedSubscriptionError (error: unknown, field: string, log: FastifyBaseLogger): GraphQLError {
  const located = new GraphQLError(error instanceof Error ? error.message : String(error), {
    originalError: error instanceof Error ? error : undefined,
    path: [field]
  })
  const { message, extensions } = formatGraphqlError(located, log)
  return new GraphQLError(message, { path: [field], extensions })
}

/**
 * The errors to answer for one error of an execution or of the GraphQL layer: Mercurius gathers
 * a document's validation errors in one error's `errors`; its other refusals (a mutation over
 * GET, an unknown persisted query) describe the request, not the service.
 */
function requestErrors (error: unknown): GraphQLError[] {
  if (error instanceof GraphQLError) {
    const nested = (error.originalError as { errors?: unknown } | undefined)?.errors
    return Array.isArray(nested) ? nested.flatMap(requestErrors) : [error]
  }
  if (!(error instanceof Error)) return [new GraphQLError(String(error))]
  const { code, errors: nested } = error as Error & { code?: unknown, errors?: unknown }
  if (code === 'MER_ERR_GQL_VALIDATION' && Array.isArray(nested)) return nested.flatMap(requestErrors)
  if (code === 'MER_ERR_GQL_QUERY_DEPTH') {
    return [new QueryRefusedError(error.message.replaceAll('`', ''), { maxDepth: MAX_QUERY_DEPTH })]
  }
  if (isCodedError(error as { code?: unknown }) || 'validation' in error) {
    return [new GraphQLError(error.message, { originalError: error })]
  }
  const persisted = PERSISTED_QUERY_CODES[error.message]
  const message = Array.isArray(nested) && nested[0] instanceof Error ? nested[0].message : error.message
  return [new GraphQLError(message, { extensions: { code: persisted ?? 'BAD_REQUEST' } })]
}

/**
 * Mercurius's error formatter: a request that ran (or began to) is 200 with `data` and
 * `errors`, as GraphQL over HTTP says for `application/json`; one refused before execution
 * (syntax, validation, depth, cost) is 400 with `errors` only.
 */
export function graphqlErrorFormatter (
  execution: ExecutionResult, log: FastifyBaseLogger, hideSuggestions = false
): { statusCode: number, response: ExecutionResult } {
  const errors = (execution.errors ?? []).flatMap(requestErrors)
  const ran = (execution.data !== undefined && execution.data !== null) ||
    errors.some(error => error.path !== undefined)
  return {
    statusCode: ran ? 200 : 400,
    // A request refused before execution has no `data` at all (GraphQL spec, "Response").
    response: {
      ...(ran ? { data: execution.data ?? null } : {}),
      errors: errors.map(error => formatGraphqlError(error, log, hideSuggestions)) as unknown as GraphQLError[]
    }
  }
}
