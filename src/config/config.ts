import { randomBytes } from 'node:crypto'
import type { ErrorObject } from 'ajv'
import { ConfigSchema } from './schema.js'
import { validateConfig } from './config-validator.generated.js'
import { DEVELOPMENT_FOLDER, inDevelopmentFolder } from './development-folder.js'
import { misspeltVariables } from './misspellings.js'
import { isPostgresUrl } from '../store/database-url.js'
import { commaList, pluginOptions, type AppConfig } from './plugin-options.js'

export interface DevSecrets {
  jwtSecret: string
  apiKey: string
}

export interface LoadConfigOptions {
  /** Where development secrets come from when the environment has none (never used in production). */
  devSecrets?: () => DevSecrets
  /** Called with the development secrets actually used, so the caller can print them. */
  onDevSecrets?: (secrets: Partial<DevSecrets>) => void
  /** What a relative `sqlite:` file is relative to (the process's working directory by default). */
  workingDirectory?: string
}

/** A configuration that cannot start the service; its message is one line naming the variable. */
export class ConfigError extends Error {
  override name = 'ConfigError'
}

/** Production HMAC secrets must carry at least 256 bits (RFC 8725 §3.5). */
const MIN_PRODUCTION_SECRET_LENGTH = 32

export function randomDevSecrets (): DevSecrets {
  return { jwtSecret: randomBytes(32).toString('base64url'), apiKey: `dev-${randomBytes(16).toString('hex')}` }
}

/** One phrase per bad variable, naming it and what it may be; values are never echoed (they may be secrets). */
function configProblems (issues: ErrorObject[]): string {
  return issues.map(issue => {
    const name = issue.instancePath.replace(/^\//, '')
    if (issue.keyword === 'enum') return `${name} must be one of ${(issue.params.allowedValues as string[]).join(', ')}`
    return `${name} ${issue.message ?? 'is invalid'}`
  }).join('; ')
}

const SERVICE_VARIABLES = Object.keys(ConfigSchema.properties)

/**
 * Validates `env` (only what it is given, never `process.env` by itself) against {@link ConfigSchema},
 * and finds its variables that look like misspellings of the service's. A refusal names them too:
 * `Production requires DATABASE_URL` is clearer with `DATBASE_URL … did you mean DATABASE_URL?`.
 */
export function loadConfig (env: Record<string, string | undefined>, options: LoadConfigOptions = {}): AppConfig {
  const misspellings = misspeltVariables(env, SERVICE_VARIABLES)
  try {
    return { ...validatedConfig(env, options), misspellings }
  } catch (error) {
    if (!(error instanceof ConfigError) || misspellings.length === 0) throw error
    throw new ConfigError(`${error.message}; ${misspellings.map(({ message }) => message).join('; ')}`)
  }
}

function validatedConfig (
  env: Record<string, string | undefined>, options: LoadConfigOptions
): Omit<AppConfig, 'misspellings'> {
  const defined = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''))
  // Coerced, defaulted and stripped of unknown variables in a copy: `defined` keeps what was set.
  const values: Record<string, unknown> = { ...defined }
  if (!validateConfig(values)) {
    throw new ConfigError(`Invalid configuration: ${configProblems(validateConfig.errors ?? [])}`)
  }

  const production = values.NODE_ENV === 'production'
  if (production) {
    const missing = ['JWT_SECRET', 'API_KEYS'].filter(name => values[name as 'JWT_SECRET' | 'API_KEYS'] === undefined)
    // The default is the development store of the checkout: production names its own.
    if (defined.DATABASE_URL === undefined) missing.push('DATABASE_URL')
    if (values.AGGREGATOR_CLIENT_ID !== undefined && values.AGGREGATOR_WEBHOOK_SECRET === undefined) {
      missing.push('AGGREGATOR_WEBHOOK_SECRET')
    }
    // Simulated prices must be a choice in production, never a default nobody noticed.
    if (defined.QUOTES_PROVIDER === undefined) missing.push('QUOTES_PROVIDER')
    else if (values.QUOTES_PROVIDER === 'brapi' && values.BRAPI_TOKEN === undefined) {
      missing.push('BRAPI_TOKEN (QUOTES_PROVIDER=brapi)')
    }
    if (missing.length > 0) throw new ConfigError(`Production requires ${missing.join(', ')}`)
    // A copied development `.env` must not start production on the demo store beside the development secrets.
    if (inDevelopmentFolder(values.DATABASE_URL, options.workingDirectory ?? process.cwd())) {
      throw new ConfigError(`DATABASE_URL must not be in ./${DEVELOPMENT_FOLDER}/ in production: that folder holds ` +
        'the development store and secrets')
    }
    if ((values.JWT_SECRET ?? '').length < MIN_PRODUCTION_SECRET_LENGTH) {
      throw new ConfigError(`JWT_SECRET must be at least ${MIN_PRODUCTION_SECRET_LENGTH} characters in production`)
    }
  }
  if (values.API_KEYS !== undefined && commaList(values.API_KEYS).length === 0) {
    throw new ConfigError('API_KEYS must name at least one key')
  }
  for (const name of ['DATABASE_LISTEN_URL', 'DATABASE_SCHEMA'] as const) {
    if (values[name] !== undefined && !isPostgresUrl(values.DATABASE_URL)) {
      throw new ConfigError(`${name} needs a PostgreSQL DATABASE_URL`)
    }
  }
  if ((values.AGGREGATOR_CLIENT_ID === undefined) !== (values.AGGREGATOR_CLIENT_SECRET === undefined)) {
    throw new ConfigError('AGGREGATOR_CLIENT_ID and AGGREGATOR_CLIENT_SECRET must be set together')
  }

  let { JWT_SECRET, API_KEYS } = values
  if (JWT_SECRET === undefined || API_KEYS === undefined) {
    const generated = (options.devSecrets ?? randomDevSecrets)()
    const used: Partial<DevSecrets> = {}
    if (JWT_SECRET === undefined) JWT_SECRET = used.jwtSecret = generated.jwtSecret
    if (API_KEYS === undefined) API_KEYS = used.apiKey = generated.apiKey
    options.onDevSecrets?.(used)
  }
  return pluginOptions({ ...values, JWT_SECRET, API_KEYS })
}

export { ConfigSchema }
export type { AppConfig } from './plugin-options.js'
