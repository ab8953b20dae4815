import { createHmac, randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import pg from 'pg'
import type { Test } from 'tap'
import Fastify, { type FastifyBaseLogger, type FastifyServerOptions } from 'fastify'
import { buildApp, type App } from '../src/app.js'
import { loadConfig, type AppConfig } from '../src/config/config.js'

export interface FixtureToken {
  name: string
  token: string
  expect: { valid: boolean, type: 'user' | 'client' | null }
  payload: Record<string, unknown>
}

/** Tokens minted by a real Laravel app with tymon/jwt-auth. */
export const tymon = JSON.parse(readFileSync(new URL('./fixtures/tymon-tokens.json', import.meta.url), 'utf8')) as {
  secret: string
  userProviderHash: string
  clientProviderHash: string
  tokens: FixtureToken[]
}

export function fixtureToken (name: string): FixtureToken {
  const found = tymon.tokens.find(token => token.name === name)
  if (found === undefined) throw new Error(`no fixture token ${name}`)
  return found
}

/** The Docker image's CMD, in exec form: `CMD ["node", …]`: what operators start. */
export function imageCommand (): string[] {
  const dockerfile = readFileSync(new URL('../Dockerfile', import.meta.url), 'utf8')
  const line = dockerfile.split('\n').filter(text => text.startsWith('CMD ')).at(-1)
  if (line === undefined) throw new Error('Dockerfile has no CMD')
  return JSON.parse(line.slice('CMD '.length)) as string[]
}

/** A logger that writes nothing, for code that takes the asking request's `log`. */
export const silentLog: FastifyBaseLogger = Fastify({ logger: false }).log

/**
 * The user-facing texts (docs/api.md#error-codes), written out here rather than imported
 * from src: a change of wording in the service must fail a test.
 */
export const TEXTS = {
  tokenInvalid: 'Token não fornecido ou inválido',
  tokenExpired: 'Token expirado',
  subjectMissing: 'Subject não encontrado no token',
  forbiddenPrincipal: 'Acesso negado para este tipo de usuário',
  apiKeyInvalid: 'API key inválida ou ausente',
  webhookSecretInvalid: 'Segredo do webhook inválido ou ausente',
  upstreamUnavailable: 'Serviço externo indisponível',
  upstreamTimeout: 'Tempo limite do serviço externo excedido',
  quoteQuotaSpent: (seconds: number) =>
    `Limite de requisições do provedor de cotações atingido; tente novamente em ${seconds} segundos`,
  endpointNotAllowed: 'Endpoint ou método não permitido no agregador',
  notYourItem: 'Acesso negado a itens de outro usuário',
  otherClient: 'Acesso negado às transações de outro client',
  health: 'BFF Service está funcionando!'
} as const

export const TEST_API_KEYS = ['test-key-primary', 'test-key-rotated']

/**
 * A test configuration: the fixtures' secret, in-memory SQLite, silent logs, and no load
 * shedding — a busy machine must not turn unrelated tests into 503s (the shedding test turns it on).
 */
export function testConfig (overrides: Record<string, string> = {}): AppConfig {
  return loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    MAX_EVENT_LOOP_DELAY_MS: '0',
    // Tests send many refused credentials from one address; the budget's own test lowers it.
    AUTH_FAILURES_PER_MINUTE: '1000000',
    JWT_SECRET: tymon.secret,
    API_KEYS: TEST_API_KEYS.join(','),
    DATABASE_URL: 'sqlite::memory:',
    // Named, as production requires (tests of the default leave testConfig aside).
    QUOTES_PROVIDER: 'offline',
    ...overrides
  })
}

/** The whole app on a test configuration, closed when the test ends. */
export async function buildTestApp (
  t: Test, overrides: Record<string, string> = {}, server: FastifyServerOptions = {}
): Promise<App> {
  const app = await buildApp(testConfig(overrides), server)
  t.teardown(() => app.close())
  await app.ready()
  return app
}

