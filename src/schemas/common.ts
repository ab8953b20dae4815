import {
  Type, type ArrayOptions, type Static, type TArray, type TObject, type TSchema, type TString
} from '@sinclair/typebox'

/**
 * Timestamps leave the service as ISO 8601 UTC with milliseconds and `Z`, as JavaScript writes
 * them: 24 characters (docs/api.md#identifiers-and-timestamps).
 */
const TIMESTAMP = { format: 'date-time', maxLength: 24 } as const
export const Timestamp = Type.String(TIMESTAMP)

/** A timestamp with what it is the time of. */
export function TimestampOf (description: string): TString {
  return Type.String({ ...TIMESTAMP, description })
}

/**
 * A duration as src/domain/time.ts writes it (`1h 5m 3s`, `42s`); a token's lifetime at most, so
 * at most 10 digits of hours.
 */
export const DURATION_PATTERN = '(\\d{1,10}h )?(\\d{1,2}m )?\\d{1,2}s'
export const DurationSchema = Type.String({ pattern: `^${DURATION_PATTERN}$`, maxLength: 20 })
/** A time measured in milliseconds, as `/ready` and the backend's health report it (`12ms`). */
export const MillisecondsSchema = Type.String({ pattern: '^\\d{1,16}ms$', maxLength: 18 })

/** A day, `YYYY-MM-DD`. */
export const DaySchema = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', maxLength: 10 })
/** A calendar month, `YYYY-MM`. */
export const MonthSchema = Type.String({ pattern: '^\\d{4}-\\d{2}$', maxLength: 7 })

/**
 * A required text of 1…max characters that is not blank (docs/api.md#inputs); inputs are trimmed
 * by the domain services (src/domain) before they reach the store. The `\S` pattern is worded
 * "should not be empty" by the error handler.
 */
export function NonBlankString (maxLength: number): TString {
  return Type.String({ minLength: 1, maxLength, pattern: '\\S' })
}

/** A string enum as one JSON-Schema `enum`, so a bad value gets one "must be one of" phrase. */
export function StringEnum<const T extends readonly string[]> (values: T) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values] })
}

/**
 * The longest id a record can have (docs/api.md#inputs): a longer one names nothing, so it is
 * NOT_FOUND without being looked up — never a database error. REST's params fail the schema's
 * `maxLength`, which the error handler answers as 404; the domain's services check it for GraphQL.
 */
export const MAX_ID_LENGTH = 64

/**
 * The longest text a request's path parameter or header can hold: the router answers 404 for a
 * longer path parameter (`maxParamLength`), Node 431 for headers over 16 KiB together.
 */
export const MAX_REQUEST_TEXT_LENGTH = 16 * 1024

/** A record's id, as a path parameter or a reference in a body or query. */
export const IdSchema = Type.String({ minLength: 1, maxLength: MAX_ID_LENGTH })

/** A record's id in an answer: one the service made (a UUID) or, for a reference, one it accepted (IdSchema). */
export function RecordId (description?: string): TString {
  return Type.String({ minLength: 1, maxLength: MAX_ID_LENGTH, ...(description === undefined ? {} : { description }) })
}

/**
 * A text of an answer that was validated on its way in: at most the `maxLength` its input had
 * (names and owners 200 characters, descriptions and reasons 2000: docs/api.md#inputs).
 */
export function StoredText (maxLength: number, description?: string): TString {
  return Type.String({ maxLength, ...(description === undefined ? {} : { description }) })
}

export const IdParamsSchema = Type.Object({ id: IdSchema })

/** An aggregator item's id (Pluggy's are UUIDs): REST's `itemId` and GraphQL's `aggregatorItem(itemId:)`. */
export const ItemIdSchema = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9-]+$' })

/** `{message, id}` of the delete routes. */
export const DeletedSchema = Type.Object({
  message: Type.String({ maxLength: 200, description: 'What was removed, for people' }),
  id: RecordId('The removed record\'s id')
}, { title: 'Deleted' })

