import { errorCodeOf } from '../../errors.js'
import type { Each } from '../../domain/common.js'

function isNotFound (error: unknown): boolean {
  if (!(error instanceof Error)) return false
  const { code, statusCode } = error as Error & { code?: unknown, statusCode?: number }
  return errorCodeOf({ code }, statusCode ?? 500) === 'NOT_FOUND'
}

/**
 * How GraphQL answers a domain service's NOT_FOUND (docs/api.md#graphql): a nullable field is
 * `null`, without an error; a delete is `false`. Every other error stays the field's error.
 */
export async function orNull<T> (answer: Promise<T>): Promise<T | null> {
  try {
    return await answer
  } catch (error) {
    if (isNotFound(error)) return null
    throw error
  }
}

/** A delete: `true` once done, `false` when the service found nothing to delete. */
export async function orFalse (done: Promise<unknown>): Promise<boolean> {
  return await orNull(done.then(() => true)) ?? false
}

/** A batch's answers for a nullable field's loader: each item as {@link orNull} answers one. */
export function eachOrNull<T> (answers: ReadonlyArray<Each<T>>): Array<T | null> {
  return answers.map(answer => {
    if (!(answer instanceof Error)) return answer
    if (isNotFound(answer)) return null
    throw answer
  })
}
