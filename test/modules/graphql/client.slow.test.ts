import { execFile } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { parse } from 'graphql'
import { codegen } from '@graphql-codegen/core'
import * as typescriptOperations from '@graphql-codegen/typescript-operations'
import * as typedDocumentNode from '@graphql-codegen/typed-document-node'
import { SCHEMA_FILE } from '../../../src/cli/graphql-schema.js'
import { buildTestApp, TEST_API_KEYS } from '../../helper.js'
import { clientTsconfig } from '../../fixtures/client-tsconfig.js'

const run = promisify(execFile)
const fixture = (name: string): URL => new URL(`../../fixtures/generated-graphql-client/${name}`, import.meta.url)

/**
 * The GraphQL schema, checked with the tool frontend teams use: graphql-codegen types a client's
 * operations from `schema.graphql`; the client written against them type-checks and works.
 */
t.test('schema.graphql generates typed operations with graphql-codegen; ' +
  'a client written against them compiles and works', async t => {
  const dir = t.testdir({})
  const generated = await codegen({
    schema: parse(await readFile(SCHEMA_FILE, 'utf8')),
    documents: [
      { location: 'operations.graphql', document: parse(await readFile(fixture('operations.graphql'), 'utf8')) }
    ],
    filename: 'graphql.ts',
    config: { useTypeImports: true },
    // typescript-operations writes the enums and inputs the operations use (graphql-codegen 6).
    plugins: [{ typescriptOperations: {} }, { typedDocumentNode: {} }],
    pluginMap: { typescriptOperations, typedDocumentNode }
  })
  await writeFile(join(dir, 'graphql.ts'), generated)
  await writeFile(join(dir, 'client.ts'), await readFile(fixture('client.ts')))
  await writeFile(join(dir, 'tsconfig.json'), clientTsconfig(['client.ts', 'graphql.ts']))
  const compiled = await run(new URL('../../../node_modules/.bin/tsc', import.meta.url).pathname, [
    '-p',
    join(dir, 'tsconfig.json')
  ]).then(
    () => '',
    (error: { stdout: string }) => error.stdout
  )
  t.equal(compiled, '', 'the client type-checks against the generated types')

  const app = await buildTestApp(t)
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  // Typed here by hand: the client's own types exist only once generated.
  const client = await import(join(dir, 'client.ts')) as {
    run: (baseUrl: string, apiKey: string) => Promise<{
      createdId: string
      portfolio: Record<string,
    unknown> | null
      stockSymbols: string[]
      refusedCode?: string
    }>
  }
  const result = await client.run(address, TEST_API_KEYS[0] ?? '')
  t.match(result.portfolio, {
    id: result.createdId,
    name: 'Generated client',
    totalValue: 42,
    assets: [{ symbol: 'PETR4', type: 'STOCK', totalValue: 21 }, { symbol: 'BTC', type: 'CRYPTO' }]
  })
  t.same(result.stockSymbols, ['PETR4'], 'the generated enum compares with what the API answers')
  t.equal(result.refusedCode, 'API_KEY_INVALID')
})