/** A page of a list: at most MAX_PAGE_SIZE items (a query's `limit`). */
export function PageOf<T extends TSchema> (items: T, options: ArrayOptions = {}): TArray<T> {
  return Type.Array(items, { maxItems: MAX_PAGE_SIZE, ...options })
}

/** Every list is bounded (docs/api.md#inputs): `limit` 1…1000 (default 1000), `offset` from 0. */
export const PageQuerySchema = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'Page size (default 1000)' })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000, description: 'Items to skip (default 0)' }))
})

export interface Page {
  limit: number
  offset: number
}

export const MAX_PAGE_SIZE = 1000

export function pageOf (query: { limit?: number, offset?: number }): Page {
  return { limit: query.limit ?? MAX_PAGE_SIZE, offset: query.offset ?? 0 }
}

/**
 * The fields of an object schema, in its order: what follows from a schema's properties (a table's columns,
 * src/store/columns.ts; the live valuation's change check) is derived from this list, never kept beside it.
 */
export function fieldsOf<Schema extends TObject> (schema: Schema): Array<keyof Static<Schema> & string> {
  return Object.keys(schema.properties) as Array<keyof Static<Schema> & string>
}

/**
 * An update body that must name at least one of its properties (docs/api.md#inputs): a PATCH that
 * would change nothing is 400 `at least one of … must be provided`, not a silent 200.
 */
export function AtLeastOneOf<T extends TObject> (schema: T): T {
  return { ...schema, anyOf: Object.keys(schema.properties).map(name => ({ required: [name] })) }
}

/** `value` trimmed, keeping `null` and `undefined` as they are (optional and nullable texts). */
export function trimmed<T extends string | null | undefined> (value: T): T {
  return (typeof value === 'string' ? value.trim() : value) as T
}

/** A validated input's fields of `schema`, each text trimmed (docs/api.md#inputs), absent fields left absent. */
export function trimmedInput<Schema extends TObject> (schema: Schema, input: Static<Schema>): Static<Schema> {
  const fields: Record<string, unknown> = {}
  for (const field of fieldsOf(schema)) {
    const value: unknown = input[field]
    // `trimmed` keeps any value but a text as it is.
    if (value !== undefined) fields[field] = trimmed(value as string | null)
  }
  return fields as Static<Schema>
}

/**
 * A relayed answer: the upstream's status and body, as received (docs/api.md#relays). Never
 * serialized (the relay sends the upstream's bytes); the OpenAPI document shows it as
 * {@link RelayedJsonSchema}, or for a 4xx {@link RelayedBodySchema} or {@link RelayedTextSchema}.
 */
export const UpstreamBodySchema = Type.Unknown({ description: 'The upstream body, as received' })

/** An upstream's JSON object relayed as received, for the OpenAPI document: a type client generators can name. */
export const RelayedBodySchema = Type.Object({}, {
  title: 'RelayedBody',
  additionalProperties: true,
  description: 'The upstream\'s own JSON object, relayed byte for byte with its fields and types ' +
    '(Pluggy\'s `{code: 403, message, …}`, Laravel\'s `{message, errors}`…); the service\'s own ErrorBody has a ' +
    'string `code`'
})

/** Any JSON an upstream answered a relay with: most often an object, a list or nothing at all being possible. */
export const RelayedJsonSchema = Type.Union([
  RelayedBodySchema,
  Type.Array(Type.Unknown()),
  Type.String(),
  Type.Number(),
  Type.Boolean(),
  Type.Null()
], {
  title: 'RelayedJson',
  description: 'The upstream\'s own JSON, relayed byte for byte: most often an object (RelayedBody), ' +
    'possibly a list or a single value; no body at all when the upstream sent none (204, 304)'
})

/** An upstream's answer with an error status that is not JSON, relayed as received with its own content type. */
export const RelayedTextSchema = Type.String({
  title: 'RelayedText',
  description: 'The upstream\'s own answer with an error status when it is not JSON (plain text, an HTML page), ' +
    'relayed byte for byte with its own Content-Type'
})
