import t from 'tap'
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseEnv } from 'node:util'
import { ConfigError, ConfigSchema, loadConfig } from '../../src/config/config.js'
import { inDevelopmentFolder } from '../../src/config/development-folder.js'
import { leadingAssignments, readmeProductionCommand } from '../fixtures/readme.js'

/**
 * Production cannot start on development settings: not on the development folder's store, not
 * on a `.env` copied from `.env.example`; and what the docs say production requires is exactly
 * what the service checks, and what the README's production command sets.
 */
const root = new URL('../../', import.meta.url)
const production: Record<string, string> = {
  NODE_ENV: 'production',
  JWT_SECRET: 'x'.repeat(40),
  API_KEYS: 'k',
  DATABASE_URL: 'postgres://bff@db/bff',
  QUOTES_PROVIDER: 'offline'
}

t.test('production refuses a SQLite file in the development folder, however it is written', async t => {
  const checkout = mkdtempSync(join(tmpdir(), 'bff-checkout-'))
  mkdirSync(join(checkout, 'data'))
  symlinkSync(join(checkout, 'data'), join(checkout, 'link-to-data'))
  const refused = [
    'sqlite:./data/bff.sqlite',
    'sqlite:data/production.sqlite',
    `sqlite:${checkout}/data/bff.sqlite`,
    'sqlite:./other/../data/bff.sqlite',
    'sqlite:./data/nested/deeper/bff.sqlite',
    'sqlite:./data',
    'sqlite:./link-to-data/bff.sqlite'
  ]
  for (const url of refused) {
    t.throws(
      () => loadConfig({ ...production, DATABASE_URL: url }, { workingDirectory: checkout }),
      new ConfigError('DATABASE_URL must not be in ./data/ in production: that folder holds the development store ' +
        'and secrets'),
      url
    )
    t.ok(loadConfig({ DATABASE_URL: url }, { workingDirectory: checkout }), `${url} outside production`)
  }
  const accepted = [
    'sqlite:./database/bff.sqlite',
    'sqlite:./data-production/bff.sqlite',
    'sqlite:./..data/bff.sqlite',
    `sqlite:${join(mkdtempSync(join(tmpdir(), 'bff-volume-')), 'bff.sqlite')}`,
    'sqlite::memory:',
    'postgres://bff@db/bff'
  ]
  for (const url of accepted) {
    const config = loadConfig({ ...production, DATABASE_URL: url }, { workingDirectory: checkout })
    t.equal(config.store.url, url, `${url} is accepted`)
  }
  const elsewhere = mkdtempSync(join(tmpdir(), 'bff-elsewhere-'))
  t.equal(inDevelopmentFolder(`sqlite:${checkout}/data/bff.sqlite`, elsewhere), false,
    'the development folder is the working directory\'s (where npm start and npm run dev keep it)')
  t.equal(inDevelopmentFolder('sqlite:./data/bff.sqlite', elsewhere), true)
  t.throws(() => loadConfig({ ...production, DATABASE_URL: 'sqlite:./data/bff.sqlite' }), /must not be in \.\/data\//,
    'the working directory of the process by default')
})

const example = parseEnv(readFileSync(new URL('.env.example', root), 'utf8'))

t.test('.env.example lists every variable of the service, each with its default', async t => {
  t.same(Object.keys(example).sort(), Object.keys(ConfigSchema.properties).sort(), 'the same names')
  const secrets = { JWT_SECRET: 's', API_KEYS: 'k' }
  t.same(loadConfig({ ...example, ...secrets }).env, loadConfig(secrets).env, 'copied to .env, it changes nothing')
  t.same(loadConfig(example, { devSecrets: () => ({ jwtSecret: 'j', apiKey: 'a' }) }).misspellings, [])
})

