import type { DocumentNode, GraphQLSchema } from 'graphql'
import { getComplexity, type ComplexityEstimator } from 'graphql-query-complexity'
import { QueryRefusedError } from './errors.js'

/** The cost model of a field, in its `extensions.cost`: its own cost, and how many items a list field stands for. */
export interface FieldCost {
  base?: number
  items?: (args: Record<string, unknown>) => number
}

/**
 * A field costs its own `base` (1 unless the schema says more: a quote asks a provider, a
 * dashboard several) plus what its selection costs, times the items it stands for — the page a
 * list asks for, or an estimate for unbounded lists.
 */
const fieldCost: ComplexityEstimator = ({ field, args, childComplexity }) => {
  const cost = field.extensions.cost as FieldCost | undefined
  return (cost?.base ?? 1) + (cost?.items?.(args) ?? 1) * childComplexity
}

/**
 * Refuses, before it runs, an operation whose estimated cost is over `maxCost` (CONTRACT §14).
 * `getComplexity` also answers a document it cannot price (an unknown variable) with an error.
 */
export function assertAffordable (schema: GraphQLSchema, document: DocumentNode, variables: Record<string, unknown> | undefined, maxCost: number): void {
  let cost: number
  try {
    cost = getComplexity({ schema, query: document, variables, estimators: [fieldCost] })
  } catch (error) {
    throw new QueryRefusedError((error as Error).message, {})
  }
  if (cost > maxCost) throw new QueryRefusedError(`query cost ${cost} exceeds the limit of ${maxCost}`, { cost, maxCost })
}
