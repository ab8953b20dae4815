/** One sample of the soak: the load's figures over the last interval and the service's state at its end. */
export interface Sample {
  minute: number
  requestsPerSecond: number
  p99Ms: number
  rssMiB: number
  heapMiB: number
  eventLoopP99Ms: number
  descriptors: number
}

export interface Verdict {
  measure: string
  /** Median of the first third of the samples after the warm-up. */
  first: number
  /** Median of the last third. */
  last: number
  /** How much growth is tolerated, in words. */
  allowance: string
  grew: boolean
}

function median (values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle] ?? 0 : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2
}

/**
 * What may grow, from the first third to the last third (medians, so one garbage collection or
 * one slow interval decides nothing): memory a little (V8 sizes its heap to the load for a while),
 * descriptors not at all beyond a few, latency and event-loop delay not twofold — on the shared
 * two-core machine one 15 s interval's p99 ranged from 31 to 475 ms under the same load.
 */
type Measure = keyof Omit<Sample, 'minute' | 'requestsPerSecond'>
const ALLOWANCES: Array<{ measure: Measure, absolute: number, ratio: number, words: string }> = [
  { measure: 'rssMiB', absolute: 32, ratio: 1.2, words: '+20 % and +32 MiB' },
  { measure: 'heapMiB', absolute: 16, ratio: 1.25, words: '+25 % and +16 MiB' },
  { measure: 'descriptors', absolute: 10, ratio: 1, words: '+10' },
  { measure: 'p99Ms', absolute: 50, ratio: 2, words: '×2 and +50 ms' },
  { measure: 'eventLoopP99Ms', absolute: 50, ratio: 2, words: '×2 and +50 ms' }
]

/**
 * The soak's verdict: after `warmup` samples, a measure grew when its last third's median is
 * above the first third's by more than both its ratio and its absolute allowance.
 */
export function judge (samples: Sample[], warmup: number): Verdict[] {
  const judged = samples.slice(Math.min(warmup, Math.max(0, samples.length - 3)))
  const third = Math.max(1, Math.floor(judged.length / 3))
  const head = judged.slice(0, third)
  const tail = judged.slice(-third)
  return ALLOWANCES.map(({ measure, absolute, ratio, words }) => {
    const first = median(head.map(sample => sample[measure]))
    const last = median(tail.map(sample => sample[measure]))
    return { measure, first, last, allowance: words, grew: last > first * ratio && last - first > absolute }
  })
}
