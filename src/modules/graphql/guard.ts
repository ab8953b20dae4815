import { GraphQLError, Kind, visit, type DocumentNode, type GraphQLSchema } from 'graphql'
import {
  fieldExtensionsEstimator, getComplexity, simpleEstimator, type ComplexityEstimator, type ComplexityEstimatorArgs
} from 'graphql-query-complexity'
import { QueryRefusedError } from '../../plugins/graphql-errors.js'

/**
 * The cost of a list field (graphql-query-complexity's `complexity` extension): 1, plus its
 * selection's cost for each item it stands for — the page its `limit` asks for, else `items`,
 * an estimate. Other fields cost their `complexity` (1 unless the schema says more: a quote asks
 * a provider, a dashboard several) plus their selection's.
 */
export function listCost (items: number): (field: ComplexityEstimatorArgs) => number {
  return ({ args, childComplexity }) => 1 + (typeof args.limit === 'number' ? args.limit : items) * childComplexity
}

/** Fields whose arguments have rules beyond their GraphQL types (fields.ts), by parent type: each throws if broken. */
export type ArgumentRules = Record<string, Record<string, (args: Record<string, unknown>) => unknown>>

/** What is known of a document: the variables its checks read, and the values that passed. */
interface DocumentChecks {
  variables: string[]
  operations: number
  passed: Set<string>
}

/** Checks remembered per document, one per set of values of the variables they read. */
const CHECKS_PER_DOCUMENT = 64

/**
 * Refuses, before anything runs, an operation with an invalid argument — every failure of every
 * field it would run (`@skip`/`@include` applied, fragments spread), with the REST routes'
 * phrases — or whose estimated cost is over `maxCost` (GRAPHQL_MAX_COST). One walk of
 * graphql-query-complexity does both: its estimators see each field's coerced arguments.
 *
 * A document's outcome is remembered for the values of the variables it depends on (page sizes,
 * directives' conditions, ruled fields' arguments), not for every `id`. Measured on the
 * benchmark's `portfolio(id:)` query (medians of five rounds of 20 000 calls): the walk costs
 * 38 µs a request, where `npm run bench` finds 322 µs of CPU for the whole request; remembered, 0.3 µs.
 */
export class OperationGuard {
  private readonly checked = new WeakMap<DocumentNode, DocumentChecks>()
  private readonly ruledNames: ReadonlySet<string>

  constructor (
    private readonly schema: GraphQLSchema, private readonly maxCost: number, private readonly rules: ArgumentRules
  ) {
    this.ruledNames = new Set(Object.values(rules).flatMap(fields => Object.keys(fields)))
  }

  assertAllowed (document: DocumentNode, variables: Record<string, unknown> = {}, operationName?: string): void {
    let known = this.checked.get(document)
    if (known === undefined) {
      const operations = document.definitions.filter(definition => definition.kind === Kind.OPERATION_DEFINITION)
      known = { variables: this.readVariables(document), operations: operations.length, passed: new Set() }
      this.checked.set(document, known)
    }
    // The name chooses among several operations; a single one runs whatever the request names.
    if (known.operations === 1) operationName = undefined
    // A variable left out (its default applies) and one given as null check differently.
    const key = JSON.stringify([operationName, ...known.variables.map(name =>
      Object.hasOwn(variables, name) ? [variables[name]] : [])])
    if (known.passed.has(key)) return
    const cost = this.check(document, variables, operationName)
    if (cost > this.maxCost) {
      const limits = { cost, maxCost: this.maxCost }
      throw new QueryRefusedError(`query cost ${cost} exceeds the limit of ${this.maxCost}`, limits)
    }
    if (known.passed.size >= CHECKS_PER_DOCUMENT) known.passed.clear()
    known.passed.add(key)
  }

  /** The operation's cost, once every argument it would run is valid. */
  private check (document: DocumentNode, variables: Record<string, unknown>, operationName?: string): number {
    const failures: GraphQLError[] = []
    const checkArguments: ComplexityEstimator = ({ type, field, node, args }) => {
      const rule = this.rules[type.name]?.[field.name]
      try {
        rule?.(args)
      } catch (error) {
        failures.push(new GraphQLError((error as Error).message, { nodes: [node], originalError: error as Error }))
      }
    }
    let cost: number
    try {
      const estimators = [checkArguments, fieldExtensionsEstimator(), simpleEstimator()]
      cost = getComplexity({ schema: this.schema, query: document, variables, operationName, estimators })
    } catch (error) {
      // A variable's value its type refuses is the caller's input; a document too large to price is refused.
      if (!(error instanceof GraphQLError) || /number of nodes/.test(error.message)) {
        throw new QueryRefusedError((error as Error).message, {})
      }
      throw refusal([error])
    }
    if (failures.length > 0) throw refusal(failures)
    return cost
  }

  /** Variables the checks read: in a ruled field's arguments (page sizes among them) or a directive. */
  private readVariables (document: DocumentNode): string[] {
    const names = new Set<string>()
    const collect = { Variable: (node: { name: { value: string } }) => { names.add(node.name.value) } }
    visit(document, {
      Field: node => {
        for (const argument of node.arguments ?? []) {
          if (this.ruledNames.has(node.name.value)) visit(argument, collect)
        }
      },
      Directive: node => { visit(node, collect) }
    })
    return [...names].sort()
  }
}

/** One error carrying every failure: the error handler answers each of them, with 400. */
function refusal (errors: readonly GraphQLError[]): GraphQLError {
  const carrier = Object.assign(new Error('invalid arguments'), { errors })
  return new GraphQLError('invalid arguments', { originalError: carrier })
}
