/**
 * Which driver errors mean the database cannot serve — unreachable, restarting, full, read-only —
 * as opposed to a statement's own error (a constraint, a syntax error), which stays what it is.
 * The first are answered 503 `STORE_UNAVAILABLE` (docs/deploy.md#failure-modes).
 */

/** Node's socket errors of a connection refused, cut or never made. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH',
  'ENETDOWN', 'ENOTFOUND', 'EAI_AGAIN'
])

/**
 * PostgreSQL's SQLSTATEs of a server that is going away or not there yet: `57P01`
 * (`pg_terminate_backend`, a fast shutdown), `57P02` (crash), `57P03` (starting up), `53300`
 * (too many connections), and the connection exceptions of class `08`.
 */
const POSTGRES_GONE = /^(57P0[123]|53300|08...)$/

/** pg's own words for a connection that ended or never came (it gives them no code). */
const PG_CONNECTION_MESSAGES = [
  'Connection terminated',
  'Client has encountered a connection error',
  'Query read timeout',
  'timeout exceeded when trying to connect'
]

function codeOf (error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : ''
}

function messageOf (error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/**
 * PgBouncer in statement mode ends the connection of a client that begins a transaction (08P01, a
 * connection exception): the service's configuration, which no retry mends (docs/deploy.md#poolers).
 */
function isStatementPoolerRefusal (error: unknown): boolean {
  return messageOf(error).startsWith('transaction blocks not allowed in statement pooling mode')
}

/** A PostgreSQL connection failed, ended or timed out: the statement on it did not complete as far as we know. */
export function isPostgresConnectionFailure (error: unknown): boolean {
  const code = codeOf(error)
  if (isStatementPoolerRefusal(error)) return false
  if (NETWORK_CODES.has(code) || POSTGRES_GONE.test(code)) return true
  const message = messageOf(error)
  return PG_CONNECTION_MESSAGES.some(words => message.startsWith(words))
}

/** Every connection of the pool was busy for the whole wait: the database is slow or the instance busy, not gone. */
export function isPoolWaitTimeout (error: unknown): boolean {
  return messageOf(error).startsWith('timeout exceeded when trying to connect')
}

/**
 * SQLite's result codes (better-sqlite3 gives the extended one: `SQLITE_IOERR_WRITE`,
 * `SQLITE_READONLY_DBMOVED`…) of a file that cannot be written or read: the disk full, an I/O
 * error, a read-only or removed file, a lock held past `busy_timeout`.
 */
const SQLITE_UNAVAILABLE = /^SQLITE_(FULL|IOERR|READONLY|CANTOPEN|BUSY|LOCKED|CORRUPT|NOTADB)/

export function isSqliteUnavailable (error: unknown): boolean {
  return SQLITE_UNAVAILABLE.test(codeOf(error))
}
