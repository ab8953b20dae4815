import { Kind, type DocumentNode, type FragmentDefinitionNode, type SelectionSetNode } from 'graphql'
import { QueryRefusedError } from './errors.js'

/** Field selections a document may stand for, each fragment counted again at every spread. */
export const MAX_SPREAD_SELECTIONS = 5000

/**
 * Pairs of field selections at one response path (`portfolios.assets.id`, by alias) a document
 * may hold. GraphQL's validation compares every such pair to prove they can be merged, so a few
 * hundred copies of one field cost it a few hundred milliseconds; an ordinary one has a handful.
 */
export const MAX_SAME_PATH_PAIRS = 1000

/**
 * Refuses, after parsing and before validation, a document whose validation would be costly:
 * one pass over it, with fragments spread (a fragment spread inside itself is left to
 * validation to report), bounded by the same limits.
 */
export function assertValidationAffordable (document: DocumentNode): void {
  const fragments = new Map<string, FragmentDefinitionNode>()
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition)
  }
  const atPath = new Map<string, number>()
  const spreading = new Set<string>()
  let selections = 0
  let pairs = 0
  const walk = (selectionSet: SelectionSetNode, path: string): void => {
    for (const selection of selectionSet.selections) {
      if (++selections > MAX_SPREAD_SELECTIONS) {
        const message = `document selects more than ${MAX_SPREAD_SELECTIONS} fields with its fragments spread`
        throw new QueryRefusedError(message, { maxSelections: MAX_SPREAD_SELECTIONS })
      }
      if (selection.kind === Kind.FIELD) {
        const fieldPath = `${path}.${selection.alias?.value ?? selection.name.value}`
        const earlier = atPath.get(fieldPath) ?? 0
        pairs += earlier
        if (pairs > MAX_SAME_PATH_PAIRS) {
          const message = 'document selects one response name too often: ' +
            `over ${MAX_SAME_PATH_PAIRS} pairs of selections to merge`
          throw new QueryRefusedError(message, { maxPairs: MAX_SAME_PATH_PAIRS })
        }
        atPath.set(fieldPath, earlier + 1)
        if (selection.selectionSet !== undefined) walk(selection.selectionSet, fieldPath)
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        walk(selection.selectionSet, path)
      } else {
        const name = selection.name.value
        const fragment = fragments.get(name)
        if (fragment === undefined || spreading.has(name)) continue
        spreading.add(name)
        walk(fragment.selectionSet, path)
        spreading.delete(name)
      }
    }
  }
  // Fragments are validated on their own too, so each is walked as a root of its own as well.
  document.definitions.forEach((definition, index) => {
    if (definition.kind === Kind.OPERATION_DEFINITION || definition.kind === Kind.FRAGMENT_DEFINITION) {
      walk(definition.selectionSet, String(index))
    }
  })
}
