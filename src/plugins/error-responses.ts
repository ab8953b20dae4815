import { STATUS_CODES } from 'node:http'
import fp from 'fastify-plugin'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifySchemaValidationError } from 'fastify'
import { Type, type Static } from '@sinclair/typebox'
import {
  ERROR_CODES,
  errorCodeOf,
  isCodedError,
  Messages,
  UNSUPPORTED_MEDIA_TYPE_MESSAGE,
  type ErrorCode
} from '../errors.js'
import { StringEnum } from '../schemas/common.js'

/** The error body (docs/api.md#errors); `message` is an array only for validation failures. */
export const ErrorBodySchema = Type.Object({
  statusCode: Type.Integer(),
  code: StringEnum(ERROR_CODES),
  message: Type.Union([Type.String(), Type.Array(Type.String())]),
  error: Type.String(),
  timestamp: Type.String({ format: 'date-time' }),
  path: Type.String()
}, {
  title: 'ErrorBody',
  description: 'Error body of every error the service answers: statusCode, code (for programs), ' +
    'message (an array for validation failures), error, timestamp, path'
})
export type ErrorBody = Static<typeof ErrorBodySchema>

interface PropertySchema {
  type?: unknown
  enum?: unknown[]
  const?: unknown
  anyOf?: PropertySchema[]
  required?: string[]
}

/** Ajv runs with `verbose`, so each error carries the schema object it failed in. */
type ValidationIssue = Pick<
  FastifySchemaValidationError,
  'keyword' | 'instancePath' | 'schemaPath' | 'params' | 'message'
> & {
  parentSchema?: PropertySchema & { properties?: Record<string, PropertySchema> }
}

/** `/data/itemId` → `data.itemId`; the root of a body is called after its part (`body`, `querystring`). */
function propertyName (instancePath: string, root: string): string {
  const name = instancePath.split('/').filter(Boolean).join('.')
  return name === '' ? root : name
}

/** One phrase per failing rule, in class-validator's wording (docs/api.md#inputs). */
function typePhrase (property: string, type: unknown): string {
  // A nullable property fails as `string,null`: the caller should hear about the useful type.
  switch (String(type).split(',')[0]) {
    case 'string': return `${property} must be a string`
    case 'number': return `${property} must be a number conforming to the specified constraints`
    case 'integer': return `${property} must be an integer number`
    case 'boolean': return `${property} must be a boolean value`
    case 'array': return `${property} must be an array`
    case 'null': return `${property} must be null`
    default: return `${property} must be an object`
  }
}

function enumPhrase (property: string, values: unknown[]): string {
  return `${property} must be one of the following values: ${values.join(', ')}`
}

/** What an absent property should have been: its enum, or else its type. */
function schemaPhrase (property: string, schema: PropertySchema): string {
  if (Array.isArray(schema.enum)) return enumPhrase(property, schema.enum)
  const literals = schema.anyOf?.map(branch => branch.const)
  if (literals !== undefined && literals.length > 0 && literals.every(value => typeof value === 'string')) {
    return enumPhrase(property, literals)
  }
  return typePhrase(property, schema.type ?? schema.anyOf?.[0]?.type)
}

const formatPhrases: Record<string, string> = {
  uuid: 'must be a UUID',
  'date-time': 'must be a valid ISO 8601 date string',
  date: 'must be a valid ISO 8601 date string',
  uri: 'must be a URL address',
  email: 'must be an email'
}

