import type { Static, TObject, TSchema } from '@sinclair/typebox'
import type { Access } from '../domain/access.js'
import type { Each } from '../domain/common.js'
import type { Domain } from '../domain/index.js'
import type { Log } from '../domain/ports.js'
import type { Precondition, Tagged } from '../http/entity-tag.js'

/*
 * An operation declared once (docs/style.md, "Adding a route"): its input and output schemas, the
 * credential it takes, its domain call, its REST route and its GraphQL field. The REST route is
 * built from it by src/plugins/operation-routes.ts, the GraphQL field by
 * src/modules/graphql/fields.ts. Declarations know nothing of Fastify or graphql-js: GraphQL is
 * loaded on its first request, and the declarations are imported at start.
 */

/**
 * The credential an operation takes, as its domain method asks the Access (src/domain/access.ts):
 * `portfolio` the one PORTFOLIO_ACCESS names, `api-key` a trusted server's key, `principal` a
 * Bearer token. REST checks it before the body is read; GraphQL names it in the field's description.
 */
export type Scope = 'portfolio' | 'api-key' | 'principal'

/** Each scope's credential in words, as a GraphQL root field's description names it (docs/api.md#credentials). */
export const CREDENTIALS: Record<Scope, string> = {
  portfolio: 'x-api-key, or a user\'s token for its own portfolios: PORTFOLIO_ACCESS',
  'api-key': 'x-api-key: a trusted server\'s',
  principal: 'Bearer token'
}

/** The parts of an input, each a TypeBox schema: REST's path parameters, query and body, or GraphQL's own arguments. */
export interface InputSchemas {
  params?: TObject
  query?: TObject
  body?: TSchema
  args?: TObject
}

type InputOf<In extends InputSchemas> = {
  [Part in keyof In]: In[Part] extends TSchema ? Static<In[Part]> : never
}

/** An input as the builders hand it over, validated by the schemas of its parts. */
export type OperationInput = Partial<Record<'params' | 'query' | 'body' | 'args', unknown>>

/** What a request brings besides its input. */
export interface Call {
  readonly access: Access
  /** The request's logger: the adapters' lines carry its request id. */
  readonly log: Log
  /** REST's `If-Match`, for a route that honours it. */
  readonly ifMatch?: Precondition
  /** GraphQL only: whether the document selects `field` of the answer (REST answers every field). */
  readonly selects?: (field: string) => boolean
}

/**
 * An answer with what REST sends beside its body — an ETag, or a status the domain chose (a
 * create that found the record: 200) — where GraphQL answers the value alone.
 */
export class Answer<T> {
  constructor (readonly value: T, readonly etag?: string, readonly status?: number) {}
}

/** A value read with its tag, answered with it: the tag as REST's `ETag`. */
export function tagged<T> ({ value, etag }: Tagged<T>): Answer<T> {
  return new Answer(value, etag)
}

/** `params.id`, `query.limit`, `body`…: where in the input a GraphQL argument goes. */
type InputPath<In extends InputSchemas> =
  | (In['body'] extends TSchema ? 'body' : never)
  | { [Part in 'params' | 'query' | 'args']: In[Part] extends TObject
    ? `${Part}.${keyof In[Part]['properties'] & string}`
    : never }['params' | 'query' | 'args']

/** A GraphQL argument: the input path it fills, with GraphQL's default if any (REST leaves defaults to the domain). */
type Argument<In extends InputSchemas> = InputPath<In> | { path: InputPath<In>, default: unknown }

/**
 * The cost of a field in the GraphQL document's budget (GRAPHQL_MAX_COST), beside 1 for a plain
 * field: what it asks of the provider or the store, or for a list an estimate of its items, each
 * costing its selection.
 */
type Cost = number | { items: number }

interface GraphqlFieldBase {
  /** When it answers null or false; a root field's ends with the credential its scope names. */
  description: string
  /** A NOT_FOUND answers `null`, without an error (docs/api.md#graphql). */
  nullable?: true
  cost?: Cost
  /** The type GraphQL answers when it shows less of the output than REST (a schema the output satisfies). */
  output?: TSchema
}

interface Rooted<In extends InputSchemas> extends GraphqlFieldBase {
  args?: Record<string, Argument<In>>
  /** `limit` (GraphQL's default 100) and `offset`, into the query. */
  paged?: true
  /**
   * The domain's own input rules beyond the schemas (an amount's decimals): a mutation's are run
   * before any field of its document runs, as REST's body fails before anything is written.
   */
  check?: (input: InputOf<In>) => unknown
  /** What the credential allows beyond its name, in the description: `a client only its own items`. */
  credential?: string
}

type RootField<In extends InputSchemas> = Rooted<In> & ({ query: string } | { mutation: string })