export function apiKey (key = TEST_API_KEYS[0]): Record<string, string> {
  return { 'x-api-key': key ?? '' }
}

export function bearer (token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` }
}

const base64url = (value: string | Buffer): string => Buffer.from(value).toString('base64url')

/**
 * Signs a token by hand, as tymon/jwt-auth does (HMAC over `header.payload`), independently of
 * the service's own code, so tests can also make the malformed tokens no library would.
 */
export function signToken (
  payload: unknown,
  { secret = tymon.secret, alg = 'HS256', header }: {
    secret?: string
    alg?: string
    header?: Record<string,
    unknown>
  } = {}
): string {
  const head = base64url(JSON.stringify(header ?? { typ: 'JWT', alg }))
  const body = base64url(typeof payload === 'string' ? payload : JSON.stringify(payload))
  const hmac = { HS256: 'sha256', HS384: 'sha384', HS512: 'sha512' }[alg] ?? 'sha256'
  const signature = createHmac(hmac, secret).update(`${head}.${body}`).digest('base64url')
  return `${head}.${body}.${signature}`
}

export interface ClaimOptions {
  type?: 'user' | 'client'
  sub?: string | number
  /** Seconds relative to now. */
  iatOffset?: number
  nbfOffset?: number
  expOffset?: number
}

export interface TymonClaims {
  iss: string
  iat: number
  exp: number
  nbf: number
  jti: string
  sub: string | number
  prv?: string
  [claim: string]: unknown
}

/** The claims tymon/jwt-auth mints: `iss` a URL, integer seconds, a 16-character `jti`, `prv` = sha1 of the model. */
export function tymonClaims (
  { type = 'user', sub = 42, iatOffset = 0, nbfOffset = 0, expOffset = 3600 }: ClaimOptions = {}
): TymonClaims {
  const now = Math.floor(Date.now() / 1000)
  return {
    iss: `http://127.0.0.1:8001/api/${type === 'user' ? 'login' : 'client/login'}`,
    iat: now + iatOffset,
    exp: now + expOffset,
    nbf: now + nbfOffset,
    jti: randomBytes(12).toString('base64url').slice(0, 16),
    sub,
    prv: type === 'user' ? tymon.userProviderHash : tymon.clientProviderHash
  }
}

export function userToken (options: ClaimOptions = {}): string {
  return signToken(tymonClaims({ ...options, type: 'user' }))
}

export function clientToken (options: ClaimOptions = {}): string {
  return signToken(tymonClaims({ ...options, type: 'client' }))
}

/** The error codes (docs/api.md#error-codes), written out (a renamed code must fail a test). */
const ERROR_CODE = new RegExp(`^(${[
  'VALIDATION_FAILED', 'BAD_REQUEST', 'TOKEN_INVALID', 'TOKEN_EXPIRED', 'SUBJECT_MISSING', 'API_KEY_INVALID',
  'WEBHOOK_SECRET_INVALID', 'FORBIDDEN_PRINCIPAL', 'FORBIDDEN', 'NOT_FOUND', 'REQUEST_TIMEOUT', 'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE', 'RATE_LIMITED', 'UPSTREAM_UNAVAILABLE', 'UPSTREAM_TIMEOUT', 'OVERLOADED', 'NOT_CONFIGURED',
  'DRAINING', 'STORE_UNAVAILABLE', 'IDEMPOTENCY_KEY_IN_FLIGHT', 'IDEMPOTENCY_KEY_REUSED', 'PRECONDITION_FAILED',
  'INSUFFICIENT_QUANTITY', 'INTERNAL_ERROR'
].join('|')})$`)

/** Asserts the standard error body (docs/api.md#errors) with one of the error codes. */
export function assertErrorBody (t: Test, body: unknown, statusCode: number, path: string): void {
  t.match(body, {
    statusCode,
    code: ERROR_CODE,
    error: String,
    timestamp: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/,
    path
  })
}

