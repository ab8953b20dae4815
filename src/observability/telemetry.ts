import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import { CountedCounter, CountedHistogram } from './counted-metrics.js'

/** How an upstream call ended: the `outcome` label (docs/deploy.md#metrics). */
export type UpstreamOutcome = 'ok' | '4xx' | '5xx' | 'timeout' | 'refused'
export type UpstreamName = 'backend' | 'aggregator' | 'brapi'
/** The caches whose hit ratio an operator watches: every use of src/cache/memory-cache.ts (docs/deploy.md#metrics). */
export type CacheName = 'portfolio_reads' | 'performance' | 'quotes' | 'coin_list' | 'verified_tokens' |
  'item_ownership' | 'aggregator_key' | 'stats' | 'upstream_probe'
/** Which budget refused a request. */
export type LimitName = 'requests' | 'auth_failures' | 'connect_tokens' | 'aggregator' | 'aggregator_principal'

/**
 * What the service reports about itself. Components take this interface, never prom-client:
 * without metrics it is {@link NO_TELEMETRY}, which costs a call to an empty function.
 */
export interface Telemetry {
  request: (method: string, route: string, statusCode: number, seconds: number) => void
  upstream: (upstream: UpstreamName, outcome: UpstreamOutcome, seconds: number) => void
  cache: (cache: CacheName, hit: boolean) => void
  rateLimited: (limit: LimitName) => void
  authFailure: (reason: string) => void
  shed: () => void
  storeQuery: (seconds: number, failed: boolean) => void
  /** Reports a connection pool's state at each scrape. */
  watchPool: (read: () => PoolState) => void
  /** A long-lived dependency answers again (`true`) or was lost (`false`). */
  dependency: (name: string, up: boolean) => void
  /** Reports the open live valuation streams at each scrape. */
  watchStreams: (read: () => number) => void
  /** An investment import ended (docs/api.md#imports): how, how long since it began, how many investments it read. */
  investmentImport: (outcome: 'done' | 'failed', seconds: number, investments: number) => void
}

export interface PoolState {
  total: number
  idle: number
  waiting: number
}

const nothing = (): void => {}

export const NO_TELEMETRY: Telemetry = {
  request: nothing,
  upstream: nothing,
  cache: nothing,
  rateLimited: nothing,
  authFailure: nothing,
  shed: nothing,
  storeQuery: nothing,
  watchPool: nothing,
  dependency: nothing,
  watchStreams: nothing,
  investmentImport: nothing
}

/** Seconds: from a cached answer (0.5 ms) to an upstream at its timeout (10 s). */
const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/** The series of docs/deploy.md#metrics in a registry of their own (one per app, so tests and hosts never collide). */
export class PrometheusTelemetry implements Telemetry {
  readonly registry = new Registry()
  // Observed on every request, statement or upstream call: counted without allocating (counted-metrics.ts).
  private readonly requests = new CountedHistogram({
    name: 'http_request_duration_seconds',
    help: 'Duration of HTTP requests, by method, route pattern and status code',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry]
  })

  private readonly upstreams = new CountedHistogram({
    name: 'bff_upstream_request_duration_seconds',
    help: 'Duration of calls to the upstreams, by upstream and outcome (ok, 4xx, 5xx, timeout, refused)',
    labelNames: ['upstream', 'outcome'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry]
  })

  private readonly limited = new Counter({
    name: 'bff_rate_limited_total',
    help: 'Requests refused with 429, by the budget that refused them',
    labelNames: ['limit'] as const,
    registers: [this.registry]
  })

  private readonly failures = new Counter({
    name: 'bff_auth_failures_total',
    help: 'Refused credentials, by reason',
    labelNames: ['reason'] as const,
    registers: [this.registry]
  })

  private readonly caches = new CountedCounter({
    name: 'bff_cache_requests_total',
    help: 'Cache lookups, by cache and result (hit, miss)',
    labelNames: ['cache', 'result'] as const,
    registers: [this.registry]
  })

  private readonly shedding = new Counter({
    name: 'bff_load_shed_total',
    help: 'Requests refused with 503 because the event loop lagged or the heap neared its limit',
    registers: [this.registry]
  })

  private readonly queries = new CountedHistogram({
    name: 'bff_store_query_duration_seconds',
    help: 'Duration of the store\'s SQL statements, by outcome (ok, error)',
    labelNames: ['outcome'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry]
  })

  private readonly dependencies = new Gauge({
    name: 'bff_dependency_up',
    help: 'Whether a long-lived dependency answered at its last use (1) or was lost (0), by dependency',
    labelNames: ['dependency'] as const,
    registers: [this.registry]
  })

  private readonly imports = new Counter({
    name: 'bff_imports_total',
    help: 'Investment imports ended, by outcome (done, failed)',
    labelNames: ['outcome'] as const,
    registers: [this.registry]
  })

  private readonly importDurations = new Histogram({
    name: 'bff_import_duration_seconds',
    help: 'Duration of investment imports from their first attempt to their end, retries included, by outcome',
    labelNames: ['outcome'] as const,
    // From an item of a few investments (a second) to one retried for the better part of an hour.
    buckets: [1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600],
    registers: [this.registry]
  })

  private readonly importedInvestments = new Counter({
    name: 'bff_import_investments_total',
    help: 'Investments the aggregator listed to the investment imports that ended',
    registers: [this.registry]
  })

  constructor () {
    collectDefaultMetrics({ register: this.registry })
  }

  investmentImport (outcome: 'done' | 'failed', seconds: number, investments: number): void {
    this.imports.labels(outcome).inc()
    this.importDurations.labels(outcome).observe(seconds)
    this.importedInvestments.inc(investments)
  }

  request (method: string, route: string, statusCode: number, seconds: number): void {
    this.requests.observe(seconds, method, route, statusCode)
  }

  upstream (upstream: UpstreamName, outcome: UpstreamOutcome, seconds: number): void {
    this.upstreams.observe(seconds, upstream, outcome)
  }

  cache (cache: CacheName, hit: boolean): void {
    this.caches.inc(cache, hit ? 'hit' : 'miss')
  }

  rateLimited (limit: LimitName): void {
    this.limited.labels(limit).inc()
  }

  authFailure (reason: string): void {
    this.failures.labels(reason).inc()
  }

  shed (): void {
    this.shedding.inc()
  }

  storeQuery (seconds: number, failed: boolean): void {
    this.queries.observe(seconds, failed ? 'error' : 'ok')
  }

  dependency (name: string, up: boolean): void {
    this.dependencies.labels(name).set(up ? 1 : 0)
  }

  /** The pool gauge, once {@link watchPool} made it. */
  private poolGauge: Gauge | undefined

  watchPool (read: () => PoolState): void {
    // One gauge, read at scrape time: nothing runs between scrapes.
    this.poolGauge = new Gauge({
      name: 'bff_store_pool_connections',
      help: 'PostgreSQL connections of this instance, by state (total, idle, waiting: requests queued for one)',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect () {
        const state = read()
        this.labels('total').set(state.total)
        this.labels('idle').set(state.idle)
        this.labels('waiting').set(state.waiting)
      }
    })
  }

  watchStreams (read: () => number): void {
    this.streamsGauge = new Gauge({
      name: 'bff_valuation_streams',
      help: 'Live valuation streams open at this instance (Server-Sent Events and GraphQL subscriptions)',
      registers: [this.registry],
      collect () { this.set(read()) }
    })
  }

  /** The streams gauge, once {@link watchStreams} made it. */
  private streamsGauge: Gauge | undefined
}
