import {
  GraphQLBoolean,
  GraphQLEnumType,
  GraphQLFloat,
  GraphQLID,
  GraphQLInputObjectType,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLScalarType,
  GraphQLString,
  type GraphQLFieldConfig,
  type GraphQLFieldConfigMap,
  type GraphQLInputFieldConfigMap,
  type GraphQLInputType,
  type GraphQLNullableType,
  type GraphQLOutputType
} from 'graphql'
import { OptionalKind, type TObject, type TSchema } from '@sinclair/typebox'

/** What this converter reads of a JSON Schema (TypeBox's output). */
interface JsonSchema {
  type?: string | string[]
  title?: string
  description?: string
  enum?: unknown[]
  const?: unknown
  anyOf?: JsonSchema[]
  items?: JsonSchema
  properties?: Record<string, JsonSchema>
  required?: string[]
  additionalProperties?: unknown
  maximum?: number
  [OptionalKind]?: string
}

/** The largest GraphQL `Int` (a signed 32-bit integer): a larger integer is a `Float`. */
const MAX_GRAPHQL_INT = 2 ** 31 - 1

/** An object GraphQL cannot type field by field (a token's claims): passed through as JSON. */
const JsonObjectScalar = new GraphQLScalarType({
  name: 'JSONObject',
  description: 'A JSON object, as the REST API answers it',
  serialize: value => value
})

function capitalized (text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1)
}

/** Ids are GraphQL `ID`s: `id`, `userId`, `client_id`… */
function isIdName (name: string): boolean {
  return name === 'id' || /(?:Id|_id)$/.test(name)
}

/** The union's non-null branch, and whether `null` was one of its branches. */
function withoutNull (schema: JsonSchema): { schema: JsonSchema, nullable: boolean } {
  const branches = schema.anyOf
  if (branches === undefined) return { schema, nullable: false }
  const others = branches.filter(branch => branch.type !== 'null')
  if (others.length === 1 && others.length < branches.length) {
    return { schema: { ...others[0], description: schema.description ?? others[0]?.description }, nullable: true }
  }
  return { schema, nullable: false }
}

/** String values of an enum: `enum: [...]`, a union of string literals, or one literal. */
function enumValues (schema: JsonSchema): string[] | undefined {
  const strings = (values: unknown[]): boolean => values.every(value => typeof value === 'string')
  if (Array.isArray(schema.enum) && strings(schema.enum)) return schema.enum as string[]
  if (typeof schema.const === 'string') return [schema.const]
  const literals = schema.anyOf?.map(branch => branch.const)
  if (literals !== undefined && literals.length > 1 && strings(literals)) return literals as string[]
  return undefined
}

/**
 * GraphQL types from the TypeBox schemas REST validates and serializes with, so one model
 * describes both interfaces: field names, nullability, enums and descriptions (the OpenAPI
 * document's) all come from there. A titled schema becomes a type of that name, once; an
 * untitled nested object is named after its parent and field. `Context` is the resolvers'.
 */
export class TypeBoxToGraphql<Context = unknown> {
  private readonly named = new Map<string, GraphQLNullableType>()
  /** Object types by their schema: one named otherwise than its title (`Principal` for `Me`) is found by it. */
  private readonly ofSchema = new WeakMap<TObject, GraphQLObjectType>()
  private readonly enumNames: Record<string, readonly string[]>

  /**
   * `enumNames`: the GraphQL name of each enum, by its values (JSON Schema enums have no name of
   * their own); `enums`: enums made beforehand, whose GraphQL names differ from their values.
   */
  constructor (enumNames: Record<string, readonly string[]> = {}, enums: readonly GraphQLEnumType[] = []) {
    this.enumNames = { ...enumNames }
    for (const type of enums) {
      this.named.set(type.name, type)
      this.enumNames[type.name] = type.getValues().map(value => String(value.value))
    }
  }

  /** An object type from an object schema, with extra fields (relations, computed values) added. */
  objectType<Source = unknown> (
    schema: TObject,
    extraFields: () => GraphQLFieldConfigMap<Source, Context> = () => ({}),
    name = schema.title
  ): GraphQLObjectType<Source, Context> {
    if (name === undefined) throw new Error('an object type needs a title')
    const known = this.ofSchema.get(schema) ?? this.named.get(name)
    if (known !== undefined) return known as GraphQLObjectType<Source, Context>
    const type = new GraphQLObjectType<Source, Context>({
      name,
      description: (schema as JsonSchema).description,
      fields: () => ({
        ...this.outputFields(schema as JsonSchema, name) as GraphQLFieldConfigMap<Source, Context>,
        ...extraFields()
      })
    })
    this.named.set(name, type)
    this.ofSchema.set(schema, type as GraphQLObjectType)
    return type
  }

  /** An argument's type from the schema of what it fills (a path parameter, a query parameter, a body). */
  argumentType (schema: TSchema, name: string, required: boolean): GraphQLInputType {
    const { schema: inner, nullable } = withoutNull(schema as JsonSchema)
    const base = this.input(inner, capitalized(name), name)
    return required && !nullable ? new GraphQLNonNull(base) : base
  }

