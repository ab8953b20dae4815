import { hash } from 'node:crypto'

/**
 * The strong entity tag (RFC 9110 §8.8.3) of an answer's content: a SHA-256 of its JSON. The
 * routes tag the value they answer, and the store tags the same value, built by the same
 * function, inside the transaction that checks an `If-Match` — so the two always agree, and the
 * tag changes with any field of the answer (a portfolio's tag with any of its assets).
 */
export function entityTag (value: unknown): string {
  return `"${hash('sha256', JSON.stringify(value), 'base64url')}"`
}

/** Whether `tag` satisfies an `If-Match` (strong comparison); undefined when the request has none. */
export type Precondition = (tag: string) => boolean

/** The entity tags of an `If-Match` or `If-None-Match` field: `*`, or the quoted tags it lists (weak ones `W/"…"`). */
function listedTags (field: string): string[] | '*' {
  if (field.trim() === '*') return '*'
  return field.match(/(?:W\/)?"[^"]*"/g) ?? []
}

/** `If-Match`: true for `*` or when a listed strong tag is `tag` (RFC 9110 §13.1.1; a weak tag never matches). */
export function ifMatch (field: string | undefined): Precondition | undefined {
  if (field === undefined) return undefined
  const tags = listedTags(field)
  return tag => tags === '*' || tags.includes(tag)
}

/** `If-None-Match`: true when `tag` is listed, weakly compared, or for `*` (RFC 9110 §13.1.2). */
export function noneMatch (field: string, tag: string): boolean {
  const tags = listedTags(field)
  return tags === '*' || tags.some(listed => listed === tag || listed === `W/${tag}`)
}
