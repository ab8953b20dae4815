/** The verdict of `npm run bench:guard` (bench/guard.ts), apart so that it is tested (test/bench/). */

/** A route's CPU per request over bare Fastify's, measured and committed. */
export interface RatioVerdict {
  route: string
  measured: number
  baseline: number
  /** measured / baseline − 1: +0.2 is 20 % more CPU per request, relative to bare Fastify. */
  change: number
  failed: boolean
}

/** Each route's ratio against its baseline: failed when it moved more than `tolerance` either way. */
export function judgeRatios (
  measured: Record<string, number>,
  baseline: Record<string, number>,
  tolerance: number
): RatioVerdict[] {
  return Object.entries(measured).map(([route, ratio]) => {
    const committed = baseline[route]
    if (committed === undefined || !(committed > 0)) {
      throw new Error(`bench/guard-baseline.json has no ratio for ${route}`)
    }
    const change = ratio / committed - 1
    return { route, measured: ratio, baseline: committed, change, failed: !(Math.abs(change) <= tolerance) }
  })
}
