import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import t from 'tap'

/*
 * A slow suite (a child process): tap follows the child into its own copy of src/, which would not
 * merge with in-process coverage (test/coverage-map.mjs). The rest of GraphQL's first use is in
 * on-first-use.test.ts.
 */

/** What GraphQL brings: none of it is loaded before the first GraphQL request. */
const GRAPHQL_PACKAGES = ['mercurius', 'graphql', 'graphql-jit', '@fastify/websocket', 'ws']

t.test('a started app has loaded none of GraphQL\'s packages; its first GraphQL request loads them', async t => {
  const fixture = fileURLToPath(new URL('../../fixtures/graphql-on-first-use.ts', import.meta.url))
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', fixture], { timeout: 120_000 })
  const { atStart, afterFirstRequest, firstAnswer } =
    JSON.parse(stdout) as { atStart: string[], afterFirstRequest: string[], firstAnswer: unknown }
  t.ok(atStart.includes('fastify'), 'the record holds the app\'s packages')
  t.same(atStart.filter(name => GRAPHQL_PACKAGES.includes(name)), [], 'none at start')
  t.same(GRAPHQL_PACKAGES.filter(name => !afterFirstRequest.includes(name)), [], 'all after the first request')
  t.same(firstAnswer, { data: { __typename: 'Query' } })
})
