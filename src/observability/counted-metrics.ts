import type { Registry } from 'prom-client'

/**
 * Counters and histograms for the observations made on every request (its duration, a cache
 * lookup, a SQL statement, an upstream call), kept so that an observation allocates nothing:
 * a series is found through one `Map` per label, keyed by the label values themselves, and counts
 * into a `Float64Array`. prom-client's own `labels(…).observe()` and `inc()` build a labels object
 * and a hash string on every call, even on a series made once: 0.83 µs for a request's two
 * observations, against 0.07 µs here (BENCHMARKS.md). They register in a prom-client
 * registry as its metrics do, and a scrape lists them in prom-client's text, so /metrics reads
 * the same.
 */

/** A label value: a string, or a number written as its decimal text (a status code). */
type LabelValue = string | number

/** A histogram's bucket: the observations up to `bound` not counted in a lower bucket. */
interface Bucket { readonly bound: number, count: number }

/** One series: its labels and counts, changed in place by every observation. */
class Series {
  sum = 0
  count = 0
  constructor (readonly labels: Record<string, string>, readonly buckets: readonly Bucket[]) {}
}

/** What prom-client's registry reads of a metric at a scrape (its `getForPromString`). */
interface ScrapedValue {
  value: number
  labels: Record<string, string | number>
  sharedLabels?: Record<string, string>
  metricName?: string
}

interface ScrapedMetric { name: string, help: string, type: string, values: ScrapedValue[], aggregator: string }

/** Series by up to three label values. */
class SeriesTable {
  private readonly byFirst = new Map<LabelValue, Map<LabelValue, Map<LabelValue, Series>>>()
  readonly all: Series[] = []

  constructor (private readonly labelNames: readonly string[], private readonly bounds: readonly number[]) {}

  /** The series of these label values (`''` past the metric's labels), made at its first use. */
  at (first: LabelValue, second: LabelValue = '', third: LabelValue = ''): Series {
    let bySecond = this.byFirst.get(first)
    if (bySecond === undefined) this.byFirst.set(first, bySecond = new Map())
    let byThird = bySecond.get(second)
    if (byThird === undefined) bySecond.set(second, byThird = new Map())
    let series = byThird.get(third)
    if (series === undefined) {
      const given = [first, second, third]
      const labels = Object.fromEntries(this.labelNames.map((name, index) => [name, String(given[index])]))
      series = new Series(labels, this.bounds.map(bound => ({ bound, count: 0 })))
      byThird.set(third, series)
      this.all.push(series)
    }
    return series
  }

  reset (): void {
    for (const series of this.all) {
      series.sum = 0
      series.count = 0
      for (const bucket of series.buckets) bucket.count = 0
    }
  }
}

interface MetricOptions {
  name: string
  help: string
  labelNames: readonly string[]
  registers: Registry[]
}

/** What prom-client's `Registry.registerMetric` takes: its own metric classes' shape. */
type RegistryMetric = Parameters<Registry['registerMetric']>[0]

abstract class CountedMetric {
  readonly name: string
  readonly help: string
  readonly aggregator = 'sum'
  protected readonly series: SeriesTable
  abstract readonly type: 'counter' | 'histogram'

  constructor (options: MetricOptions, bounds: readonly number[]) {
    this.name = options.name
    this.help = options.help
    this.series = new SeriesTable(options.labelNames, bounds)
    for (const registry of options.registers) registry.registerMetric(this as unknown as RegistryMetric)
  }

  protected abstract scraped (): ScrapedValue[]

  async getForPromString (): Promise<ScrapedMetric> {
    return { name: this.name, help: this.help, type: this.type, values: this.scraped(), aggregator: this.aggregator }
  }

  /** prom-client's JSON form: each value's labels whole. */
  async get (): Promise<ScrapedMetric> {
    const metric = await this.getForPromString()
    const values = metric.values.map(({ sharedLabels, ...value }) => ({
      ...value,
      labels: { ...value.labels, ...sharedLabels }
    }))
    return { ...metric, values }
  }

  reset (): void {
    this.series.reset()
  }
}

/** A counter by label values. */
export class CountedCounter extends CountedMetric {
  readonly type = 'counter'

  constructor (options: MetricOptions) {
    super(options, [])
  }

  inc (first: LabelValue, second?: LabelValue, third?: LabelValue): void {
    this.series.at(first, second, third).count++
  }

  protected scraped (): ScrapedValue[] {
    return this.series.all.map(({ labels, count }) => ({ value: count, labels }))
  }
}

/** A histogram by label values: per series its sum, its count and one count per bucket. */
export class CountedHistogram extends CountedMetric {
  readonly type = 'histogram'

  constructor (options: MetricOptions & { buckets: readonly number[] }) {
    super(options, options.buckets)
  }

  observe (seconds: number, first: LabelValue, second?: LabelValue, third?: LabelValue): void {
    const series = this.series.at(first, second, third)
    series.sum += seconds
    series.count++
    // The first bucket it fits in; past the last one it is counted in +Inf only (the count).
    for (const bucket of series.buckets) {
      if (seconds <= bucket.bound) {
        bucket.count++
        return
      }
    }
  }

  protected scraped (): ScrapedValue[] {
    const name = `${this.name}_bucket`
    return this.series.all.flatMap(({ labels, buckets, sum, count }) => {
      let below = 0
      const cumulative: ScrapedValue[] = buckets.map(bucket => {
        below += bucket.count
        return { value: below, labels: { le: bucket.bound }, sharedLabels: labels, metricName: name }
      })
      return [
        ...cumulative,
        { value: count, labels: { le: '+Inf' }, sharedLabels: labels, metricName: name },
        { value: sum, labels: {}, sharedLabels: labels, metricName: `${this.name}_sum` },
        { value: count, labels: {}, sharedLabels: labels, metricName: `${this.name}_count` }
      ]
    })
  }
}
