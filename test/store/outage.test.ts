import t from 'tap'
import { isPoolWaitTimeout, isPostgresConnectionFailure, isSqliteUnavailable } from '../../src/store/outage.js'

const coded = (code: string, message = 'x'): Error => Object.assign(new Error(message), { code })

t.test('PostgreSQL: a lost or refused connection is an outage; a statement\'s own error is not', async t => {
  for (const error of [
    coded('ECONNREFUSED'), coded('ECONNRESET'), coded('ENOTFOUND'), coded('57P01'), coded('57P03'),
    coded('53300'), coded('08006'), new Error('Connection terminated unexpectedly'),
    new Error('Connection terminated due to connection timeout'),
    new Error('Client has encountered a connection error and is not queryable'), new Error('Query read timeout'),
    new Error('timeout exceeded when trying to connect')
  ]) t.ok(isPostgresConnectionFailure(error), error.message + String((error as { code?: string }).code))
  for (const error of [coded('23505'), coded('42P01'), coded('28P01'), coded('3D000'), new Error('syntax'), 'text']) {
    t.notOk(isPostgresConnectionFailure(error), String(error))
  }
  // PgBouncer in statement mode ends the connection of a transaction (08P01): configuration, never over by itself.
  t.notOk(isPostgresConnectionFailure(coded('08P01', 'transaction blocks not allowed in statement pooling mode')))
  t.ok(isPostgresConnectionFailure(coded('08P01', 'server conn crashed?')), 'PgBouncer\'s other 08P01s are outages')
  t.ok(isPoolWaitTimeout(new Error('timeout exceeded when trying to connect')))
  t.notOk(isPoolWaitTimeout(coded('ECONNREFUSED')))
})

t.test('SQLite: the file full, read-only, failing or locked is an outage; a constraint is not', async t => {
  for (const code of ['SQLITE_FULL', 'SQLITE_IOERR_WRITE', 'SQLITE_READONLY', 'SQLITE_READONLY_DBMOVED',
    'SQLITE_CANTOPEN', 'SQLITE_BUSY', 'SQLITE_CORRUPT', 'SQLITE_NOTADB']) t.ok(isSqliteUnavailable(coded(code)), code)
  for (const code of ['SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_ERROR', 'SQLITE_MISMATCH']) {
    t.notOk(isSqliteUnavailable(coded(code)), code)
  }
  t.notOk(isSqliteUnavailable(null))
})