t.test('a .env copied from .env.example satisfies nothing production requires', async t => {
  // The command an operator would try: `NODE_ENV=production JWT_SECRET=… API_KEYS=k1 npm run start:prod`.
  const env = { ...example, NODE_ENV: 'production', JWT_SECRET: production.JWT_SECRET, API_KEYS: 'k1' }
  t.throws(() => loadConfig(env), new ConfigError('Production requires DATABASE_URL, QUOTES_PROVIDER'))
})

interface RequiredRow { name: string, condition: Record<string, string> | undefined }

/** The table of docs/deploy.md, "Required in production": each variable and when it is required. */
function requiredInProduction (): RequiredRow[] {
  const deploy = readFileSync(new URL('docs/deploy.md', root), 'utf8')
  const section = deploy.slice(deploy.indexOf('### Required in production'))
  const table = section.slice(0, section.indexOf('\n\n', section.indexOf('|---')))
  return [...table.matchAll(/^\| `(\w+)` \| ([^|]+) \|/gm)].map(([, name = '', when = '']) => {
    if (when.trim() === 'always') return { name, condition: undefined }
    const condition = /^with `(\w+)(?:=(\w+))?`$/.exec(when.trim())
    if (condition === null) throw new Error(`docs/deploy.md: "${when}" is neither "always" nor "with \`…\`"`)
    return { name, condition: { [condition[1] ?? '']: condition[2] ?? 'set' } }
  })
}

t.test('docs/deploy.md lists exactly what production requires', async t => {
  const rows = requiredInProduction()
  const always = rows.filter(row => row.condition === undefined).map(row => row.name)
  const refused = t.throws(() => loadConfig({ NODE_ENV: 'production' }))
  const message = refused instanceof Error ? refused.message : ''
  const refusal = /^Production requires (.*)$/.exec(message)?.[1]?.split(', ') ?? []
  t.same(always, ['NODE_ENV', ...refusal], 'the variables required always: NODE_ENV and what an empty one lacks')
  for (const name of always.filter(name => name !== 'NODE_ENV')) {
    const { [name]: _left, ...without } = production
    t.throws(() => loadConfig(without), new RegExp(name), `${name} is required`)
  }
  t.ok(loadConfig(production), 'those alone start production: no other variable is required without its condition')
  const conditional = rows.filter(row => row.condition !== undefined)
  t.ok(conditional.length > 0)
  // Every condition met and every conditional variable set: accepted; any one of them left out: refused, naming it.
  const conditions = Object.assign({}, ...conditional.map(row => row.condition)) as Record<string, string>
  const values = Object.fromEntries(conditional.map(row => [row.name, `${row.name.toLowerCase()}-value`]))
  const env = { ...production, ...conditions, ...values }
  t.ok(loadConfig(env), `accepted with ${JSON.stringify(conditions)}`)
  for (const { name, condition } of conditional) {
    const { [name]: _left, ...without } = env
    t.throws(() => loadConfig(without), new RegExp(name), `${name} is required with ${JSON.stringify(condition)}`)
  }
})

t.test('the README\'s production command sets everything production requires', async t => {
  const lines = readmeProductionCommand()
  t.same(lines.slice(0, -1), ['npm run build'], 'it builds first')
  const start = lines.at(-1) ?? ''
  t.match(start, / npm run start:prod$/, 'then starts dist/server.js through npm run start:prod')
  const set = Object.fromEntries(leadingAssignments(start).map(({ name, value }) => [name, value]))
  t.equal(set.NODE_ENV, 'production')
  for (const { name, condition } of requiredInProduction()) {
    const met = ([variable, value]: [string, string]): boolean =>
      value === 'set' ? variable in set : set[variable] === value
    const applies = condition === undefined || Object.entries(condition).every(met)
    if (applies) t.ok(set[name] !== undefined, `the command sets ${name}`)
  }
  for (const [name, value] of Object.entries(set)) {
    t.ok(name in ConfigSchema.properties, `${name} is a variable of the service`)
    if (value.includes('…')) t.notOk(/[\s'"]/.test(value), `${name}'s placeholder is one word`)
  }
})
