import '../supported-node.js'
import { parseArgs } from 'node:util'
import { ConfigError, loadConfig } from '../config/config.js'
import { loadOrCreateDevSecrets } from '../config/dev-secrets.js'
import { mintToken } from '../schemas/tokens.js'

const HELP = `Usage: npm run token -- [--type user|client] [--sub ID] [--ttl SECONDS]

Prints a token with the claims tymon/jwt-auth puts in one (iss, iat, nbf, exp, jti, sub, prv),
signed with JWT_SECRET and JWT_ALGORITHM from the environment — or, outside production, with
the development secret in ./data/dev-secrets.json that \`npm start\` prints.

  --type   user (default) or client: the provider hash put in prv
  --sub    the subject, the principal's id (default 1)
  --ttl    lifetime in seconds (default JWT_TTL, 3600)
  --help   this text

Example: TOKEN=$(npm run --silent token -- --type client --sub 42)
`

/** `npm run token -- --type user|client [--sub 1] [--ttl 3600]`: a token signed with the configured secret. */
function main (): void {
  const { values } = parseArgs({
    options: {
      type: { type: 'string', default: 'user' },
      sub: { type: 'string', default: '1' },
      ttl: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false }
    }
  })
  if (values.help === true) {
    process.stdout.write(HELP)
    return
  }
  if (values.type !== 'user' && values.type !== 'client') throw new ConfigError('--type must be user or client')
  const config = loadConfig(process.env, { devSecrets: () => loadOrCreateDevSecrets('data') })
  // A misspelt JWT_SECRET would sign with another secret: say so beside the token (which alone goes to stdout).
  for (const { message } of config.misspellings) process.stderr.write(`warning: ${message}\n`)
  const ttlSeconds = values.ttl === undefined ? config.env.JWT_TTL : Number(values.ttl)
  if (!Number.isInteger(ttlSeconds) || ttlSeconds <= 0) {
    throw new ConfigError('--ttl must be a positive number of seconds')
  }
  const { auth } = config
  process.stdout.write(`${mintToken({
    secret: auth.jwtSecret,
    algorithm: auth.jwtAlgorithm,
    providers: auth.providers,
    type: values.type,
    sub: values.sub,
    issuer: new URL(
      values.type === 'user' ? 'api/login' : 'api/client/login',
      `${config.env.BACKEND_URL.replace(/\/$/, '')}/`
    ).href,
    ttlSeconds
  })}\n`)
}

try {
  main()
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n`)
  process.exit(1)
}
