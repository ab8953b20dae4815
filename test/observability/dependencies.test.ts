import t from 'tap'
import { capturedLog } from '../fixtures/captured-log.js'
import { DependencyHealth } from '../../src/observability/dependencies.js'
import { PrometheusTelemetry } from '../../src/observability/telemetry.js'

t.test('an outage is one warning and one recovery line, however many failures; the gauge follows', async t => {
  const { log, lines } = capturedLog()
  const telemetry = new PrometheusTelemetry()
  const health = new DependencyHealth('store', log, telemetry)
  const gauge = async (): Promise<string> => (await telemetry.registry.metrics())
    .split('\n').find(line => line.startsWith('bff_dependency_up{')) ?? ''

  t.equal(await gauge(), '', 'nothing reported before the first use')
  health.up()
  t.equal(health.isUp, true)
  t.equal(await gauge(), 'bff_dependency_up{dependency="store"} 1')
  t.same(lines, [], 'the first success is not news')

  for (let failure = 0; failure < 50; failure++) health.down(new Error(`refused ${failure}`))
  t.equal(health.isUp, false)
  t.equal(await gauge(), 'bff_dependency_up{dependency="store"} 0')
  for (let success = 0; success < 50; success++) health.up()
  t.equal(await gauge(), 'bff_dependency_up{dependency="store"} 1')

  t.match(lines, [
    { level: 40, msg: 'dependency unavailable', dependency: 'store', err: { message: 'refused 0' } },
    { level: 30, msg: 'dependency available again', dependency: 'store', downForMs: Number }
  ])
  t.equal(lines.length, 2)
})

t.test('without metrics it only logs', async t => {
  const { log, lines } = capturedLog()
  const health = new DependencyHealth('span_export', log)
  health.down('a reason that is not an Error')
  health.up()
  t.equal(lines.length, 2)
})
