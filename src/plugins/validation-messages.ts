import type { FastifySchemaValidationError } from 'fastify'

/**
 * The 400 wording (docs/api.md#inputs): each failed rule of a body, query or path schema as one
 * phrase in class-validator's words, from one keyword-to-wording table.
 */

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
    case 'formatMinimum':
      // class-validator's MinDate and MaxDate (a date's bounds, checked by the domain).
      return [`minimal allowed date for ${propertyName(issue.instancePath, root)} is ${String(params.limit)}`]
    case 'formatMaximum':
      return [`maximal allowed date for ${propertyName(issue.instancePath, root)} is ${String(params.limit)}`]
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
