import { execFile } from 'node:child_process'
import { copyFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import openapiTS, { astToString } from 'openapi-typescript'
import ts from 'typescript'
import { buildTestApp, TEST_API_KEYS } from '../helper.js'
import { clientTsconfig } from '../fixtures/client-tsconfig.js'
import { generatedClientExample } from '../fixtures/readme.js'

const run = promisify(execFile)
const bin = (name: string): string => new URL(`../../node_modules/.bin/${name}`, import.meta.url).pathname

/**
 * The OpenAPI document, checked with the tools a frontend team uses: Redocly's linter finds no error, and
 * a client written against the types openapi-typescript generates type-checks and works.
 */
t.test('the OpenAPI document lints clean and generates a client that compiles and works', async t => {
  const app = await buildTestApp(t)
  const document = (await app.inject({ method: 'GET', url: '/docs/json' })).json() as Record<string, unknown>
  const dir = t.testdir({})
  const documentPath = join(dir, 'openapi.json')
  await writeFile(documentPath, JSON.stringify(document))

  const lint = await run(bin('redocly'), ['lint', '--format=json', documentPath], {
    env: {
      ...process.env,
      REDOCLY_TELEMETRY: 'off',
      NO_COLOR: '1'
    }
  }).catch((error: { stdout: string }) => error)
  const report = JSON.parse(lint.stdout.slice(lint.stdout.indexOf('{'))) as {
    totals: { errors: number }
    problems: Array<{ severity: string, message: string, ruleId: string }>
  }
  t.equal(
    report.totals.errors,
    0,
    `redocly: ${JSON.stringify(report.problems.filter(problem => problem.severity === 'error'))}`
  )

  await writeFile(join(dir, 'api.ts'), astToString(await openapiTS(document as never)))
  const untyped = unknownResponses(join(dir, 'api.ts'))
  t.equal(untyped.length, 0, `every answer has a type a frontend can narrow: unknown are ${untyped.join(', ')}`)
  await copyFile(new URL('../fixtures/generated-client/client.ts', import.meta.url), join(dir, 'client.ts'))
  // docs/api.md's example, as a frontend copies it, with the types under the name it imports.
  await copyFile(join(dir, 'api.ts'), join(dir, 'bff-api.ts'))
  await writeFile(join(dir, 'docs-example.ts'), generatedClientExample())
  await writeFile(join(dir, 'tsconfig.json'), clientTsconfig(['client.ts', 'api.ts', 'docs-example.ts']))
  const compiled = await run(bin('tsc'), ['-p', join(dir, 'tsconfig.json')]).then(
    () => '',
    (error: { stdout: string }) => error.stdout
  )
  t.equal(compiled, '', 'the client and docs/api.md\'s example type-check against the generated types')

  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  const client = await import(join(dir, 'client.ts')) as { run: (baseUrl: string, key: string) => Promise<ClientRun> }
  const result = await client.run(address, TEST_API_KEYS[0] ?? '')
  t.match(result.created, { name: 'Generated client', userId: 'client-user', totalValue: 0 })
  t.equal(result.read.id, result.created.id)
  t.equal(result.missing, 'NOT_FOUND')
  t.equal(result.missingMessage, 'Portfolio não encontrado')
  t.same(result.retried, { sameId: true, replayed: 'true' }, 'a create retried with its Idempotency-Key')
  t.same(result.conditional, { pollStatus: 304, editStatus: 200, staleCode: 'PRECONDITION_FAILED' },
    'If-None-Match and If-Match')
})

/**
 * The responses whose body openapi-typescript typed `unknown` (or `any`), as `operation status
 * media type`: a body a frontend cannot narrow. A union with `unknown` is `unknown` too, so an
 * `ErrorBody | <anything untyped>` counts.
 */
function unknownResponses (file: string): string[] {
  const program = ts.createProgram([file], { strict: true, noEmit: true, skipLibCheck: true, types: [] })
  const checker = program.getTypeChecker()
  const source = program.getSourceFile(file)
  const module = source === undefined ? undefined : checker.getSymbolAtLocation(source)
  const operations = module === undefined
    ? undefined
    : checker.getExportsOfModule(module).find(symbol => symbol.name === 'operations')
  if (operations === undefined) throw new Error('the generated types have no `operations`')
  const member = (type: ts.Type, name: string): ts.Type | undefined => {
    const symbol = type.getProperty(name)
    return symbol === undefined ? undefined : checker.getTypeOfSymbol(symbol)
  }
  const untyped: string[] = []
  for (const operation of checker.getDeclaredTypeOfSymbol(operations).getProperties()) {
    const responses = member(checker.getTypeOfSymbol(operation), 'responses')
    for (const status of responses?.getProperties() ?? []) {
      const content = member(checker.getTypeOfSymbol(status), 'content')
      for (const media of content?.getProperties() ?? []) {
        const body = checker.getTypeOfSymbol(media)
        if ((body.flags & (ts.TypeFlags.Unknown | ts.TypeFlags.Any)) !== 0) {
          untyped.push(`${operation.name} ${status.name} ${media.name}`)
        }
      }
    }
  }
  return untyped
}

/** What the generated client's run answers (typed here by hand: its own types exist only once generated). */
interface ClientRun {
  created: { id: string }
  read: { id: string }
  missing: string
  missingMessage: unknown
  retried: { sameId: boolean, replayed: string | null }
  conditional: { pollStatus: number, editStatus: number, staleCode: string | undefined }
}

/** The routes that relay an upstream's answer, and the error statuses both they and the upstream may answer. */
const RELAY_OPERATIONS = [
  'get /backend-api/user/profile',
  'post /backend-api/proxy/{path}',
  'post /aggregator',
  'post /aggregator/connect_token'
]

interface DocumentedResponse {
  description: string
  content?: Record<string, { schema: { $ref?: string, anyOf?: Array<{ $ref?: string }> } }>
}
const RELAYED_ERRORS = ['400', '401', '403', '413', '415', '429']
const RELAYED_TEXT = { $ref: '#/components/schemas/RelayedText' }

t.test('every operation has a unique camelCase operationId and every entity is a named component', async t => {
  const app = await buildTestApp(t)
  const document = (await app.inject({ method: 'GET', url: '/docs/json' })).json() as {
    servers?: unknown[]
    paths: Record<string, Record<string, { operationId?: string, responses: Record<string, DocumentedResponse> }>>
    components: { schemas: Record<string, { properties?: Record<string, { enum?: string[] }>, type?: string }> }
  }
  t.ok((document.servers ?? []).length > 0, 'servers')
  const ids = Object.values(document.paths).flatMap(path => Object.values(path).map(operation => operation.operationId))
  t.ok(ids.every(id => id !== undefined && /^[a-z][a-zA-Z0-9]*$/.test(id)), 'camelCase operationIds')
  t.equal(new Set(ids).size, ids.length, 'unique operationIds')
  for (const name of [
    'Portfolio',
    'PortfolioDetail',
    'PortfolioAsset',
    'PortfolioValue',
    'AssetQuote',
    'AssetDashboard',
    'ExcludedTransaction',
    'SystemStats',
    'ProviderConfig',
    'ConnectToken',
    'ErrorBody'
  ]) {
    t.ok(document.components.schemas[name], `component ${name}`)
  }
  t.ok(
    (document.components.schemas.ErrorBody?.properties?.code?.enum ?? []).includes('TOKEN_EXPIRED'),
    'ErrorBody.code is the enum of the error codes'
  )
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      for (const status of ['400', '413', '415', '429', '500', '503']) {
        // The liveness check is never shed, so never 503.
        const documented = status !== '503' || `${method} ${path}` !== 'get /auth/health'
        const what = `${method} ${path}: ${status} ${documented ? 'documented' : 'not documented'}`
        t.equal(operation.responses[status] !== undefined, documented, what)
      }
      for (const [status, response] of Object.entries(operation.responses)) {
        t.not(response.description, 'Default Response', `${method} ${path} ${status} is described`)
        const schema = response.content?.['application/json']?.schema
        if (!/^[45]\d\d$/.test(status)) continue
        // A relay route's 4xx that the service also answers itself: ErrorBody or the upstream's own body.
        const relayed = RELAY_OPERATIONS.includes(`${method} ${path}`) && RELAYED_ERRORS.includes(status)
        if (relayed) {
          const both = [{ $ref: '#/components/schemas/ErrorBody' }, { $ref: '#/components/schemas/RelayedBody' }]
          t.same(schema?.anyOf, both, `${method} ${path} ${status} is an ErrorBody or the upstream's JSON object`)
          t.same(response.content?.['*/*']?.schema, RELAYED_TEXT, `${method} ${path} ${status} or its other content`)
          t.match(response.description, /relayed byte for byte/, `${method} ${path} ${status} says so`)
        } else {
          t.equal(schema?.$ref, '#/components/schemas/ErrorBody', `${method} ${path} ${status} is an ErrorBody`)
        }
      }
    }
  }
  for (const operation of RELAY_OPERATIONS) {
    const [method = '', path = ''] = operation.split(' ')
    const responses = document.paths[path]?.[method]?.responses ?? {}
    t.same(responses['4XX']?.content, {
      'application/json': { schema: { $ref: '#/components/schemas/RelayedBody' } },
      '*/*': { schema: RELAYED_TEXT }
    }, `${operation}: any other 4xx is the upstream's JSON object or other content`)
    if (responses['2XX'] === undefined) continue
    for (const wildcard of ['2XX', '3XX']) {
      const json = { 'application/json': { schema: { $ref: '#/components/schemas/RelayedJson' } } }
      t.same(responses[wildcard]?.content, json, `${operation}: a ${wildcard} is the upstream's JSON`)
    }
  }
  t.match(document.components.schemas.RelayedBody, { type: 'object', additionalProperties: true },
    'RelayedBody: an object, the upstream\'s own fields')
  t.equal(
    document.paths['/portfolios/{id}']?.get?.responses['200']?.content?.['application/json']?.schema.$ref,
    '#/components/schemas/PortfolioDetail'
  )
  t.same(Object.keys(document.paths['/auth/client/test']?.get?.responses['200']?.content ?? {}), ['text/plain'])
})
