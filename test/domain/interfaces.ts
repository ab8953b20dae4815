import type { Test } from 'tap'
import type { App } from '../../src/app.js'

/**
 * The same request through both interfaces: REST (`app.inject`) and GraphQL (`POST /graphql`),
 * so a domain rule is asserted once per interface with the same input and the same outcome.
 */

export interface RestAnswer {
  status: number
  body: any
  /** The error body's code, for an error. */
  code?: string
}

export async function rest (
  app: App, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string,
  headers: Record<string, string>, payload?: Record<string, unknown>
): Promise<RestAnswer> {
  const res = await app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) })
  const body = res.headers['content-type']?.toString().includes('json') === true ? res.json() : res.body
  return { status: res.statusCode, body, code: res.statusCode >= 400 ? body.code : undefined }
}

export interface GraphqlAnswer {
  status: number
  /** `data[field]`: `null` for a refused or unknown nullable field, `undefined` when nothing ran. */
  value: any
  /** The code of the first error (`extensions.code`), when there is one. */
  code?: string
  message?: string
  /** A validation failure's phrases (`extensions.messages`). */
  messages?: string[]
  errors: Array<{ message: string, path?: string[], extensions: { code: string, messages?: string[] } }>
}

/** One operation whose root field is `field`. */
export async function graphql (
  app: App, field: string, query: string, variables: Record<string, unknown>, headers: Record<string, string>
): Promise<GraphqlAnswer> {
  const res = await app.inject({ method: 'POST', url: '/graphql', headers, payload: { query, variables } })
  type Body = { data?: Record<string, unknown> | null, errors?: GraphqlAnswer['errors'] }
  const { data, errors = [] } = res.json() as Body
  const [first] = errors
  return {
    status: res.statusCode,
    value: data === undefined ? undefined : data?.[field] ?? null,
    code: first?.extensions.code,
    message: first?.message,
    messages: first?.extensions.messages,
    errors
  }
}

/** The same refusal on both: REST's status and code, GraphQL's `extensions.code` (and the same message). */
export function assertSameRefusal (
  t: Test, restAnswer: RestAnswer, graphqlAnswer: GraphqlAnswer, status: number, code: string, message?: string
): void {
  t.equal(restAnswer.status, status, `REST: ${status}`)
  t.equal(restAnswer.code, code, `REST: ${code}`)
  t.equal(graphqlAnswer.code, code, `GraphQL: ${code} (${JSON.stringify(graphqlAnswer.errors)})`)
  if (message === undefined) return
  t.equal(restAnswer.body.message, message, 'REST: the message')
  t.equal(graphqlAnswer.message, message, 'GraphQL: the same message')
}

/** A validation failure on both: 400 VALIDATION_FAILED with the same phrases (GraphQL: refused before it runs). */
export function assertSameValidation (
  t: Test, restAnswer: RestAnswer, graphqlAnswer: GraphqlAnswer, phrases: string[]
): void {
  assertSameRefusal(t, restAnswer, graphqlAnswer, 400, 'VALIDATION_FAILED')
  t.same(restAnswer.body.message, phrases, 'REST: the phrases')
  t.same(graphqlAnswer.messages, phrases, 'GraphQL: the same phrases')
  t.equal(graphqlAnswer.status, 400, 'GraphQL: refused before anything ran')
}

/** An unknown id: REST 404 NOT_FOUND, GraphQL `whenMissing` (null, or false for a delete) without an error. */
export function assertSameNotFound (
  t: Test, restAnswer: RestAnswer, graphqlAnswer: GraphqlAnswer, whenMissing: null | false = null
): void {
  t.equal(restAnswer.status, 404, 'REST: 404')
  t.equal(restAnswer.code, 'NOT_FOUND', 'REST: NOT_FOUND')
  t.equal(graphqlAnswer.value, whenMissing, `GraphQL: ${String(whenMissing)}`)
  t.same(graphqlAnswer.errors, [], 'GraphQL: without an error')
}
