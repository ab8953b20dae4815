import { visit, type DocumentNode, type GraphQLSchema } from 'graphql'
import { getComplexity, type ComplexityEstimator } from 'graphql-query-complexity'
import { QueryRefusedError } from './errors.js'

/**
 * The cost model of a field, in its `extensions.cost`: its own cost, and how many items a list
 * field stands for — the value of its `pageArgument` when the query gives one, else `items`.
 */
export interface FieldCost {
  base?: number
  items?: number
  pageArgument?: string
}

/**
 * A field costs its own `base` (1 unless the schema says more: a quote asks a provider, a
 * dashboard several) plus what its selection costs, times the items it stands for — the page a
 * list asks for, or an estimate for unbounded lists.
 */
const fieldCost: ComplexityEstimator = ({ field, args, childComplexity }) => {
  const cost = field.extensions.cost as FieldCost | undefined
  const page = cost?.pageArgument === undefined ? undefined : args[cost.pageArgument]
  return (cost?.base ?? 1) + (typeof page === 'number' ? page : cost?.items ?? 1) * childComplexity
}

/**
 * A root `quote` names its ticker in the document, so each alias is one more ticker asked of the
 * provider (batched, but not free): it costs 100, so one document asks at most a few hundred
 * (about 490 at the default limit of 50 000), where a list's quotes are the stored assets' own.
 */
export const QUERY_QUOTE_COST = 100

/** Costs remembered per document, one per set of values of the variables its cost reads. */
const COSTS_PER_DOCUMENT = 64

interface DocumentCosts {
  /** The variables the cost depends on: page sizes and `@skip`/`@include` conditions. */
  pricedVariables: string[]
  byValues: Map<string, number>
}

/**
 * Refuses, before it runs, an operation whose estimated cost is over `maxCost` (GRAPHQL_MAX_COST).
 * A document is priced once (Mercurius hands over the same parsed document for the same text),
 * and again only for new values of the variables its cost reads — not for every `id`.
 */
export class CostGuard {
  private readonly costs = new WeakMap<DocumentNode, DocumentCosts>()
  private readonly pageArguments: ReadonlySet<string>

  constructor (private readonly schema: GraphQLSchema, private readonly maxCost: number) {
    this.pageArguments = pageArgumentsOf(schema)
  }

  assertAffordable (document: DocumentNode, variables: Record<string, unknown> | undefined): void {
    let costs = this.costs.get(document)
    if (costs === undefined) {
      costs = { pricedVariables: this.pricedVariables(document), byValues: new Map() }
      this.costs.set(document, costs)
    }
    // A variable left out (its default applies) and one given as null price differently.
    const given = (name: string): unknown[] =>
      variables !== undefined && Object.hasOwn(variables, name) ? [variables[name]] : []
    const key = JSON.stringify(costs.pricedVariables.map(given))
    let cost = costs.byValues.get(key)
    if (cost === undefined) {
      cost = this.price(document, variables)
      if (costs.byValues.size >= COSTS_PER_DOCUMENT) costs.byValues.clear()
      costs.byValues.set(key, cost)
    }
    if (cost > this.maxCost) {
      const limits = { cost, maxCost: this.maxCost }
      throw new QueryRefusedError(`query cost ${cost} exceeds the limit of ${this.maxCost}`, limits)
    }
  }

  /** `getComplexity` also answers a document it cannot price (an unknown variable) with an error. */
  private price (document: DocumentNode, variables: Record<string, unknown> | undefined): number {
    try {
      return getComplexity({ schema: this.schema, query: document, variables, estimators: [fieldCost] })
    } catch (error) {
      throw new QueryRefusedError((error as Error).message, {})
    }
  }

  /** Variables given to a page argument (of any field: a superset is harmless) or to a directive. */
  private pricedVariables (document: DocumentNode): string[] {
    const names = new Set<string>()
    const collect = { Variable: (node: { name: { value: string } }) => { names.add(node.name.value) } }
    visit(document, {
      Argument: node => { if (this.pageArguments.has(node.name.value)) visit(node.value, collect) },
      Directive: node => { visit(node, collect) }
    })
    return [...names].sort()
  }
}

function pageArgumentsOf (schema: GraphQLSchema): Set<string> {
  const names = new Set<string>()
  for (const type of Object.values(schema.getTypeMap())) {
    if (!('getFields' in type)) continue
    for (const field of Object.values(type.getFields())) {
      const cost = field.extensions.cost as FieldCost | undefined
      if (cost?.pageArgument !== undefined) names.add(cost.pageArgument)
    }
  }
  return names
}
