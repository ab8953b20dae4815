import t from 'tap'
import { execFile } from 'node:child_process'
import { cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL, fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { apiKey, forEachEngine, freshDatabase, TEST_API_KEYS, tymon } from '../helper.js'
import { graphql } from '../domain/interfaces.js'

/*
 * docs/style.md, "Adding a field": an editable field of a portfolio is its migration and its schema
 * (with its input schemas), and the tests. This suite does it, in a copy of src/: it appends a
 * migration and adds `riskProfile` to the portfolio's schema and its create and update inputs —
 * nothing else — then type-checks the copy and serves it: the field is stored, read, changed and
 * cleared through REST and GraphQL, on SQLite and on PostgreSQL (when DATABASE_URL names one).
 * Slow for tsc over the whole copy (10–30 s on this busy 2-core machine).
 */

t.setTimeout(300_000)

const root = fileURLToPath(new URL('../..', import.meta.url))
/** Inside the project, so that the copy resolves the project's packages as src/ does. */
const copy = join(root, '.tap', 'added-field')

/** A change of one file of src/: the text it finds (exactly once) and what it puts instead. */
interface Edit { file: string, find: RegExp, put: (found: string) => string }

/** The next migration's name, after the last of src/store/migrations.ts (the copy's own order). */
function nextMigration (source: string): string {
  const names = [...source.matchAll(/^ {2}'(\d{4})-[\w-]+': \{/gm)].map(([, number = '']) => Number(number))
  return `${String(Math.max(...names) + 1).padStart(4, '0')}-portfolio-risk-profile`
}

const migrations = readFileSync(join(root, 'src/store/migrations.ts'), 'utf8')
const EDITS: readonly Edit[] = [
  {
    // Appended after the last migration: the object's closing brace is the first line that is one.
    file: 'src/store/migrations.ts',
    find: /(export const MIGRATIONS: Record<string, Migration> = \{[\s\S]*?)\n\}\n/,
    put: found => found.replace(/\n\}\n$/, `,
  '${nextMigration(migrations)}': {
    async up (db: Kysely<unknown>) {
      await db.schema.alterTable('portfolios').addColumn('risk_profile', 'text').execute()
    }
  }
}
`)
  },
  {
    file: 'src/schemas/portfolio.ts',
    find: /\n {2}description: Type\.Union\(\[StoredText\(2000\), Type\.Null\(\)\][^\n]*\n/,
    put: found =>
      `${found}  riskProfile: Type.Union([StoredText(40), Type.Null()], { description: 'How much risk it takes' }),\n`
  },
  {
    // Before `description` in the create and update inputs, whose lines before it end with a comma.
    file: 'src/schemas/portfolio.ts',
    find: /\n {2}description: Type\.Optional\(Type\.Union\(\[Description, Type\.Null\(\)\]\)\)/g,
    put: found => `\n  riskProfile: Type.Optional(Type.Union([Type.String({ maxLength: 40 }), Type.Null()])),${found}`
  }
]

/** What docs/style.md says adding a portfolio's field is: the src/ files its sentence names. */
function documentedFiles (): string[] {
  const style = readFileSync(join(root, 'docs/style.md'), 'utf8')
  const section = /^## Adding a field\n([\s\S]*?)(?=^## )/m.exec(style)?.[1] ?? ''
  const sentence = /Adding a field to a portfolio is\s([\s\S]*?)\n\n/.exec(section)?.[1] ?? ''
  return [...new Set([...sentence.matchAll(/`(src\/[\w/.-]+\.ts)`/g)].map(([, path = '']) => path))]
}

/** Applies `edit` to the copy; each must find what it looks for, the input schemas' twice (create, update). */
function apply (edit: Edit): void {
  const path = join(copy, edit.file)
  const source = readFileSync(path, 'utf8')
  const matches = [...source.matchAll(new RegExp(edit.find, 'g'))].length
  if (matches !== (edit.find.global ? 2 : 1)) {
    throw new Error(`${edit.file}: ${String(edit.find)} found ${matches} times`)
  }
  writeFileSync(path, source.replace(edit.find, edit.put))
}

/** The files of the copy that differ from src/'s, as paths from the project's root. */
function changedFiles (): string[] {
  const files = readdirSync(join(root, 'src'), { recursive: true, encoding: 'utf8' })
  return files.filter(name => name.endsWith('.ts')).map(name => `src/${name}`)
    .filter(path => readFileSync(join(root, path), 'utf8') !== readFileSync(join(copy, path), 'utf8'))
    .sort()
}

rmSync(copy, { recursive: true, force: true })
cpSync(join(root, 'src'), join(copy, 'src'), { recursive: true })
t.teardown(() => { rmSync(copy, { recursive: true, force: true }) })
for (const edit of EDITS) apply(edit)

t.test('the copy changes the files docs/style.md names, and no other', async t => {
  const named = documentedFiles()
  t.same(named, ['src/store/migrations.ts', 'src/schemas/portfolio.ts'], 'the migration and the schema')
  t.same(changedFiles(), [...named].sort())
})

t.test('the copy type-checks: no other file must follow', async t => {
  writeFileSync(join(copy, 'tsconfig.json'), JSON.stringify({
    extends: '../../tsconfig.json',
    compilerOptions: { rootDir: '.' },
    include: ['src']
  }))
  const tsc = join(root, 'node_modules/typescript/bin/tsc')
  const checked = await promisify(execFile)(process.execPath, [tsc, '-p', join(copy, 'tsconfig.json')])
    .then(() => '', (error: { stdout?: string }) => error.stdout ?? String(error))
  t.equal(checked, '', 'tsc --noEmit reports nothing')
})

forEachEngine(t, 'the field is stored, read, changed and cleared through REST and GraphQL', async (t, engine) => {
  const { loadConfig } = await import(pathToFileURL(join(copy, 'src/config/config.ts')).href) as
    typeof import('../../src/config/config.js')
  const { buildApp } = await import(pathToFileURL(join(copy, 'src/app.ts')).href) as typeof import('../../src/app.js')
  const { env } = await freshDatabase(t, engine)
  const app = await buildApp(loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    MAX_EVENT_LOOP_DELAY_MS: '0',
    JWT_SECRET: tymon.secret,
    API_KEYS: TEST_API_KEYS.join(','),
    QUOTES_PROVIDER: 'offline',
    ...env
  }))
  t.teardown(() => app.close())
  await app.ready()
  const headers = apiKey()

  const created = await app.inject({
    method: 'POST', url: '/portfolios', headers, payload: { name: 'Longo prazo', userId: '42', riskProfile: 'moderado' }
  })
  t.equal(created.statusCode, 201)
  const { id, riskProfile } = created.json() as { id: string, riskProfile: unknown }
  t.equal(riskProfile, 'moderado', 'POST answers it')
  const read = async (): Promise<unknown> =>
    ((await app.inject({ url: `/portfolios/${id}`, headers })).json() as { riskProfile: unknown }).riskProfile
  t.equal(await read(), 'moderado', 'GET reads it from its column')

  const patch = async (riskProfile: unknown) =>
    await app.inject({ method: 'PATCH', url: `/portfolios/${id}`, headers, payload: { riskProfile } })
  const patched = await patch('arrojado')
  t.equal(patched.statusCode, 200)
  t.equal((patched.json() as { riskProfile: unknown }).riskProfile, 'arrojado', 'PATCH changes it')
  t.equal(await read(), 'arrojado')
  const tooLong = await patch('x'.repeat(41))
  t.equal(tooLong.statusCode, 400, 'its input schema bounds it')
  const listed = (await app.inject({ url: '/portfolios?userId=42', headers })).json() as Array<{ riskProfile: unknown }>
  t.same(listed.map(portfolio => portfolio.riskProfile), ['arrojado'], 'the list reads it too')

  const made = await graphql(app, 'createPortfolio',
    'mutation { createPortfolio(input: { name: "Renda", userId: "42", riskProfile: "conservador" }) ' +
      '{ id riskProfile } }',
    {}, headers)
  t.same(made.errors, [])
  const madeId = (made.value as { id: string }).id
  t.equal((made.value as { riskProfile: unknown }).riskProfile, 'conservador', 'GraphQL creates with it')
  const changed = await graphql(app, 'updatePortfolio',
    'mutation ($id: ID!) { updatePortfolio(id: $id, input: { riskProfile: null }) { riskProfile } }',
    { id: madeId }, headers)
  t.same(changed.value, { riskProfile: null }, 'and clears it')
  const queried = await graphql(app, 'portfolio', 'query ($id: ID!) { portfolio(id: $id) { riskProfile } }',
    { id }, headers)
  t.same(queried.value, { riskProfile: 'arrojado' }, 'and reads what REST wrote')

  const document = (await app.inject({ url: '/docs/json' })).json() as {
    components: { schemas: Record<string, { properties?: Record<string, unknown> }> }
  }
  for (const schema of ['Portfolio', 'PortfolioDetail', 'CreatePortfolioInput', 'UpdatePortfolioInput']) {
    t.ok(document.components.schemas[schema]?.properties?.riskProfile, `the OpenAPI document's ${schema} has it`)
  }
})
