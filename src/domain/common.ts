import { PreconditionFailedError } from '../errors.js'
import { versionTag, type Precondition, type Tagged, type Versioned } from '../http/entity-tag.js'
import { MAX_ID_LENGTH } from '../schemas/common.js'
import type { PortfolioScope } from './access.js'

/** A page of a list as asked, within the list schemas' bounds; `pageOf` fills in the defaults. */
export interface PageRequest {
  limit?: number
  offset?: number
}

/** The NOT_FOUND of a domain (`Portfolio não encontrado`, `Exclusão não encontrada`). */
export type Missing = () => Error

/**
 * The record `read` finds for `id`, or the domain's NOT_FOUND. An empty id or one over
 * {@link MAX_ID_LENGTH} characters is NOT_FOUND without being looked up.
 */
export async function found<T> (
  id: string, missing: Missing, read: (id: string) => Promise<T | undefined>
): Promise<T> {
  const value = possibleId(id) ? await read(id) : undefined
  if (value === undefined) throw missing()
  return value
}

/** A write to the record `id` that answers whether it existed; the domain's NOT_FOUND when it did not. */
export async function existing (id: string, missing: Missing, write: (id: string) => Promise<boolean>): Promise<void> {
  if (!possibleId(id) || !await write(id)) throw missing()
}

/** Whether a record could have `id`: not empty, at most {@link MAX_ID_LENGTH} characters. */
export function possibleId (id: string): boolean {
  return id.length > 0 && id.length <= MAX_ID_LENGTH
}

/**
 * One result of a batch (a loader's answer for many parents): the value, or the error the single
 * read would have thrown (a NOT_FOUND), so an interface answers each item as it answers one.
 */
export type Each<T> = T | Error

/** A record read with its version, as answered: with its tag (`GET /portfolio-assets/:id`'s, a write's answer). */
export function tagged<T extends { id: string }> ({ value, version }: Versioned<T>): Tagged<T> {
  return { value, etag: versionTag(value.id, version) }
}

/**
 * Whether a write must read its row, under its lock, before it writes: to check its owner (a user's scope) or its
 * version (an If-Match). A trusted server's delete or rename without If-Match has nothing to decide but that the
 * row exists, which the write finds itself: it reads nothing first, and runs as many statements as before the
 * domain decided (BENCHMARKS.md, "Asset writes"); reading would add one on SQLite, and on PostgreSQL one to a
 * rename, two to an asset's delete and three to a portfolio's (their locks come first).
 */
export function decidesOnRow (scope: PortfolioScope, precondition: Precondition | undefined): boolean {
  return scope.kind === 'owner' || precondition !== undefined
}

/**
 * An `If-Match` (docs/api.md#safe-retries): PRECONDITION_FAILED unless `precondition` holds for the tag of
 * the record `id` at `version`, read under the write's lock so that nothing changes it before the write commits.
 */
export function assertMatches (precondition: Precondition | undefined, id: string, version: number): void {
  if (precondition !== undefined && !precondition(versionTag(id, version))) throw new PreconditionFailedError()
}
