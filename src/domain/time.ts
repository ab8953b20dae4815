/** `3725` → `'1h 2m 5s'`; used where an answer shows a remaining time as text. */
export function formatDuration (totalSeconds: number): string {
  const seconds = Math.max(0, Math.floor(totalSeconds))
  const hours = Math.floor(seconds / 3600)
  const minutes = Math.floor((seconds % 3600) / 60)
  const rest = seconds % 60
  const parts = [hours > 0 ? `${hours}h` : '', hours > 0 || minutes > 0 ? `${minutes}m` : '', `${rest}s`]
  return parts.filter(Boolean).join(' ')
}

/**
 * Node's timers wait at most this many milliseconds (a longer delay fires at once).
 * @internal Test seam: a test waits past it on a fake clock.
 */
export const LONGEST_TIMER_MS = 2 ** 31 - 1

/**
 * Calls `fn` once `now()` reaches `when` (epoch milliseconds), however far off: a wait longer than
 * a timer can hold is made in steps. Answers the way to call it off.
 */
export function callAt (when: number, fn: () => void, now: () => number = Date.now): () => void {
  let timer: NodeJS.Timeout
  const arm = (): void => {
    const wait = Math.min(Math.max(when - now(), 0), LONGEST_TIMER_MS)
    timer = setTimeout(() => { if (now() >= when) fn(); else arm() }, wait)
  }
  arm()
  return () => { clearTimeout(timer) }
}
