/**
 * A minimal Laravel-like upstream for the relay benchmark: a JSON profile behind any Bearer
 * token, answered after UPSTREAM_DELAY_MS (0: at once) to stand for the backend's own work.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

const delayMs = Number(process.env.UPSTREAM_DELAY_MS ?? 0)
const profile = JSON.stringify({ id: 1, name: 'Ana Souza', email: 'ana@example.com', phone: '+55 11 99999-0000' })
const server = createServer((req, res) => {
  if (!(req.headers.authorization ?? '').startsWith('Bearer ')) {
    res.writeHead(401, { 'content-type': 'application/json' })
    res.end('{"message":"Unauthenticated."}')
    return
  }
  const answer = (): void => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(profile) })
    res.end(profile)
  }
  if (delayMs > 0) setTimeout(answer, delayMs)
  else answer()
})
server.keepAliveTimeout = 72_000
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as AddressInfo).port}\n`)
})
process.on('SIGTERM', () => { server.closeAllConnections(); server.close(() => process.exit(0)) })
