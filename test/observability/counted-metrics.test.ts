import { Counter, Histogram, Registry } from 'prom-client'
import t from 'tap'
import { CountedCounter, CountedHistogram } from '../../src/observability/counted-metrics.js'

const buckets = [0.001, 0.01, 1]

/** The same series observed by prom-client's own classes and by the counted ones, each in a registry. */
interface Twins {
  theirs: Registry
  ours: Registry
  observe: (seconds: number, route: string, status: number) => void
  hit: (cache: string, result: string) => void
  counted: { histogram: CountedHistogram, counter: CountedCounter }
}

function both (): Twins {
  const theirs = new Registry()
  const ours = new Registry()
  const options = { name: 'requests_seconds', help: 'Requests', labelNames: ['route', 'status_code'] as const, buckets }
  const histogram = new Histogram({ ...options, registers: [theirs] })
  const counted = new CountedHistogram({ ...options, registers: [ours] })
  const counterOptions = { name: 'lookups_total', help: 'Lookups', labelNames: ['cache', 'result'] as const }
  const counter = new Counter({ ...counterOptions, registers: [theirs] })
  const countedCounter = new CountedCounter({ ...counterOptions, registers: [ours] })
  return {
    theirs,
    ours,
    observe: (seconds, route, status) => {
      histogram.labels(route, String(status)).observe(seconds)
      counted.observe(seconds, route, status)
    },
    hit: (cache, result) => {
      counter.labels(cache, result).inc()
      countedCounter.inc(cache, result)
    },
    counted: { histogram: counted, counter: countedCounter }
  }
}

t.test('a scrape reads as prom-client\'s own histogram and counter would', async t => {
  const { theirs, ours, observe, hit } = both()
  observe(0.0005, '/a', 200)
  observe(0.001, '/a', 200) // on a bound: counted in that bucket
  observe(0.5, '/a', 200)
  observe(7, '/a', 200) // past the last bound: +Inf only
  observe(0.002, '/b/:id', 404)
  hit('tokens', 'hit')
  hit('tokens', 'hit')
  hit('tokens', 'miss')
  hit('quotes', 'hit')
  t.equal(await ours.metrics(), await theirs.metrics())
  const json = async (registry: Registry): Promise<unknown> =>
    (await registry.getMetricsAsJSON()).map(metric => ({
      ...metric,
      values: metric.values.map(({ value, labels, ...rest }) =>
        ({ value, labels, metricName: (rest as { metricName?: string }).metricName }))
    }))
  t.same(await json(ours), await json(theirs), 'and so does its JSON')
})

t.test('a reset zeroes every series', async t => {
  const { theirs, ours, observe, hit, counted } = both()
  observe(0.5, '/a', 200)
  hit('tokens', 'hit')
  ours.resetMetrics()
  t.match(await ours.metrics(), /requests_seconds_count\{route="\/a",status_code="200"\} 0/)
  t.match(await ours.metrics(), /lookups_total\{cache="tokens",result="hit"\} 0/)
  t.equal(counted.histogram.type, 'histogram')
  t.not(await theirs.metrics(), await ours.metrics())
})
