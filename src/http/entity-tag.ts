import { hash } from 'node:crypto'

/**
 * The strong entity tag (RFC 9110 §8.8.3) of an answer's content: a SHA-256 of its JSON, for a
 * route that tags its answers (`config.entityTag`) without setting a tag of its own. The
 * service's resources set {@link versionTag}s.
 */
export function entityTag (value: unknown): string {
  return `"${hash('sha256', JSON.stringify(value), 'base64url')}"`
}

/**
 * The strong entity tag of a stored resource at one version: its id and the version every write
 * bumps in its transaction. The read, the write's answer and the `If-Match` check all derive it
 * from the row, without serializing or hashing the answer; it changes with every committed write
 * (a portfolio's with any write of its assets).
 */
export function versionTag (id: string, version: number): string {
  return `"${id}.${version}"`
}

/** A value as answered with its {@link versionTag}. */
export interface Tagged<T> {
  value: T
  etag: string
}

/** A value read from the store with the version its row has: what its {@link versionTag} is made of. */
export interface Versioned<T> {
  value: T
  version: number
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