/** PostgreSQL for the data tests: `DATABASE_URL=postgres://…` (see `.ci/start-postgres`). */
export const POSTGRES_URL = /^postgres(?:ql)?:\/\//.test(process.env.DATABASE_URL ?? '')
  ? process.env.DATABASE_URL
  : undefined

export type Engine = 'sqlite' | 'postgres'

/**
 * A test that needs something outside npm (a PostgreSQL URL, a Debian binary): with all of
 * `missing` empty it runs; otherwise it is skipped with a reason locally, and fails under
 * CI=true, where .ci/run installs everything — so it never passes silently there.
 */
export function testNeeding (t: Test, name: string, missing: string[], fn: (t: Test) => Promise<void>): void {
  const absent = missing.filter(Boolean)
  if (absent.length === 0) t.test(name, fn)
  else if (process.env.CI === 'true') t.test(name, async t => { t.fail(`CI=true needs ${absent.join(' and ')}`) })
  else t.test(name, { skip: `needs ${absent.join(' and ')}` }, async () => {})
}

export const NEEDS_POSTGRES = POSTGRES_URL === undefined ? 'DATABASE_URL=postgres://… (see .ci/start-postgres)' : ''

/** Runs a data test on SQLite and on PostgreSQL (see testNeeding for a missing PostgreSQL). */
export function forEachEngine (t: Test, name: string, fn: (t: Test, engine: Engine) => Promise<void>): void {
  t.test(`${name} [sqlite]`, async t => { await fn(t, 'sqlite') })
  testNeeding(t, `${name} [postgres]`, [NEEDS_POSTGRES], async t => { await fn(t, 'postgres') })
}

/** A test's own database: its URL, the schema it names (DATABASE_SCHEMA), and both as variables. */
export interface TestDatabase {
  url: string
  schema: string | undefined
  env: { DATABASE_URL: string, DATABASE_SCHEMA?: string }
  /** The URL with the schema as the session's search_path: for tests of their own raw SQL on a direct connection. */
  searchPathUrl: string
}

/**
 * A database of its own for one test: in-memory SQLite, or a fresh PostgreSQL schema, dropped
 * afterwards, named by DATABASE_SCHEMA as a pooler allows (docs/deploy.md#poolers). `base` is the
 * server's URL (a pooler's, for instance); the schema is made on DATABASE_URL's server.
 */
export async function freshDatabase (t: Test, engine: Engine, base = POSTGRES_URL): Promise<TestDatabase> {
  if (engine === 'sqlite' || POSTGRES_URL === undefined || base === undefined) {
    const url = 'sqlite::memory:'
    return { url, schema: undefined, env: { DATABASE_URL: url }, searchPathUrl: url }
  }
  const schema = `t_${randomBytes(8).toString('hex')}`
  const admin = new pg.Client({ connectionString: POSTGRES_URL })
  await admin.connect()
  await admin.query(`create schema ${schema}`)
  await admin.end()
  t.teardown(async () => {
    const cleanup = new pg.Client({ connectionString: POSTGRES_URL })
    await cleanup.connect()
    await cleanup.query(`drop schema ${schema} cascade`)
    await cleanup.end()
  })
  const searchPath = new URL(POSTGRES_URL)
  searchPath.searchParams.set('options', `-c search_path=${schema}`)
  return { url: base, schema, env: { DATABASE_URL: base, DATABASE_SCHEMA: schema }, searchPathUrl: searchPath.href }
}

/** Store.open's (or connect's) arguments for a test's own database. */
export async function freshStore (t: Test, engine: Engine): Promise<[string, { schema?: string }]> {
  const { url, schema } = await freshDatabase(t, engine)
  return [url, schema === undefined ? {} : { schema }]
}

/** The whole app on a fresh database of the given engine. */
export async function buildDataApp (t: Test, engine: Engine, overrides: Record<string, string> = {}): Promise<App> {
  return await buildTestApp(t, { ...(await freshDatabase(t, engine)).env, ...overrides })
}
