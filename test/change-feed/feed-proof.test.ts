import t from 'tap'
import { FeedProof } from '../../src/change-feed/feed-proof.js'
import { DependencyHealth } from '../../src/observability/dependencies.js'
import { capturedLog } from '../fixtures/captured-log.js'
import { until } from '../fixtures/until.js'

/*
 * The heartbeats' bookkeeping alone, with a feed that echoes (or not) what it is sent; the transports'
 * own tests (change-feed.test.ts) and the pooler suite run it over real connections.
 */

function proofWith (send: (stamp: string) => Promise<void>) {
  const { log, lines } = capturedLog()
  const resyncs: number[] = []
  const proof = new FeedProof({
    intervalMs: 20,
    boundMs: 300,
    send,
    health: new DependencyHealth('change_feed', log),
    resync: () => { resyncs.push(Date.now()) },
    hint: 'what to do'
  })
  return { proof, lines, resyncs }
}

t.test('only a heartbeat sent since the connection listens proves it; garbage and old ones do not', async t => {
  const sent: string[] = []
  const { proof, resyncs } = proofWith(async stamp => { sent.push(stamp) })
  t.teardown(() => { proof.stop() })
  await until('a heartbeat sent', () => sent.length > 0)
  const before = sent[0] ?? ''
  proof.returned(before)
  t.equal(proof.proven(), false, 'not listening yet')
  proof.listening()
  proof.returned(before)
  proof.returned('not a number')
  t.equal(proof.proven(), false, 'sent before it listened, or garbage')
  proof.returned(sent.at(-1) ?? '')
  t.equal(proof.proven(), true)
  t.equal(resyncs.length, 1, 'proven: everything read again')
  proof.returned(sent.at(-1) ?? '')
  t.equal(resyncs.length, 1, 'once per return to proven')
  await proof.settled

  const onItsWay = sent.at(-1) ?? ''
  proof.failed(new Error('publisher connection reset'))
  t.equal(proof.proven(), false, 'a connection\'s error: unproven at once')
  proof.returned(onItsWay)
  t.equal(proof.proven(), false, 'a heartbeat sent before the error proves nothing')
  const count = sent.length
  await until('another heartbeat sent', () => sent.length > count)
  proof.returned(sent.at(-1) ?? '')
  t.equal(proof.proven(), true, 'one sent since does')
  t.equal(resyncs.length, 2)
})

t.test('heartbeats that cannot be sent, or that stop coming back, make it unproven with the reason', async t => {
  let failing = true
  const { proof, lines } = proofWith(async () => { if (failing) throw new Error('publisher down') })
  t.teardown(() => { proof.stop() })
  proof.listening()
  // The proof's timer does not hold the process open (an app's server does): polling does here.
  await until('a line logged', () => lines.length > 0)
  await proof.settled
  t.match(lines, [{ msg: 'dependency unavailable', err: { message: /none could be sent \(publisher down\)$/ } }])
  failing = false
  const echo = proofWith(async stamp => { if (!failing) setImmediate(() => { echo.proof.returned(stamp) }) })
  t.teardown(() => { echo.proof.stop() })
  echo.proof.listening()
  await until('the echo proven', () => echo.proof.proven())
  t.equal(echo.proof.proven(), true)
  failing = true
  await until('the echo logged', () => echo.lines.length > 0)
  const reason = 'change feed unproven: no heartbeat came back within 300 ms; what to do'
  t.match(echo.lines, [{ msg: 'dependency unavailable', err: { message: reason } }])
  t.equal(echo.proof.proven(), false)
  echo.proof.lost(new Error('closed'))
  t.equal(echo.lines.length, 1, 'one line for the outage')
})
