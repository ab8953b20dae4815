/**
 * Variables of the environment that look like one of the service's but are not: a misspelt
 * `CORS_ORIGIN` would otherwise leave CORS off without a word. The rule (docs/deploy.md,
 * "Misspelt variables"): a name that is not the service's is reported when it is within a small
 * edit distance of one of them, or when it starts with the first word of a family of the
 * service's (`AGGREGATOR_`, `JWT_`, …); what Node, npm, the shell and Kubernetes set is never
 * reported.
 */

/** A variable the service does not read, and the one of its own that was likely meant. */
export interface Misspelling {
  variable: string
  intended: string
  /** One line for the log: the value is never repeated (it may be a secret). */
  message: string
}

/**
 * First words that other software's variables share with the service's (Node's `NODE_OPTIONS`,
 * OpenTelemetry's `OTEL_*` read by its SDK, a platform's `REDIS_TLS_URL`, `LOG_FORMAT`,
 * `API_URL`…): such a name is reported only when it is within the edit distance.
 */
const SHARED_FIRST_WORDS = new Set([
  'NODE', 'OTEL', 'REDIS', 'API', 'LOG', 'MAX', 'AUTH', 'CONNECT', 'REQUEST', 'TRUST'
])

/**
 * Names others set, never reported: npm's `npm_*`, Kubernetes' own and the service links it
 * sets for every service of the namespace (`BACKEND_SERVICE_HOST`, `BACKEND_PORT_80_TCP_ADDR`…).
 */
const FOREIGN_NAMES = [
  /^NPM_/,
  /^KUBERNETES_/,
  /_SERVICE_(?:HOST|PORT)(?:_\w+)?$/,
  /_PORT_\d+_(?:TCP|UDP|SCTP)(?:_(?:PROTO|PORT|ADDR))?$/
]
/** Kubernetes' `<SERVICE>_PORT=tcp://10.0.0.1:80`, recognised by its value. */
const SERVICE_LINK = /^(?:tcp|udp|sctp):\/\//

/**
 * Edits (insert, delete, replace, or swap two neighbours) from `a` to `b`: the optimal string
 * alignment distance, or `limit + 1` when it is more than `limit`. Hand-written (a few lines)
 * because the small maintained packages (fastest-levenshtein, leven) count a swap (`PROT` for
 * `PORT`), the commonest slip, as two edits; at a threshold of two, `HOME` would then pass for
 * `HOST`. The limit keeps start-up quick: only cells within `limit` of the diagonal are computed,
 * and the rows stop once all of them exceed it (no later row goes below a row's best: a swap
 * reaches back two rows but adds an edit). Measured at start-up (first call, 120 variables of a
 * real environment against the service's 60, a busy 2-core machine): 2–5 ms so, 7–19 ms with
 * every pair compared in full.
 * @internal Test seam: its bound and its cases are tested on pairs of names directly.
 */
export function editDistance (a: string, b: string, limit = Math.max(a.length, b.length)): number {
  const over = limit + 1
  // Three rows, reused: the one two back (for swaps), the previous, the current.
  let twoBack = new Array<number>(b.length + 1).fill(over)
  let previous = new Array<number>(b.length + 1).fill(over)
  let current = new Array<number>(b.length + 1).fill(over)
  for (let j = 0; j <= Math.min(b.length, limit); j++) previous[j] = j
  for (let i = 1; i <= a.length; i++) {
    current.fill(over)
    current[0] = Math.min(i, over)
    let rowBest = cell(current, 0)
    for (let j = Math.max(1, i - limit); j <= Math.min(b.length, i + limit); j++) {
      const replace = cell(previous, j - 1) + (a[i - 1] === b[j - 1] ? 0 : 1)
      let best = Math.min(cell(previous, j) + 1, cell(current, j - 1) + 1, replace)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, cell(twoBack, j - 2) + 1)
      }
      current[j] = best
      rowBest = Math.min(rowBest, best)
    }
    if (rowBest > limit) return over
    const reused = twoBack
    twoBack = previous
    previous = current
    current = reused
  }
  return Math.min(cell(previous, b.length), over)
}

/** A cell of a row (the fallback never applies: rows are as long as `b`; the types cannot know it). */
function cell (row: readonly number[], index: number): number {
  return row[index] ?? Number.POSITIVE_INFINITY
}

/** One edit for names of up to 8 characters (`PORT`, `API_KEYS`), two for longer ones. */
function allowedEdits (name: string): number {
  return name.length <= 8 ? 1 : 2
}

function firstWord (name: string): string | undefined {
  const end = name.indexOf('_')
  return end > 0 ? name.slice(0, end) : undefined
}

/** The service's variable `name` likely stands for, if any. */
function intendedName (name: string, known: readonly string[], families: ReadonlySet<string>): string | undefined {
  let near: { name: string, distance: number } | undefined
  for (const candidate of known) {
    const allowed = allowedEdits(candidate)
    // Names whose lengths differ by more than the allowed edits cannot be near.
    if (Math.abs(candidate.length - name.length) > allowed) continue
    const distance = editDistance(name, candidate, allowed)
    if (distance <= allowed && (near === undefined || distance < near.distance)) near = { name: candidate, distance }
  }
  if (near !== undefined) return near.name
  const family = firstWord(name)
  if (family === undefined || !families.has(family)) return undefined
  return closestMember(name, known.filter(candidate => firstWord(candidate) === family))
}

function commonPrefixLength (a: string, b: string): number {
  let length = 0
  while (length < a.length && a[length] === b[length]) length++
  return length
}

/**
 * The member of a family that `name` (of the same family) most likely stands for: the one sharing
 * most of its words (`AGGREGATOR_SECRET` → `AGGREGATOR_CLIENT_SECRET`), then its longest beginning
 * (`JWT_ALGO` → `JWT_ALGORITHM`), then the nearest.
 */
function closestMember (name: string, members: readonly string[]): string | undefined {
  const words = new Set(name.split('_'))
  const ranked = members.map(member => ({
    member,
    sharedWords: member.split('_').filter(word => words.has(word)).length,
    prefix: commonPrefixLength(name, member),
    distance: editDistance(name, member)
  }))
  ranked.sort((a, b) => b.sharedWords - a.sharedWords || b.prefix - a.prefix || a.distance - b.distance)
  return ranked[0]?.member
}

/**
 * The variables of `env` that are not among `known` (the service's) but look like one of them,
 * compared in upper case (`port` is as likely a slip as `PROT`).
 */
export function misspeltVariables (env: Record<string, string | undefined>, known: readonly string[]): Misspelling[] {
  const exact = new Set(known)
  const families = new Set<string>()
  for (const word of known.map(firstWord)) if (word !== undefined && !SHARED_FIRST_WORDS.has(word)) families.add(word)
  const found: Misspelling[] = []
  for (const [variable, value] of Object.entries(env)) {
    // Unset (undefined) is not there at all; set, even to '', it is ignored by the service.
    if (value === undefined || exact.has(variable)) continue
    const name = variable.toUpperCase()
    if (FOREIGN_NAMES.some(pattern => pattern.test(name)) || SERVICE_LINK.test(value)) continue
    const intended = intendedName(name, known, families)
    if (intended === undefined) continue
    found.push({
      variable,
      intended,
      message: `${variable} is not a variable of the service and is ignored: did you mean ${intended}?`
    })
  }
  return found
}
