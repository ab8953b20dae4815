import SerializerSelector from '@fastify/fast-json-stringify-compiler'
import AjvCompiler from '@fastify/ajv-compiler'
import type { FastifyServerOptions } from 'fastify'

type BuildValidators = ReturnType<typeof AjvCompiler>
type ValidatorOptions = Parameters<BuildValidators>[1]

type BuildSerializer = ReturnType<typeof SerializerSelector>
type Serializer = (data: unknown) => string

/**
 * One pool of Ajv instances for every app of the process, keyed by their options and shared schemas
 * (the compiler's own pool key): an app built again with the same options — a test file builds
 * dozens, a host may build several — reuses the validators Ajv already compiled for the same
 * schema objects instead of compiling a hundred routes again.
 */
const build = AjvCompiler()

/**
 * The service's Ajv options, for every route and every GraphQL argument. Every failed rule makes
 * one phrase of the 400 array (docs/api.md#inputs); `verbose` lets the error handler see the
 * schema of a missing property; no coercion: `123` is not a string. The schemas are TypeBox's,
 * checked by the type checker and the tests: checking each one against JSON Schema's meta-schema
 * at start-up cost more CPU than compiling them all.
 */
export const AJV_OPTIONS = {
  customOptions: { allErrors: true, verbose: true, coerceTypes: false, validateSchema: false }
} as const

/** A validator of the app's own pool, with its options: what a route's body is checked with. */
export type Validator = ((value: unknown) => boolean) & { errors?: Array<Record<string, unknown>> | null }

/**
 * Compiles `schema` as the app compiles a body's schema (same Ajv instance, same options), for an
 * input that does not arrive as a route's body: a GraphQL argument.
 */
export function compileValidator (schema: object): Validator {
  const compile = build({}, AJV_OPTIONS as unknown as ValidatorOptions)
  return compile({ schema, httpPart: 'body' } as never) as unknown as Validator
}

/**
 * Validators: bodies exactly as sent (no coercion: `123` is not a string), but query strings and
 * path parameters — always text on the wire — coerced to the types their schemas declare, so
 * `?limit=` is an integer with integer bounds (`limit must be an integer number`) and documented as one.
 */
const buildValidators: BuildValidators = (externalSchemas, options) => {
  const exact = build(externalSchemas, options)
  const coercing = build(externalSchemas, {
    ...options,
    customOptions: { ...options?.customOptions, coerceTypes: true }
  } as ValidatorOptions)
  // Fastify calls a compiler with the route definition ({schema, method, url, httpPart}), though
  // the compiler's own types name only the schema.
  const compile = (route: { httpPart?: string }): ReturnType<ReturnType<BuildValidators>> =>
    (route.httpPart === 'body' ? exact : coercing)(route as never)
  return compile as unknown as ReturnType<BuildValidators>
}

/**
 * Fastify's compilers. Response serializers (fast-json-stringify) are compiled once per schema object rather
 * than once per route and status: every route shares the one error-body schema for its 4xx/5xx
 * answers and many share an entity schema, and each compilation builds an Ajv instance of its
 * own — most of the service's start-up time before this.
 */
const buildDefault: BuildSerializer = SerializerSelector()
/** Serializers by the options and shared schemas they were compiled with, then by schema object (as the validators). */
const serializerPools = new Map<string, WeakMap<object, Serializer>>()

export function schemaCompilers (): NonNullable<FastifyServerOptions['schemaController']> {
  return {
    compilersFactory: {
      buildValidator: buildValidators,
      buildSerializer: (externalSchemas: unknown, options: unknown) => {
        const compile = buildDefault(
          externalSchemas as Parameters<BuildSerializer>[0],
          options as Parameters<BuildSerializer>[1]
        )
        const key = JSON.stringify([externalSchemas, options])
        let compiled = serializerPools.get(key)
        if (compiled === undefined) {
          compiled = new WeakMap<object, Serializer>()
          serializerPools.set(key, compiled)
        }
        return (route: Parameters<typeof compile>[0]) => {
          const schema = route.schema as object
          let serializer = compiled.get(schema)
          if (serializer === undefined) {
            serializer = compile(route) as Serializer
            compiled.set(schema, serializer)
          }
          return serializer
        }
      }
    }
  }
}
