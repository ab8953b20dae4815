import { Type, type TObject, type TSchema } from '@sinclair/typebox'
import { compileCheck } from '../../plugins/schema-compilers.js'
import type { InputSchemas, OperationInput } from '../../operations/operation.js'

type Args = Record<string, unknown>
type Part = 'params' | 'query' | 'args'

/** Where a GraphQL argument goes: the whole body, or one property of a part. */
export type ArgumentPath = { name: string, part: 'body' } | { name: string, part: Part, key: string }

/**
 * Reads a field's arguments into its operation's input, each part checked with the REST route's
 * schema: the body under the argument's name (`input.name must…`), a query string as `query` with
 * a null argument absent, as in REST. A path parameter that is an id (`unchecked`) is the
 * domain's to find: one that names nothing is NOT_FOUND, answered null or false, as REST's is 404.
 * Undefined when the field has no argument.
 */
export function inputReader (
  input: InputSchemas, paths: readonly ArgumentPath[], unchecked: ReadonlySet<string>
): ((args: Args) => OperationInput) | undefined {
  if (paths.length === 0) return undefined
  const checks: Array<(read: OperationInput, args: Args) => void> = []
  const parts = new Map<Part, Array<[name: string, key: string]>>()
  for (const path of paths) {
    if (path.part === 'body') {
      const check = compileCheck(input.body as TSchema, path.name)
      checks.push((read, args) => { read.body = check(args[path.name]) })
      continue
    }
    parts.set(path.part, [...parts.get(path.part) ?? [], [path.name, path.key]])
  }
  for (const [part, entries] of parts) {
    const schema = input[part] as TObject
    // What its arguments fill, a path's ids left out; a field of a type has its id from its parent.
    const keys = entries.map(([, key]) => key).filter(key => part !== 'params' || !unchecked.has(key))
    const whole = keys.length === Object.keys(schema.properties).length
    const check = keys.length === 0 ? undefined : compileCheck(whole ? schema : Type.Pick(schema, keys), part)
    checks.push((read, args) => {
      const value: Args = {}
      for (const [name, key] of entries) {
        // A nullable argument left null is absent, as a filter REST was not sent.
        if (args[name] !== null && args[name] !== undefined) value[key] = args[name]
      }
      read[part] = check === undefined ? value : check(value)
    })
  }
  return args => {
    const read: OperationInput = {}
    for (const check of checks) check(read, args)
    return read
  }
}
