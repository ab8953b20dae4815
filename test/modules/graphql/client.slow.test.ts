import { execFile } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { buildTestApp, TEST_API_KEYS } from '../../helper.js'
import { clientTsconfig } from '../../fixtures/client-tsconfig.js'

const run = promisify(execFile)
const fixture = (name: string): URL => new URL(`../../fixtures/generated-graphql-client/${name}`, import.meta.url)
const bin = (name: string): string => new URL(`../../../node_modules/.bin/${name}`, import.meta.url).pathname

/**
 * The GraphQL schema, checked as a frontend team meets it: graphql-codegen's CLI pointed at the
 * running service's URL (development: it introspects with the standard query) types the client's
 * operations; the client written against them type-checks and works.
 */
t.test('graphql-codegen\'s CLI generates typed operations from the live URL; ' +
  'a client written against them compiles and works', async t => {
  const app = await buildTestApp(t)
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  const dir = t.testdir({})
  await writeFile(join(dir, 'operations.graphql'), await readFile(fixture('operations.graphql')))
  await writeFile(join(dir, 'codegen.json'), JSON.stringify({
    schema: `${address}/graphql`,
    documents: 'operations.graphql',
    generates: {
      // typescript-operations writes the enums and inputs the operations use (graphql-codegen 6).
      'graphql.ts': { plugins: ['typescript-operations', 'typed-document-node'], config: { useTypeImports: true } }
    }
  }))
  const generated = await run(bin('graphql-codegen'), ['--config', 'codegen.json'], { cwd: dir }).then(
    () => '',
    (error: { stdout: string, stderr: string }) => `${error.stdout}${error.stderr}`
  )
  t.equal(generated, '', 'graphql-codegen ran against the URL')
  await writeFile(join(dir, 'client.ts'), await readFile(fixture('client.ts')))
  await writeFile(join(dir, 'tsconfig.json'), clientTsconfig(['client.ts', 'graphql.ts']))
  const compiled = await run(bin('tsc'), ['-p', join(dir, 'tsconfig.json')]).then(
    () => '',
    (error: { stdout: string }) => error.stdout
  )
  t.equal(compiled, '', 'the client type-checks against the generated types')

  // Typed here by hand: the client's own types exist only once generated.
  const client = await import(join(dir, 'client.ts')) as {
    run: (baseUrl: string, apiKey: string) => Promise<{
      createdId: string
      portfolio: Record<string, unknown> | null
      stockSymbols: string[]
      refusedCode?: string
      valuation?: Record<string, unknown>
      currency?: string
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
  t.match(result.valuation, { bookValue: 42, unquotedSymbols: [] })
  t.equal(result.currency, 'BRL')
})
