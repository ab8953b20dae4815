// Loaded into the service only by `SOAK_INJECT_LEAK_MB_PER_MINUTE=<n> npm run soak` (with --import): it keeps
// n MiB more of strings every minute, a leak the soak must report. Never part of the service.
const perMinute = Number(process.env.SOAK_LEAK_MB_PER_MINUTE ?? 0)
const kept = []
if (perMinute > 0) {
  setInterval(() => {
    // 1 KiB strings, each its own allocation, 1/60 of the minute's share a second.
    const count = Math.round((perMinute * 1024) / 60)
    for (let i = 0; i < count; i++) kept.push(`${i}:${Math.random()}`.padEnd(1024, 'x'))
  }, 1000).unref()
}
