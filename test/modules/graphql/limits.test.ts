import t, { type Test } from 'tap'
import type { App } from '../../../src/app.js'
import { startFakeBrapi } from '../../fixtures/fake-brapi.js'
import { apiKey, buildTestApp, testConfig } from '../../helper.js'

interface Answer {
  status: number
  data?: Record<string, any> | null
  errors?: Array<{ message: string, path?: string[], extensions: { code: string, [key: string]: unknown } }>
}

async function graphql (
  app: App, query: string, variables?: Record<string, unknown>, headers: Record<string, string> = apiKey()
): Promise<Answer> {
  const res = await app.inject({ method: 'POST', url: '/graphql', headers, payload: { query, variables } })
  return { status: res.statusCode, ...res.json() }
}

/** A document refused before it ran: 400, no `data`, one error with `code` and `extensions`. */
function assertRefused (
  t: Test, answer: Answer, code: string, extensions: Record<string, unknown>, message?: RegExp
): void {
  t.equal(answer.status, 400, `refused: ${JSON.stringify(answer.errors)?.slice(0, 300)}`)
  t.equal(answer.data, undefined, 'no data')
  t.equal(answer.errors?.length, 1)
  t.match(answer.errors?.[0]?.extensions, { code, ...extensions })
  if (message !== undefined) t.match(answer.errors?.[0]?.message, message)
  t.notMatch(answer.errors?.[0]?.message, /stack|Maximum call|RangeError/, 'no internals')
}

const STATS = '{ stats { totalValue } }'

t.test('documents over GRAPHQL_MAX_DOCUMENT_BYTES or the token limit are refused before parsing', async t => {
  const app = await buildTestApp(t)
  // A comment fills the document to an exact size; the limit counts UTF-8 bytes, not characters.
  const sized = (bytes: number, filler = 'x') =>
    `${STATS} #${filler.repeat(Math.floor((bytes - STATS.length - 2) / Buffer.byteLength(filler)))}`
  t.equal(Buffer.byteLength(sized(16384)), 16384)
  t.same((await graphql(app, sized(16384))).data, { stats: { totalValue: 0 } }, 'the default limit, 16 KiB, is allowed')
  const over = await graphql(app, sized(16386, 'é'))
  assertRefused(
    t,
    over,
    'BAD_REQUEST',
    { maxBytes: 16384 },
    /^document of 16386 bytes exceeds the limit of 16384 bytes$/
  )

  // Four ~900 KB anonymous documents, with a syntax error past the limit: refused by size,
  // so never parsed (a parse would answer the syntax error).
  const huge = `{ stats { totalValue } ${'a '.repeat(450_000)}`
  for (let copy = 0; copy < 4; copy++) {
    assertRefused(
      t,
      await graphql(app, huge, undefined, {}),
      'BAD_REQUEST',
      { maxBytes: 16384 },
      /^document of \d+ bytes exceeds the limit of 16384 bytes$/
    )
  }
  const get = await app.inject({
    method: 'GET',
    url: `/graphql?query=${encodeURIComponent(sized(17000))}`,
    headers: apiKey()
  })
  t.equal(get.statusCode, 400, 'over GET too')
  t.equal(get.json().errors[0].extensions.code, 'BAD_REQUEST')

  // One token per two bytes: `[]` is two tokens in two bytes.
  const dense = `{ quote(symbol: [${'[]'.repeat(4100)}]) { price } }`
  t.ok(Buffer.byteLength(dense) < 16384)
  assertRefused(
    t,
    await graphql(app, dense),
    'BAD_REQUEST',
    { maxTokens: 8192 },
    /^document exceeds the limit of 8192 tokens$/
  )

  const small = await buildTestApp(t, { GRAPHQL_MAX_DOCUMENT_BYTES: '2048' })
  assertRefused(t, await graphql(small, sized(2049)), 'BAD_REQUEST', { maxBytes: 2048 })
  t.same((await graphql(small, sized(2048))).data, { stats: { totalValue: 0 } })
  for (const value of ['512', '2000000', 'lots']) {
    t.throws(
      () => testConfig({ GRAPHQL_MAX_DOCUMENT_BYTES: value }),
      /GRAPHQL_MAX_DOCUMENT_BYTES/,
      `GRAPHQL_MAX_DOCUMENT_BYTES=${value} is refused`
    )
  }
})