function phrasesFor (issue: ValidationIssue, root: string): string[] {
  const params = issue.params as Record<string, unknown>
  switch (issue.keyword) {
    case 'required': {
      const missing = String(params.missingProperty)
      const property = propertyName(`${issue.instancePath}/${missing}`, root)
      // class-validator reports every failing rule of an absent property: emptiness, then its type.
      const schema = issue.parentSchema?.properties?.[missing]
      return [`${property} should not be empty`, ...(schema === undefined ? [] : [schemaPhrase(property, schema)])]
    }
    case 'type':
      return [typePhrase(propertyName(issue.instancePath, root), params.type)]
    case 'minLength':
      return [params.limit === 1
        ? `${propertyName(issue.instancePath, root)} should not be empty`
        : `${propertyName(issue.instancePath, root)} must be longer than or equal to ${String(params.limit)} ` +
          'characters']
    case 'maxLength':
      return [
        `${propertyName(issue.instancePath, root)} must be shorter than or equal to ${String(params.limit)} characters`
      ]
    case 'enum':
      return [enumPhrase(propertyName(issue.instancePath, root), params.allowedValues as unknown[])]
    case 'const':
      return [enumPhrase(propertyName(issue.instancePath, root), [params.allowedValue])]
    case 'minimum':
      return [`${propertyName(issue.instancePath, root)} must not be less than ${String(params.limit)}`]
    case 'exclusiveMinimum':
      return [`${propertyName(issue.instancePath, root)} must be greater than ${String(params.limit)}`]
    case 'maximum':
      return [`${propertyName(issue.instancePath, root)} must not be greater than ${String(params.limit)}`]
    case 'exclusiveMaximum':
      return [`${propertyName(issue.instancePath, root)} must be less than ${String(params.limit)}`]
    case 'format': {
      const phrase = formatPhrases[String(params.format)] ?? 'has an invalid format'
      return [`${propertyName(issue.instancePath, root)} ${phrase}`]
    }
    case 'pattern':
      // `\S` is how schemas say "not blank" (see NonBlankString).
      return [params.pattern === '\\S'
        ? `${propertyName(issue.instancePath, root)} should not be empty`
        : `${propertyName(issue.instancePath, root)} must match ${String(params.pattern)} regular expression`]
    case 'maxDecimals':
      // class-validator's IsNumber({ maxDecimalPlaces }) says no more than this.
      return [typePhrase(propertyName(issue.instancePath, root), 'number')]
    case 'maxItems':
      return [`${propertyName(issue.instancePath, root)} must contain no more than ${String(params.limit)} elements`]
    case 'minItems':
      return [`${propertyName(issue.instancePath, root)} must contain at least ${String(params.limit)} elements`]
    case 'maxProperties':
      return [`${propertyName(issue.instancePath, root)} must contain no more than ${String(params.limit)} properties`]
    case 'additionalProperties':
      return [
        `property ${propertyName(`${issue.instancePath}/${String(params.additionalProperty)}`, root)} should not exist`
      ]
    case 'propertyNames':
      return [`property ${propertyName(`${issue.instancePath}/${String(params.propertyName)}`, root)} should not exist`]
    case 'anyOf':
      if (isAtLeastOneOf(issue.parentSchema)) {
        const names = (issue.parentSchema.anyOf ?? []).map(branch => branch.required?.[0]).join(', ')
        return [`at least one of ${names} must be provided`]
      }
      // One phrase for the whole union when no branch explains more (see validationMessages).
      return [schemaPhrase(propertyName(issue.instancePath, root), issue.parentSchema ?? {})]
    default:
      return [`${propertyName(issue.instancePath, root)} is invalid`]
  }
}

/** An object's `anyOf` of one-property `required` branches: "name at least one of these" (AtLeastOneOf). */
function isAtLeastOneOf (schema: PropertySchema | undefined): schema is PropertySchema & { anyOf: PropertySchema[] } {
  return (
    schema?.anyOf !== undefined &&
    schema.anyOf.length > 0 &&
    schema.anyOf.every(branch => branch.required?.length === 1 && Object.keys(branch).length === 1)
  )
}

/** Turns the schema validator's errors into the 400 `message` array, one phrase per failed rule. */
export function validationMessages (allIssues: readonly ValidationIssue[], root: string): string[] {
  // A refused property name is reported once, by `propertyNames`, not again by the enum inside it;
  // an unmet "at least one of" once, by its `anyOf`, not by each branch's `required`.
  const issues = allIssues.filter(
    issue =>
      !issue.schemaPath.includes('/propertyNames/') &&
      !(
        issue.keyword === 'required' &&
        issue.schemaPath.includes('/anyOf/') &&
        isAtLeastOneOf(
          allIssues.find(other => other.keyword === 'anyOf' && other.instancePath === issue.instancePath)?.parentSchema
        )
      )
  )
  // In a union, a branch that failed only on its type says nothing; one that failed on a
  // constraint (a nullable string that is too long) says what to fix, and replaces the union's phrase.
  const inBranch = (issue: ValidationIssue): boolean => issue.schemaPath.includes('/anyOf/')
  const specific = issues.filter(issue => inBranch(issue) && !['type', 'const', 'enum'].includes(issue.keyword))
  const explained = new Set(specific.map(issue => issue.instancePath))
  const phrases = issues
    .filter(issue =>
      inBranch(issue) ? specific.includes(issue) : !(issue.keyword === 'anyOf' && explained.has(issue.instancePath))
    )
    .flatMap(issue => phrasesFor(issue, root))
  const unique = [...new Set(phrases)]
  return unique.length > 0 ? unique : [`${root} is invalid`]
}

export function errorBody (
  request: FastifyRequest,
  statusCode: number,
  code: ErrorCode,
  message: string | string[]
): ErrorBody {
  const queryStart = request.url.indexOf('?')
  return {
    statusCode,
    code,
    message,
    error: STATUS_CODES[statusCode] ?? 'Error',
    timestamp: new Date().toISOString(),
    path: queryStart === -1 ? request.url : request.url.slice(0, queryStart)
  }
}

function statusOf (error: FastifyError): number {
  const status = error.statusCode
  return typeof status === 'number' && status >= 400 && status <= 599 ? status : 500
}

