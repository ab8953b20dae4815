import t from 'tap'
import fc from 'fast-check'
import { readFileSync } from 'node:fs'
import { isDeepStrictEqual } from 'node:util'
import { CONFIG_VALIDATOR_FILE, compiledConfigSchema, configValidatorCode } from '../../src/cli/config-validator.js'
import { validateConfig } from '../../src/config/config-validator.generated.js'
import { ConfigSchema, loadConfig } from '../../src/config/config.js'

t.test('the generated validator is what the schema and Ajv generate today', async t => {
  t.equal(readFileSync(CONFIG_VALIDATOR_FILE, 'utf8'), configValidatorCode(),
    'run `npm run build:config-validator` (npm install, build and dev run it) after changing src/config/schema.ts')
})

/** Values that pass, fail, coerce or default one variable or another, a surrogate pair among them (minLength). */
const VALUES = [
  '0', '1', '-1', '3000', '70000', '1.5', '1e3', ' 8', 'true', 'false', 'null', 'x', '\u{1F600}', ' ', ',',
  'production', 'test', 'HS512', 'RS256', 'user', 'brapi', 'GET,POST', '/items,/loans', 'api/../x', 'api/me',
  'http://127.0.0.1:9', 'https://a b', 'sqlite:./x.sqlite', 'postgres://h/db', 'redis://h', '10.0.0.0/8, ::1',
  'a'.repeat(40), '0123456789abcdef0123456789abcdef01234567'
]
const variables = fc.dictionary(
  fc.oneof(fc.constantFrom(...Object.keys(ConfigSchema.properties)), fc.constantFrom('PATH', 'PORTS', '__proto__')),
  fc.constantFrom(...VALUES),
  { maxKeys: 12 }
)

t.test('it answers as Ajv compiling the schema at start did: coercions, defaults, removals and errors', async t => {
  const { validate: compiled } = compiledConfigSchema()
  // fast-check names the first variables answered differently, shrunk.
  fc.assert(fc.property(variables, env => {
    const generated = { ...env }
    const atStart = { ...env }
    return validateConfig(generated) === compiled(atStart) && isDeepStrictEqual(generated, atStart) &&
      isDeepStrictEqual(validateConfig.errors, compiled.errors)
  }), { numRuns: 300 })
  t.pass('300 sets of variables answered alike')
})

t.test('loadConfig coerces and defaults a copy: the caller\'s variables stay as they were', async t => {
  const env = { PORT: '8080', PATH: '/bin', JWT_SECRET: 's', API_KEYS: 'k', HOST: '' }
  const before = { ...env }
  t.equal(loadConfig(env).env.PORT, 8080)
  t.strictSame(env, before)
})
