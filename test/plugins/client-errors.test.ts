import t from 'tap'
import { connect } from 'node:net'
import { once } from 'node:events'
import { assertErrorBody, buildTestApp } from '../helper.js'
import { parseAnswer } from '../fixtures/raw-client.js'
import { clientErrorAnswer } from '../../src/plugins/error-responses.js'

/** Writes `bytes` on a new connection and reads until the server closes it. */
async function exchange (port: number, bytes: string): Promise<string> {
  const socket = connect(port, '127.0.0.1')
  let received = ''
  socket.setEncoding('utf8')
  socket.on('data', chunk => { received += String(chunk) })
  socket.on('error', () => {})
  await once(socket, 'connect')
  socket.write(bytes)
  await once(socket, 'close')
  return received
}

/** The standard error body has these fields and no other (docs/api.md#errors). */
const ERROR_BODY_FIELDS = ['code', 'error', 'message', 'path', 'statusCode', 'timestamp']

function headersOf (received: string): string {
  return received.slice(0, received.indexOf('\r\n\r\n')).toLowerCase()
}

t.test('a request Node cannot read is answered in the standard error body, then the connection closes', async t => {
  const app = await buildTestApp(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = (app.server.address() as { port: number }).port

  const cases = [
    { label: 'a malformed request line', bytes: 'NOT HTTP AT ALL\r\n\r\n', status: 400, code: 'BAD_REQUEST' },
    {
      label: 'a header with a space in its name',
      bytes: 'GET /auth/health HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n',
      status: 400,
      code: 'BAD_REQUEST'
    },
    {
      label: 'headers over 16 KiB',
      bytes: `GET /auth/health HTTP/1.1\r\nHost: x\r\nx-big: ${'a'.repeat(20 * 1024)}\r\n\r\n`,
      status: 431,
      code: 'BAD_REQUEST'
    }
  ]
  for (const { label, bytes, status, code } of cases) {
    const received = await exchange(port, bytes)
    const answer = parseAnswer(received)
    t.equal(answer.status, status, `${label}: ${status}`)
    assertErrorBody(t, answer.body, status, '')
    t.same(Object.keys(answer.body as object).sort(), ERROR_BODY_FIELDS, `${label}: the standard error body`)
    t.match(answer.body, { statusCode: status, code, message: String, path: '' }, label)
    t.match(headersOf(received), /cache-control: no-store/, `${label}: no-store`)
    t.match(headersOf(received), /connection: close/, `${label}: says the connection closes`)
  }
  // The server is still serving.
  t.equal((await fetch(`http://127.0.0.1:${port}/auth/health`)).status, 200)
})

t.test('a request not whole in time is 408 REQUEST_TIMEOUT, in the standard body', async t => {
  const answer = parseAnswer(clientErrorAnswer('ERR_HTTP_REQUEST_TIMEOUT', new Date('2026-01-02T03:04:05.000Z')))
  t.equal(answer.status, 408)
  t.same(answer.body, {
    statusCode: 408,
    code: 'REQUEST_TIMEOUT',
    message: 'A requisição não chegou inteira dentro do tempo limite',
    error: 'Request Timeout',
    timestamp: '2026-01-02T03:04:05.000Z',
    path: ''
  })
})

t.test('an unknown client error code is a malformed request', async t => {
  t.match(parseAnswer(clientErrorAnswer('HPE_INVALID_METHOD')), { status: 400, body: { code: 'BAD_REQUEST' } })
  t.match(parseAnswer(clientErrorAnswer(undefined)), { status: 400, body: { code: 'BAD_REQUEST' } })
})