t.test('a document nested deeper than the parser can take is a clean 400 with the depth error', async t => {
  const app = await buildTestApp(t)
  const selection = `{${'portfolios {'.repeat(3000)} id ${'}'.repeat(3000)}}`
  t.ok(Buffer.byteLength(selection) < 16384 * 3)
  const roomy = await buildTestApp(t, { GRAPHQL_MAX_DOCUMENT_BYTES: '1048576' })
  const deepSelection = await graphql(roomy, selection)
  assertRefused(t, deepSelection, 'BAD_REQUEST', { maxDepth: 10 }, /exceeds the query depth limit of 10$/)
  const compact = `{${'a{'.repeat(3000)}b${'}'.repeat(3000)}}`
  assertRefused(
    t,
    await graphql(app, compact, undefined, {}),
    'BAD_REQUEST',
    { maxDepth: 10 },
    /exceeds the query depth limit of 10$/
  )
  const list = `{ quote(symbol: ${'['.repeat(3000)}"x"${']'.repeat(3000)}) { price } }`
  assertRefused(t, await graphql(app, list), 'BAD_REQUEST', { maxDepth: 10 }, /exceeds the query depth limit of 10$/)
})

t.test('validation work is bounded before validation: repeated response names and spread fragments', async t => {
  const app = await buildTestApp(t)
  // Conflicting fields that validation would report, if it ran: the bound answers first.
  const repeated = `{ ${'portfolios { a: id a: name } '.repeat(50)} }`
  assertRefused(
    t,
    await graphql(app, repeated, undefined, {}),
    'BAD_REQUEST',
    { maxPairs: 1000 },
    /one response name too often/
  )
  const fewer = await graphql(app, `{ ${'portfolios { a: id a: name } '.repeat(2)} }`)
  t.match(fewer.errors?.[0], {
    message: /subfields "a" conflict/,
    extensions: { code: 'VALIDATION_FAILED' }
  }, 'a few are left to validation')

  const fields = Array.from({ length: 100 }, (_, index) => `f${index}: totalValue`).join(' ')
  const parents = Array.from({ length: 60 }, (_, index) => `p${index}: stats { ...Totals }`).join(' ')
  const spread = await graphql(app, `{ ${parents} } fragment Totals on SystemStats { ${fields} }`)
  assertRefused(t, spread, 'BAD_REQUEST', { maxSelections: 5000 }, /more than 5000 fields with its fragments spread/)
  const cycle = await graphql(
    app,
    '{ ...A } fragment A on Query { ...B stats { totalValue } } fragment B on Query { ...A }'
  )
  t.match(cycle.errors?.[0], {
    message: /Cannot spread fragment "A" within itself/,
    extensions: { code: 'VALIDATION_FAILED' }
  }, 'a fragment cycle is left to validation')
})

t.test('every quote of a document goes to brapi in batches, and each quote counts in the cost', async t => {
  const brapi = await startFakeBrapi(t)
  const tickers = Array.from({ length: 200 }, (_, index) => `T${String(index).padStart(3, '0')}`)
  tickers.forEach((ticker, index) => brapi.prices.set(ticker, index + 1))
  const upstream = { QUOTES_PROVIDER: 'brapi', BRAPI_URL: brapi.url, GRAPHQL_MAX_DOCUMENT_BYTES: '65536' }
  const app = await buildTestApp(t, { ...upstream, GRAPHQL_MAX_COST: '1000000' })
  const aliases = (count: number, tickerOf: (index: number) => string) => {
    const alias = (index: number) => `q${index}: quote(symbol: "${tickerOf(index)}") { symbol price }`
    const fields = Array.from({ length: count }, (_, index) => alias(index))
    return `{ ${fields.join(' ')} }`
  }

  const thousand = await graphql(app, aliases(1000, index => tickers[index % 10] as string))
  t.equal(thousand.errors, undefined)
  t.match(thousand.data?.q999, { symbol: 'T009', price: 10 })
  t.equal(brapi.quoteRequests(), 1, '1 000 aliases of 10 tickers: one brapi request')

  const distinct = await graphql(app, aliases(200, index => (tickers[index] as string).toLowerCase()))
  t.equal(distinct.errors, undefined)
  t.match(distinct.data?.q150, { symbol: 'T150', price: 151 })
  t.equal(brapi.quoteRequests(), 1 + Math.ceil(190 / 20), 'the 190 tickers not cached yet: 20 per request')

  const priced = await buildTestApp(t, upstream)
  const before = brapi.quoteRequests()
  const refused = await graphql(priced, aliases(1000, index => tickers[index % 10] as string))
  assertRefused(t, refused, 'BAD_REQUEST', { maxCost: 50000 }, /^query cost \d+ exceeds the limit of 50000$/)
  t.equal(brapi.quoteRequests(), before, 'refused by cost at the default limit: nothing asked')
})