  /** An input type from a body schema (`CreatePortfolioInput`…): optional properties are nullable. */
  inputType (schema: TObject, name = schema.title): GraphQLInputObjectType {
    if (name === undefined) throw new Error('an input type needs a title')
    const known = this.named.get(name)
    if (known !== undefined) return known as GraphQLInputObjectType
    const json = schema as JsonSchema
    const required = new Set(json.required ?? [])
    const type = new GraphQLInputObjectType({
      name,
      description: json.description,
      fields: () => {
        const fields: GraphQLInputFieldConfigMap = {}
        for (const [field, property] of Object.entries(json.properties ?? {})) {
          const { schema: inner, nullable } = withoutNull(property)
          const base = this.input(inner, `${name}${capitalized(field)}`, field)
          const type = required.has(field) && !nullable ? new GraphQLNonNull(base) : base
          fields[field] = { type, description: property.description }
        }
        return fields
      }
    })
    this.named.set(name, type)
    return type
  }

  private enumName (values: readonly string[]): string | undefined {
    const key = [...values].sort().join()
    return Object.entries(this.enumNames).find(([, named]) => [...named].sort().join() === key)?.[0]
  }

  private outputFields (schema: JsonSchema, parentName: string): GraphQLFieldConfigMap<unknown, Context> {
    const fields: GraphQLFieldConfigMap<unknown, Context> = {}
    const required = new Set(schema.required ?? [])
    for (const [field, property] of Object.entries(schema.properties ?? {})) {
      fields[field] = this.outputField(property, `${parentName}${capitalized(field)}`, field, required.has(field))
    }
    return fields
  }

  private outputField (
    property: JsonSchema, nameIfObject: string, field: string, required: boolean
  ): GraphQLFieldConfig<unknown, Context> {
    const { schema, nullable } = withoutNull(property)
    const base = this.output(schema, nameIfObject, field)
    return { type: required && !nullable ? new GraphQLNonNull(base) : base, description: property.description }
  }

  private output (schema: JsonSchema, nameIfObject: string, field: string): GraphQLOutputType & GraphQLNullableType {
    if (schema.type === 'object') {
      // Declared properties are typed, extra ones (a token's custom claims) left out; no properties at all is JSON.
      if (Object.keys(schema.properties ?? {}).length === 0) return JsonObjectScalar
      return this.objectType(schema as TObject, undefined, schema.title ?? nameIfObject)
    }
    if (schema.type === 'array' && schema.items !== undefined) {
      const { schema: item, nullable } = withoutNull(schema.items)
      const itemType = this.output(item, nameIfObject, field)
      return new GraphQLList(nullable ? itemType : new GraphQLNonNull(itemType))
    }
    return this.leaf(schema, field) as GraphQLOutputType & GraphQLNullableType
  }

  private input (schema: JsonSchema, nameIfObject: string, field: string): GraphQLInputType & GraphQLNullableType {
    if (schema.type === 'object') return this.inputType(schema as TObject, schema.title ?? nameIfObject)
    if (schema.type === 'array' && schema.items !== undefined) {
      return new GraphQLList(new GraphQLNonNull(this.input(schema.items, nameIfObject, field)))
    }
    return this.leaf(schema, field) as GraphQLInputType & GraphQLNullableType
  }

  /** Scalars and enums: an enum is named in `enumNames` by its values, so it has one name wherever it is used. */
  private leaf (schema: JsonSchema, field: string): GraphQLNullableType {
    const values = enumValues(schema)
    const name = values === undefined ? undefined : this.enumName(values)
    if (values !== undefined && name !== undefined) return this.enumType(name, values, schema.description)
    // `sub`: a JSON integer or a string, as tymon's versions write it; an ID serializes both.
    const idLike = schema.anyOf?.every(branch => branch.type === 'string' || branch.type === 'integer') === true
    if (idLike) return GraphQLID
    switch (Array.isArray(schema.type) ? schema.type[0] : schema.type) {
      case 'integer': return (schema.maximum ?? 0) > MAX_GRAPHQL_INT ? GraphQLFloat : GraphQLInt
      case 'number': return GraphQLFloat
      case 'boolean': return GraphQLBoolean
      case 'string': return isIdName(field) ? GraphQLID : GraphQLString
      default:
        if (values !== undefined || typeof schema.const === 'string') return GraphQLString
        throw new Error(`no GraphQL type for the schema of ${field}`)
    }
  }

  private enumType (name: string, values: string[], description: string | undefined): GraphQLEnumType {
    const known = this.named.get(name)
    if (known !== undefined) return known as GraphQLEnumType
    const type = new GraphQLEnumType({
      name,
      description,
      values: Object.fromEntries(values.map(value => [value, { value }]))
    })
    this.named.set(name, type)
    return type
  }
}
