import SerializerSelector from '@fastify/fast-json-stringify-compiler'
import type { FastifyServerOptions } from 'fastify'

type BuildSerializer = ReturnType<typeof SerializerSelector>
type Serializer = (data: unknown) => string

/**
 * Fastify's response serializers (fast-json-stringify), compiled once per schema object rather
 * than once per route and status: every route shares the one error-body schema for its 4xx/5xx
 * answers and many share an entity schema, and each compilation builds an Ajv instance of its
 * own — most of the service's start-up time before this.
 */
export function sharedSerializers (): NonNullable<FastifyServerOptions['schemaController']> {
  const buildDefault: BuildSerializer = SerializerSelector()
  return {
    compilersFactory: {
      buildSerializer: (externalSchemas: unknown, options: unknown) => {
        const compile = buildDefault(externalSchemas as Parameters<BuildSerializer>[0], options as Parameters<BuildSerializer>[1])
        const compiled = new WeakMap<object, Serializer>()
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
