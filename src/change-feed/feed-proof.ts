import { performance } from 'node:perf_hooks'
import type { FeedHealth } from './change-feed-core.js'

/** How often an instance sends itself a heartbeat, and how long one may take to come back (docs/deploy.md#poolers). */
export interface ProofOptions {
  intervalMs: number
  boundMs: number
}

/**
 * A heartbeat a second, back within 2 s: a kept read is never older than 2 s of changes told by the feed.
 * Twenty instances send twenty notifications a second in all, each heard by its sender alone.
 */
export const PROOF_DEFAULTS: ProofOptions = { intervalMs: 1000, boundMs: 2000 }

export interface FeedProofOptions extends ProofOptions {
  /** Sends a heartbeat (its text) along the path the feed's messages take, to this instance's listening connection. */
  send: (stamp: string) => Promise<void>
  health?: FeedHealth
  /** Proven again (or at last): whatever was kept may have missed changes, so everything is read again. */
  resync: () => void
  /** What to check when heartbeats are sent and never heard: the warning's second half. */
  hint: string
}

const now = (): number => performance.now()

/**
 * Whether the feed is proven: an instance hears the other instances' changes only if it hears its own
 * heartbeats. Each heartbeat carries the time it was sent; the listening connection delivers messages
 * in the order the server took them (PostgreSQL in commit order, Redis in publish order), so once a
 * heartbeat sent at `t` is back, every change committed before `t` has been delivered. The feed is
 * proven while the latest heartbeat back was sent at most `boundMs` ago: until a first one is back,
 * and from the moment none is, it is unproven (`bff_dependency_up{dependency="change_feed"} 0`, one
 * warning saying why), and each return to proven tells `{ kind: 'all' }`.
 */
export class FeedProof {
  /** When the listening connection last started to listen; undefined while it is not. */
  private listeningSince: number | undefined
  /** When the latest heartbeat back was sent. */
  private lastBack = Number.NEGATIVE_INFINITY
  private state: 'starting' | 'proven' | 'unproven' = 'starting'
  private readonly startedAt = now()
  private lastSendError: unknown
  private readonly timer: NodeJS.Timeout
  private settle: () => void = () => {}
  /** Resolves at the first proof, or once the bound has passed without one. */
  readonly settled: Promise<void>

  constructor (private readonly options: FeedProofOptions) {
    this.settled = new Promise(resolve => { this.settle = resolve })
    this.timer = setInterval(() => { this.beat() }, options.intervalMs)
    this.timer.unref()
  }

  /** Proven, and still: a heartbeat sent since the connection listens, and at most the bound ago, is back. */
  proven (): boolean {
    return this.state === 'proven' && this.heard()
  }

  /** The listening connection listens (again): a heartbeat goes at once rather than at the next beat. */
  listening (): void {
    this.listeningSince = now()
    this.beat()
  }

  /** The listening connection was lost: unproven at once, for the driver's reason. */
  lost (error: unknown): void {
    this.listeningSince = undefined
    this.fail(error)
  }

  /**
   * A connection of the feed failed (the driver's error): unproven until a heartbeat sent from now on
   * is back (one already on its way proves nothing about the failure).
   */
  failed (error: unknown): void {
    if (this.listeningSince !== undefined) this.listeningSince = now()
    this.fail(error)
  }

  /** A heartbeat of this instance came back: the text it was sent with. */
  returned (stamp: string): void {
    const sentAt = Number(stamp)
    // One sent before the connection listened proves nothing about what it heard since.
    if (!Number.isFinite(sentAt) || this.listeningSince === undefined || sentAt < this.listeningSince) return
    this.lastBack = Math.max(this.lastBack, sentAt)
    if (this.state === 'proven' || !this.heard()) return
    this.state = 'proven'
    this.options.health?.up()
    this.options.resync()
    this.settle()
  }

  stop (): void {
    clearInterval(this.timer)
    this.settle()
  }

  private heard (): boolean {
    const since = this.listeningSince
    return since !== undefined && this.lastBack >= since && now() - this.lastBack <= this.options.boundMs
  }

  private beat (): void {
    const overdue = this.state === 'proven' ? !this.heard() : now() - this.startedAt > this.options.boundMs
    if (overdue && this.state !== 'unproven') this.fail(new Error(this.reason()))
    this.options.send(String(now())).then(
      () => { this.lastSendError = undefined },
      (error: unknown) => { this.lastSendError = error }
    )
  }

  private reason (): string {
    const bound = `within ${this.options.boundMs} ms`
    if (this.lastSendError !== undefined) {
      const cause = this.lastSendError instanceof Error ? this.lastSendError.message : String(this.lastSendError)
      return `change feed unproven: no heartbeat came back ${bound}, none could be sent (${cause})`
    }
    return `change feed unproven: no heartbeat came back ${bound}; ${this.options.hint}`
  }

  private fail (error: unknown): void {
    this.state = 'unproven'
    this.options.health?.down(error)
    this.settle()
  }
}
