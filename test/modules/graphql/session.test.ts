import { EventEmitter } from 'node:events'
import t from 'tap'
import type { Principal } from '../../../src/plugins/auth.js'
import { SubscriptionSession, TOKEN_EXPIRED_CLOSE_CODE } from '../../../src/modules/graphql/session.js'
import { TEXTS } from '../../helper.js'

/** A socket that records how it was closed, and emits `close` as ws does. */
class FakeSocket extends EventEmitter {
  closes: Array<[number, string]> = []
  close (code: number, reason: string): void {
    this.closes.push([code, reason])
    this.emit('close')
  }
}

function principalExpiring (atMs: number): Principal {
  return { expiresAt: new Date(atMs).toISOString() } as unknown as Principal
}

t.test('a subscription of an expired token is refused and its connection closed with 4401', async t => {
  const now = 1_800_000_000_000
  const socket = new FakeSocket()
  const session = new SubscriptionSession(socket, 0, () => now)
  t.throws(() => { session.admit(principalExpiring(now - 1)) }, {
    code: 'BFF_AUTH_TOKEN_EXPIRED',
    message: TEXTS.tokenExpired
  })
  t.same(socket.closes, [[TOKEN_EXPIRED_CLOSE_CODE, TEXTS.tokenExpired]])
  t.throws(
    () => {
      session.admit(principalExpiring(now - 1))
    },
    { code: 'BFF_AUTH_TOKEN_EXPIRED' },
    'and every later one'
  )
  t.equal(socket.closes.length, 1, 'closed once')
})

t.test('JWT_LEEWAY extends a session as it extends the token on REST', async t => {
  const now = 1_800_000_000_000
  const socket = new FakeSocket()
  const session = new SubscriptionSession(socket, 30_000, () => now)
  // Expired 29.95 s ago: within the leeway, admitted, and due to close in 50 ms.
  session.admit(principalExpiring(now - 29_950))
  t.same(socket.closes, [], 'within the leeway: admitted')
  socket.emit('close')
  // A later timer runs after the session's would have: it finds nothing closed by the session.
  await new Promise(resolve => setTimeout(resolve, 150))
  t.same(socket.closes, [], 'the timer is cleared with the connection')
})

t.test('the connection closes by itself when the token expires', async t => {
  const socket = new FakeSocket()
  const session = new SubscriptionSession(socket, 0)
  const closed = new Promise<void>(resolve => socket.once('close', () => resolve()))
  session.admit(principalExpiring(Date.now() + 50))
  await closed
  t.same(socket.closes, [[TOKEN_EXPIRED_CLOSE_CODE, TEXTS.tokenExpired]])
})