t.test('a document with an invalid argument runs none of its fields', async t => {
  const brapi = await startFakeBrapi(t)
  brapi.prices.set('PETR4', 30)
  const app = await buildTestApp(t, { QUOTES_PROVIDER: 'brapi', BRAPI_URL: brapi.url })
  const mixed = await graphql(app, '{ portfolios(limit: -1) { id } quote(symbol: "PETR4") { price } }')
  t.equal(mixed.status, 400)
  t.equal(mixed.data, undefined)
  t.match(mixed.errors, [{ message: 'limit must not be less than 1', extensions: { code: 'VALIDATION_FAILED' } }])
  t.equal(brapi.quoteRequests(), 0, 'the quote beside it was not asked')

  const viaVariable = await graphql(
    app,
    'query ($n: Int) { quote(symbol: "PETR4") { price } ...Page } fragment Page on Query { assets(limit: $n) { id } }',
    { n: 5000 }
  )
  t.match(
    viaVariable.errors,
    [{ message: 'limit must not be greater than 1000', extensions: { code: 'VALIDATION_FAILED' } }],
    'through a variable and a fragment'
  )
  const skipped = await graphql(
    app,
    'query ($n: Int) { quote(symbol: "PETR4") { price } assets(limit: $n) @skip(if: true) { id } }',
    { n: 5000 }
  )
  t.same(skipped.data, { quote: { price: 30 } }, 'a field left out by @skip is not checked')
  t.equal(brapi.quoteRequests(), 1)

  const two = 'mutation { a: createPortfolio(input: { name: "Kept?", userId: "u" }) { id } ' +
    'b: createPortfolio(input: { name: "  ", userId: "u" }) { id } }'
  const writes = await graphql(app, two)
  t.equal(writes.status, 400)
  t.match(writes.errors, [{ message: 'name should not be empty', extensions: { code: 'VALIDATION_FAILED' } }])
  t.same(
    (await graphql(app, '{ stats { totalPortfolios } }')).data,
    { stats: { totalPortfolios: 0 } },
    'the valid mutation beside it wrote nothing'
  )
  const named = await graphql(
    app,
    'query Good { stats { totalPortfolios } } query Bad { portfolios(limit: 0) { id } }',
    undefined
  )
  t.equal(named.status, 400, 'several operations and no name: GraphQL refuses')
  const chosen = await app.inject({
    method: 'POST',
    url: '/graphql',
    headers: apiKey(),
    payload: {
      query: 'query Good { stats { totalPortfolios } } query Bad { portfolios(limit: 0) { id } }',
      operationName: 'Good'
    }
  })
  t.same(chosen.json(), { data: { stats: { totalPortfolios: 0 } } }, 'the operation not run is not checked')
})

t.test('no "Did you mean" outside development: suggestions would name the schema', async t => {
  const production = await buildTestApp(t, {
    NODE_ENV: 'production',
    DATABASE_URL: 'sqlite::memory:',
    JWT_SECRET: 'p'.repeat(40)
  })
  const development = await buildTestApp(t)
  const cases: Array<[string, Record<string, unknown> | undefined, RegExp]> = [
    ['{ portfolioz { id } }', undefined, /^Cannot query field "portfolioz" on type "Query"\./],
    ['{ assets(type: STOK) { id } }', undefined, /^Value "STOK" does not exist in "AssetType" enum\./],
    ['{ quote(simbol: "X") { price } }', undefined, /^Unknown argument "simbol" on field "Query\.quote"\./],
    [
      'mutation ($input: CreatePortfolioInput!) { createPortfolio(input: $input) { id } }',
      { input: { nam: 'x', name: 'x', userId: 'u' } },
      /Field "nam" is not defined by type "CreatePortfolioInput"\./
    ]
  ]
  for (const [query, variables, message] of cases) {
    const hidden = await graphql(production, query, variables)
    t.equal(hidden.status, 400)
    t.match(hidden.errors?.[0]?.message, message)
    t.notMatch(hidden.errors?.[0]?.message, /Did you mean/, `production: ${query}`)
    const shown = await graphql(development, query, variables)
    t.match(shown.errors?.[0]?.message, /Did you mean/, `development keeps the suggestion: ${query}`)
  }
})
