import { ForbiddenOtherUserError } from '../errors.js'
import type { PortfolioScope } from './access.js'

/*
 * Keeping a portfolio-scoped method to its caller's scope (docs/api.md#whose-portfolios): a user
 * token reaches only its own portfolios and what they hold; another user's is answered as an
 * unknown id would be — the same NOT_FOUND, after the same checks — so its existence is never
 * told. A trusted server's API key reaches every one. Each service method asks
 * `access.portfolioScope()` first (src/domain/access.ts), then one of these.
 */

/**
 * The `userId` a list filter or a create body may name: under a user's scope, the user's own —
 * the one it sent, or its own when it sent none — and another user's is 403 FORBIDDEN_PRINCIPAL;
 * under the API key's, the one sent, if any.
 */
export function listOwner (scope: PortfolioScope, userId: string | undefined): string | undefined {
  if (scope.kind === 'every') return userId
  if (userId !== undefined && userId !== scope.userId) throw new ForbiddenOtherUserError()
  return scope.userId
}

/** Whether the scope reaches a record owned by `userId`. */
export function reaches (scope: PortfolioScope, userId: string): boolean {
  return scope.kind === 'every' || scope.userId === userId
}

/** A read that carries its owner, or `undefined` (as if there were none) when the scope does not reach it. */
export function ifReached<T> (
  scope: PortfolioScope, read: T | undefined, ownerOf: (read: T) => string
): T | undefined {
  return read === undefined || reaches(scope, ownerOf(read)) ? read : undefined
}

/** When a stream the scope opened must end, epoch milliseconds: its token's end; never for the API key. */
export function streamUntil (scope: PortfolioScope): number | undefined {
  return scope.kind === 'owner' ? scope.endsAt : undefined
}

/** A repository that tells the owners of its records: each id of `ids` that exists to its portfolio's `userId`. */
export interface Owners {
  ownersOf: (ids: readonly string[]) => Promise<Map<string, string>>
}

/**
 * The ids of `ids` the scope reaches, for a method that has not read its records' owners (an asset
 * by id, a batch of a GraphQL loader): one statement of `owners` under a user's scope; under the
 * API key's, every id as given, unknown ones too (the read or write that follows finds those).
 */
export async function reached (
  scope: PortfolioScope, ids: readonly string[], owners: Owners
): Promise<readonly string[]> {
  if (scope.kind === 'every') return ids
  if (ids.length === 0) return []
  const ownerOf = await owners.ownersOf(ids)
  return ids.filter(id => ownerOf.get(id) === scope.userId)
}

/** Whether the scope reaches the record `id` of `owners`: always under the API key's, as {@link reached}. */
export async function reachable (scope: PortfolioScope, id: string, owners: Owners): Promise<boolean> {
  return (await reached(scope, [id], owners)).length === 1
}
