/** `3725` → `'1h 2m 5s'`; used where an answer shows a remaining time as text. */
export function formatDuration (totalSeconds: number): string {
  const seconds = Math.max(0, Math.floor(totalSeconds))
  const hours = Math.floor(seconds / 3600)
  const minutes = Math.floor((seconds % 3600) / 60)
  const rest = seconds % 60
  const parts = [hours > 0 ? `${hours}h` : '', hours > 0 || minutes > 0 ? `${minutes}m` : '', `${rest}s`]
  return parts.filter(Boolean).join(' ')
}