interface SubscriptionField<In extends InputSchemas, Event, Value> extends Rooted<In> {
  subscription: string
  /** Each event as the subscription answers it (it may throw: the error is the message, then the end). */
  each?: (event: Event) => Value
}

/** A field of an object type: its parent's `id` is the input's `params.id`, or it is computed `from` the parent. */
interface ObjectField<In extends InputSchemas, Of extends TObject, Value> extends GraphqlFieldBase {
  field: string
  of: Of
  args?: Record<string, Argument<In>>
  from?: (parent: Static<Of>) => Value
}

/** A REST route: its method and path under the module's prefix, and what its OpenAPI entry says. */
export interface RestRoute {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE'
  url: string
  operationId: string
  summary: string
  description: string
  /** The error statuses it answers itself (the standard body), beside what any route may answer. */
  errors: readonly number[]
  /** Its success status, 200 unless said; a second one when the domain may choose it (an Answer's status). */
  status?: number | readonly [number, number]
  /** The schema REST serializes when it shows less of the output than GraphQL (a create's answer). */
  output?: TSchema
  /** Conditional requests and Idempotency-Key (src/plugins/conditional-requests.ts, idempotency.ts). */
  idempotent?: true
  entityTag?: true
  ifMatch?: true
  /** No cache keeps it (sensible's `preventCache`): it carries the principal's claims. */
  preventCache?: true
}

interface Declaration<In extends InputSchemas, Out extends TSchema, Of extends TObject> {
  input: In
  output: Out
  scope: Scope
  run: (domain: Domain, call: Call, input: InputOf<In>) => Promise<Static<Out> | Answer<Static<Out>>>
  rest?: RestRoute
  graphql?: RootField<In> | ObjectField<In, Of, Static<Out>>
}

interface StreamDeclaration<In extends InputSchemas, Out extends TSchema, Event> {
  input: In
  /** Each message's value. */
  output: Out
  scope: Scope
  run: (domain: Domain, call: Call, input: InputOf<In>) => Promise<AsyncIterator<Event>>
  graphql: SubscriptionField<In, Event, Static<Out>>
}

/** A GraphQL field answered for many parents (or root fields) at once: one domain call per document. */
interface BatchedDeclaration<Item, Out extends TSchema> {
  scope: Scope
  output: Out
  /** A NOT_FOUND item is `null` when the field is nullable; each answer is in the order of `items`. */
  batch: (domain: Domain, call: Call, items: Item[]) => Promise<Array<Each<Static<Out>>>>
}

/** What the builders read of a declaration, whatever its types. */
export interface Operation {
  readonly input: InputSchemas
  readonly output: TSchema
  readonly scope: Scope
  readonly run?: (domain: Domain, call: Call, input: OperationInput) => Promise<unknown>
  readonly batch?: (domain: Domain, call: Call, items: unknown[]) => Promise<unknown[]>
  readonly rest?: RestRoute
  readonly graphql?: GraphqlField
}

/** A declaration's GraphQL field as the builder reads it. */
export type GraphqlField = GraphqlFieldBase & Omit<Rooted<InputSchemas>, 'check' | 'args'> & {
  args?: Record<string, string | { path: string, default: unknown }>
  check?: (input: OperationInput) => unknown
  query?: string
  mutation?: string
  subscription?: string
  each?: (event: unknown) => unknown
  field?: string
  of?: TObject
  from?: (parent: unknown) => unknown
}

/**
 * An operation, checked where it is written — its domain call against its input and output
 * schemas, its GraphQL arguments against its input's paths — and handed to the builders as an
 * {@link Operation}.
 */
export function operation<In extends InputSchemas, Out extends TSchema, Of extends TObject = TObject> (
  declaration: Declaration<In, Out, Of>
): Operation {
  return declaration as unknown as Operation
}

/** A stream of values: a GraphQL subscription. */
export function stream<In extends InputSchemas, Out extends TSchema, Event> (
  declaration: StreamDeclaration<In, Out, Event>
): Operation {
  return declaration as unknown as Operation
}

/** A batched field of an object type: `batch` gets the parents (it takes no arguments). */
export function batched<Of extends TObject, Out extends TSchema> (
  declaration: BatchedDeclaration<Static<Of>, Out> & {
    graphql: Omit<ObjectField<InputSchemas, Of, never>, 'from' | 'args'>
  }
): Operation
/** A batched root field (every alias of a document in one call): `batch` gets each one's input. */
export function batched<In extends InputSchemas, Out extends TSchema> (
  declaration: BatchedDeclaration<InputOf<In>, Out> & { input: In, graphql: RootField<In> }
): Operation
export function batched (declaration: BatchedDeclaration<never, TSchema> & { input?: InputSchemas }): Operation {
  return { input: {}, ...declaration } as unknown as Operation
}
