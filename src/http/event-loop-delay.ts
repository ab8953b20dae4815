import { monitorEventLoopDelay } from 'node:perf_hooks'

/** The sampler's resolution (ms), subtracted from its mean as @fastify/under-pressure does. */
const RESOLUTION_MS = 10

/**
 * The event loop's mean delay over the last window (ms), measured like @fastify/under-pressure
 * measures it, but from a start the service chooses: a process's own start-up (module loading,
 * schema compilation, migrations, a host's synchronous set-up) blocks the loop for seconds, and
 * counted as load it made a fresh instance refuse its first requests.
 *
 * `restart()` forgets everything measured before it, and the window that follows only settles:
 * a delay that built up before the restart is recorded by the sampler only when the loop next
 * turns, inside that window. Until a whole window has passed the delay reads 0.
 */
export class EventLoopDelay {
  private readonly histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS })
  private timer: NodeJS.Timeout | undefined
  private settling = true
  private lastMs = 0

  constructor (private readonly windowMs = 1000) {}

  /** The mean delay of the last full window. */
  get delayMs (): number {
    return this.lastMs
  }

  /** (Re)starts measuring now. */
  restart (): void {
    this.histogram.enable()
    this.histogram.reset()
    this.lastMs = 0
    this.settling = true
    clearInterval(this.timer)
    this.timer = setInterval(() => { this.sample() }, this.windowMs)
    this.timer.unref()
  }

  stop (): void {
    clearInterval(this.timer)
    this.timer = undefined
    this.histogram.disable()
  }

  /**
   * Every window holds a record: the sampler's timer is due every 10 ms, so after a blocked loop it
   * fires (and records the block) before this window's timer, due later.
   */
  private sample (): void {
    if (this.settling) this.settling = false
    else this.lastMs = Math.max(0, this.histogram.mean / 1e6 - RESOLUTION_MS)
    this.histogram.reset()
  }
}
