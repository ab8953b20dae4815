import type { FastifyBaseLogger } from 'fastify'
import { NO_TELEMETRY, type Telemetry } from './telemetry.js'

/**
 * The long-lived connections of an instance, the `dependency` label of `bff_dependency_up`
 * (docs/deploy.md#failure-modes).
 */
export type DependencyName =
  | 'store'
  | 'change_feed'
  | 'rate_limit_redis'
  | 'aggregator_budget_redis'
  | 'sqlite_checkpointer'
  | 'span_export'

/**
 * Whether one dependency answers, as its clients last saw it. Its clients report every success
 * and failure; a change is logged once (`warn` when it is lost, `info` with the outage's
 * length when it is back) and set on the gauge, so an outage is one line, not one per request.
 */
export class DependencyHealth {
  private state: 'unknown' | 'up' | 'down' = 'unknown'
  private downSince = 0

  constructor (
    readonly name: DependencyName,
    private readonly log: FastifyBaseLogger,
    private readonly telemetry: Telemetry = NO_TELEMETRY
  ) {}

  get isUp (): boolean {
    return this.state === 'up'
  }

  /** It answered. Cheap when nothing changes: every statement of the store reports here. */
  up (): void {
    if (this.state === 'up') return
    if (this.state === 'down') {
      this.log.info({ dependency: this.name, downForMs: Date.now() - this.downSince }, 'dependency available again')
    }
    this.state = 'up'
    this.telemetry.dependency(this.name, true)
  }

  /** It failed, or a connection to it was lost: logged the first time only, until it is {@link up} again. */
  down (error: unknown): void {
    if (this.state === 'down') return
    this.state = 'down'
    this.downSince = Date.now()
    this.log.warn({ dependency: this.name, err: error }, 'dependency unavailable')
    this.telemetry.dependency(this.name, false)
  }
}