/**
 * The text for the caller: a 5xx of ours keeps its fixed message, any other says nothing of its
 * internals; Fastify's own 415 names the type sent, ours says what to send.
 */
function messageOf (error: FastifyError, status: number): string {
  if (status >= 500 && !isCodedError(error)) return Messages.internal
  return status === 415 ? UNSUPPORTED_MEDIA_TYPE_MESSAGE : error.message
}

/**
 * Fastify answers some errors before any route or hook runs (a bad `%` escape in the URL, a bad
 * Content-Type header); this server option gives them the standard body too.
 */
export function frameworkErrors (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const status = statusOf(error)
  reply.code(status).send(errorBody(request, status, errorCodeOf(error, status), messageOf(error, status)))
}

/**
 * Answers any error in the standard body (docs/api.md#errors): the app's error handler, and a
 * module's fallback for errors it does not format itself.
 */
export function answerError (error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error.validation !== undefined) {
    const root = error.validationContext ?? 'body'
    // An id longer than any id names nothing — 404, without echoing it back (docs/api.md#inputs).
    if (root === 'params' && error.validation.some(issue => issue.keyword === 'maxLength')) {
      return reply.code(404).send({
        ...errorBody(request, 404, 'NOT_FOUND', 'Recurso não encontrado'),
        path: request.routeOptions.url ?? ''
      })
    }
    return reply
      .code(400)
      .send(errorBody(request, 400, 'VALIDATION_FAILED', validationMessages(error.validation, root)))
  }
  const status = statusOf(error)
  const retryAfter = (error as { retryAfterSeconds?: unknown }).retryAfterSeconds
  if (typeof retryAfter === 'number') reply.header('retry-after', String(retryAfter))
  if (status >= 500 && !isCodedError(error)) {
    request.log.error({ err: error }, 'unhandled error')
    return reply.code(status).send(errorBody(request, status, 'INTERNAL_ERROR', Messages.internal))
  }
  if (status >= 500) request.log.warn({ err: error }, error.message)
  return reply.code(status).send(errorBody(request, status, errorCodeOf(error, status), messageOf(error, status)))
}

async function errorResponses (app: FastifyInstance): Promise<void> {
  app.setErrorHandler(answerError)

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]
    return reply.code(404).send(errorBody(request, 404, 'NOT_FOUND', `Cannot ${request.method} ${path}`))
  })
}

/** The one error handler and not-found handler of the app: every error leaves in the standard body. */
export default fp(errorResponses, { name: 'bff-error-responses', fastify: '5.x' })

/**
 * The error body as a route's response schema: the same fields, none enforced, extra ones
 * kept, so that a host app that mounts a module with its own error handler can still answer in
 * its own format (a strict schema would fail to serialize it).
 */
const ErrorResponseSchema = Type.Partial(ErrorBodySchema, { additionalProperties: true })

/**
 * The same at run time, for an error status of a relay route that the upstream may answer too:
 * the service's own errors are serialized with it, a relayed answer is sent as the upstream's
 * bytes (see relayResponse). Its own object, so that the document can show both shapes.
 */
const RelayedErrorResponseSchema = Type.Partial(ErrorBodySchema, { additionalProperties: true })

/** What an upstream answered with an error status, relayed byte for byte: any JSON, its own fields and types. */
export const UpstreamErrorBodySchema = Type.Unknown({
  title: 'UpstreamErrorBody',
  description: 'The upstream\'s own answer with this status, relayed byte for byte ' +
    '(any JSON: Pluggy\'s `{code: 403, message, …}`, Laravel\'s `{message, errors}`…)'
})

/**
 * The OpenAPI document shows the body the service itself answers, every field present; on a
 * relay route, for a status both may answer, that body or the upstream's.
 */
export function documentedErrorSchema (schema: unknown): unknown {
  if (schema === RelayedErrorResponseSchema) return { anyOf: [ErrorBodySchema, UpstreamErrorBodySchema] }
  return schema === ErrorResponseSchema ? ErrorBodySchema : schema
}

/** Response schemas for the error statuses a route can answer with. */
export function errorSchemas<const Code extends number> (...codes: Code[]): Record<Code, typeof ErrorResponseSchema> {
  return Object.fromEntries(codes.map(code => [code, ErrorResponseSchema])) as Record<Code, typeof ErrorResponseSchema>
}

/** Response schemas for the error statuses a relay route answers itself and also relays from its upstream. */
export function relayedErrorSchemas<const Code extends number> (
  ...codes: Code[]
): Record<Code, typeof ErrorResponseSchema> {
  const entries = codes.map(code => [code, RelayedErrorResponseSchema])
  return Object.fromEntries(entries) as Record<Code, typeof ErrorResponseSchema>
}
