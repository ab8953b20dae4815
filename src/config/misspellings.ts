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
 * alignment distance. Hand-written (a dozen lines) because the maintained libraries count a swap
 * (`PROT` for `PORT`), the commonest slip, as two edits; at a threshold of two, `HOME` would then
 * pass for `HOST`.
 */
export function editDistance (a: string, b: string): number {
  let beforePrevious: number[] = []
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const replace = cell(previous, j - 1) + (a[i - 1] === b[j - 1] ? 0 : 1)
      let best = Math.min(cell(previous, j) + 1, cell(current, j - 1) + 1, replace)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, cell(beforePrevious, j - 2) + 1)
      }
      current.push(best)
    }
    beforePrevious = previous
    previous = current
  }
  return cell(previous, b.length)
}

/** A cell of a row already filled up to `index` (the fallback never applies; the types cannot know it). */
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

/** The member of `candidates` nearest to `name` (the first of equals), with its distance. */
function nearest (name: string, candidates: readonly string[]): { name: string, distance: number } | undefined {
  let best: { name: string, distance: number } | undefined
  for (const candidate of candidates) {
    const distance = editDistance(name, candidate)
    if (best === undefined || distance < best.distance) best = { name: candidate, distance }
  }
  return best
}

/** The service's variable `name` likely stands for, if any. */
function intendedName (name: string, known: readonly string[], families: ReadonlySet<string>): string | undefined {
  // Only names of about the same length can be near (this keeps start-up from comparing everything).
  const similar = known.filter(candidate => Math.abs(candidate.length - name.length) <= allowedEdits(candidate))
  const near = nearest(name, similar)
  if (near !== undefined && near.distance <= allowedEdits(near.name)) return near.name
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
