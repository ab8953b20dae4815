import SerializerSelector from '@fastify/fast-json-stringify-compiler'
import AjvCompiler from '@fastify/ajv-compiler'
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifySchemaCompiler, FastifySerializerCompiler } from 'fastify'
import type { Static, TSchema } from '@sinclair/typebox'
import { ValidationError, type ValidationIssue } from '../errors.js'

type ValidatorOptions = Parameters<ReturnType<typeof AjvCompiler>>[1]
type Serializer = (data: unknown) => string

/**
 * The service's Ajv options, for every route and every GraphQL argument. Every failed rule makes
 * one phrase of the 400 array (docs/api.md#inputs); `verbose` lets the error handler see the
 * schema of a missing property; no coercion: `123` is not a string. The schemas are TypeBox's,
 * checked by the type checker and the tests: checking each one against JSON Schema's meta-schema
 * at start-up cost more CPU than compiling them all.
 */
const AJV_OPTIONS = {
  customOptions: { allErrors: true, verbose: true, coerceTypes: false, validateSchema: false }
} as const

/**
 * One Ajv instance per set of options for the whole process (the compiler's own pool): an app
 * built again — a test file builds dozens, a host may build several, every module mounted in a
 * host has its own scope — reuses the validators Ajv already compiled for the same schema objects
 * instead of compiling a hundred routes again. No shared schemas (`addSchema`): the service's
 * schemas are whole objects, shared by importing them.
 */
const build = AjvCompiler()
const exact = build({}, AJV_OPTIONS as unknown as ValidatorOptions)
const coercing = build({}, {
  ...AJV_OPTIONS,
  customOptions: { ...AJV_OPTIONS.customOptions, coerceTypes: true }
} as unknown as ValidatorOptions)

/** A validator of the app's own pool, with its options: what a route's body is checked with. */
type Validator = ((value: unknown) => boolean) & { errors?: Array<Record<string, unknown>> | null }

/**
 * Compiles `schema` as the app compiles a body's schema (same Ajv instance, same options), for an
 * input that does not arrive as a route's body: a GraphQL argument. The check answers the value,
 * or throws the ValidationError a route's body would, its phrases under `root` (`input.name …`).
 */
export function compileCheck<S extends TSchema> (schema: S, root: string): (value: unknown) => Static<S> {
  const validate = exact({ schema, httpPart: 'body' } as never) as unknown as Validator
  return value => {
    if (!validate(value)) throw new ValidationError(root, (validate.errors ?? []) as unknown as ValidationIssue[])
    return value as Static<S>
  }
}

/**
 * A route's validator or serializer, compiled the first time a request needs it rather than while
 * the app starts: compiling the 460 validators and serializers was a fifth of the start-up CPU
 * (main thread to the first answer, medians of alternated starts: 670–700 ms compiled at start,
 * 560–580 ms on first use; BENCHMARKS.md), most of it for routes and error statuses an instance
 * may never answer. The
 * wrapper adds one call per use; `errors` is the compiled validator's (Fastify reads it after a
 * failed validation). Each is listed in `uncompiled` too, for {@link compileEverySchema}.
 */
function onFirstUse<F extends (value: unknown) => unknown> (compile: () => F, uncompiled: Array<() => unknown>): F {
  let compiled: F | undefined
  const compileOnce = (): F => (compiled ??= compile())
  const use = ((value: unknown) => compileOnce()(value)) as F
  Object.defineProperty(use, 'errors', { get: () => (compiled as Validator | undefined)?.errors })
  uncompiled.push(compileOnce)
  return use
}

/**
 * Every route's validators: bodies exactly as sent, but query strings and path parameters — always
 * text on the wire — coerced to the types their schemas declare, so `?limit=` is an integer with
 * integer bounds (`limit must be an integer number`) and documented as one. The service's own
 * options, whatever the app's `ajv` server option says: a module mounted in a host validates as
 * it does in the service. Fastify calls a compiler with the route definition ({schema, method,
 * url, httpPart}), though the compiler's own types name only the schema.
 */
const validatorCompiler = (uncompiled: Array<() => unknown>) => ((route: { httpPart?: string }) => {
  const compile = route.httpPart === 'body' ? exact : coercing
  return onFirstUse(() => compile(route as never) as unknown as Validator, uncompiled)
}) as unknown as FastifySchemaCompiler<unknown>

/**
 * Response serializers (fast-json-stringify, its default options), compiled once per schema object
 * rather than once per route and status: every route shares the one error-body schema for its
 * 4xx/5xx answers and many share an entity schema, and each compilation builds an Ajv instance of
 * its own — most of the service's start-up time before this.
 */
const compileSerializer = SerializerSelector()({}, undefined) as unknown as (route: { schema: object }) => Serializer
const serializers = new WeakMap<object, Serializer>()
const serializerCompiler = (uncompiled: Array<() => unknown>) => ((route: { schema: object }) => onFirstUse(() => {
  let serializer = serializers.get(route.schema)
  if (serializer === undefined) {
    serializer = compileSerializer(route)
    serializers.set(route.schema, serializer)
  }
  return serializer
}, uncompiled)) as unknown as FastifySerializerCompiler<unknown>

const NAME = 'bff-schema-compilers'

/**
 * The one place an encapsulation context is given the compilers: the app's root (this plugin, as
 * buildApp registers it) or a module's own scope in a host ({@link ensureSchemaCompilers}).
 */
function useSchemaCompilers (app: FastifyInstance): void {
  const uncompiled: Array<() => unknown> = []
  notYetCompiled.set(app, uncompiled)
  app.setValidatorCompiler(validatorCompiler(uncompiled))
  app.setSerializerCompiler(serializerCompiler(uncompiled))
}

const notYetCompiled = new WeakMap<FastifyInstance, Array<() => unknown>>()

/**
 * Compiles now every validator and serializer of the routes `app` has (after `ready()`), as their
 * first requests would: the tests prove with it that every schema of the service compiles.
 * Returns how many there are; throws as the first bad one does.
 * @internal Test seam: the tests compile every schema with it.
 */
export function compileEverySchema (app: FastifyInstance): number {
  const uncompiled = notYetCompiled.get(app) ?? []
  for (const compile of uncompiled) compile()
  return uncompiled.length
}

/** The service's validator and serializer compilers for every route of the app. Register before any route. */
export default fp(async app => { useSchemaCompilers(app) }, { name: NAME, fastify: '5.x' })

/** Gives a module's scope the service's compilers, unless the app has them at its root already. */
export function ensureSchemaCompilers (app: FastifyInstance): void {
  if (!app.hasPlugin(NAME)) useSchemaCompilers(app)
}
