/**
 * What the log keeps of an upstream's failed answer (a 5xx body is never returned, but an
 * operator wants a hint of what went wrong): its size and a short excerpt with anything that
 * looks like a secret masked. A framework's debug page can carry the application's whole
 * environment — `APP_KEY`, database passwords, tokens of the request — and must not end up in
 * this service's logs: never the whole body, and never a secret of the part that is kept.
 */

/**
 * Characters of the excerpt, after masking.
 * @internal Test seam: a test checks excerpts stay within it.
 */
export const EXCERPT_CHARACTERS = 200
/** Characters of the body looked at: enough to find a page's first words, never all of a large one. */
const SCANNED_CHARACTERS = 8192
/** Characters of its text that are masked, then cut to the excerpt (masking shortens it). */
const MASKED_CHARACTERS = 1024
const MASK = '[masked]'

/** Words that name a secret in a key, a header or a variable (`DB_PASSWORD`, `x-api-key`, `"token"`…). */
const SECRET_WORDS = [
  'pass(?:word|wd|phrase)?', 'secret', 'token', 'api[_-]?key', 'key', 'authori[sz]ation', 'auth', 'credential',
  'cookie', 'session', 'signature', 'private', 'salt', 'dsn'
].join('|')
/** Such a name, with what stands around the word (bounded, so that a long word costs no backtracking). */
const SECRET_NAME = String.raw`[\w.-]{0,40}(?:${SECRET_WORDS})[\w.-]{0,40}`
/** A value: a quoted string, or a run up to a space or a separator. */
const VALUE = String.raw`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|[^\s,;&]+`
/** A variable's name in an environment table, then its value. */
const ENV_WORDS = 'PASSWORD|PASSWD|SECRET|TOKEN|KEY|AUTH|CREDENTIALS?|DSN'
const ENV_NAME = String.raw`[A-Z][A-Z0-9_]{0,40}(?:${ENV_WORDS})[A-Z0-9_]{0,40}`
const ENV_ENTRY = new RegExp(String.raw`\b(${ENV_NAME})\s+(?!\[masked\])\S+`, 'g')

type Replacement = (match: string, ...groups: string[]) => string

/** Each rule, in order: a pattern and what replaces each match. */
const RULES: Array<[RegExp, Replacement]> = [
  // Credentials in URLs: scheme://user:password@host.
  [/\/\/[^\s:@/]+:[^\s@/]+@/g, () => `//${MASK}@`],
  // Bearer and Basic credentials, wherever they stand.
  [/\b(bearer|basic)\s+[\w\-.~+/]+=*/gi, (_match, scheme = '') => `${scheme} ${MASK}`],
  // A value after a secret's name: `DB_PASSWORD=…`, `"token": "…"`, `Authorization: …`, `'key' => '…'`.
  [new RegExp(String.raw`(["']?${SECRET_NAME}["']?\s*(?:=>|[:=])\s*)(?:${VALUE})`, 'gi'),
    (_match, name = '') => `${name}${MASK}`],
  // An environment table (a debug page's, once its tags are gone): `DB_PASSWORD hunter2`.
  [ENV_ENTRY, (_match, name = '') => `${name} ${MASK}`],
  // JWT-shaped strings.
  [/\beyJ[\w-]*\.[\w-]*(?:\.[\w-]*)?/g, () => MASK],
  // Long runs of hex, or of base64 holding both letters and digits (keys, hashes, tokens).
  [/\b[0-9a-f]{24,}\b/gi, () => MASK],
  [/[A-Za-z0-9+/_-]{24,}={0,2}/g, run => /\d/.test(run) && /[A-Za-z]/.test(run) ? MASK : run]
]

function masked (text: string): string {
  let result = text
  for (const [pattern, replacement] of RULES) result = result.replace(pattern, replacement)
  return result
}

/**
 * The log fields of a failed upstream answer: `size` in bytes and an `excerpt` of at most
 * {@link EXCERPT_CHARACTERS} characters of its text (HTML tags, scripts and styles dropped,
 * whitespace collapsed), secrets masked.
 */
export function failureExcerpt (body: Buffer | string): { size: number, excerpt: string } {
  const size = typeof body === 'string' ? Buffer.byteLength(body) : body.length
  const scanned = typeof body === 'string'
    ? body.slice(0, SCANNED_CHARACTERS)
    : body.toString('utf8', 0, SCANNED_CHARACTERS)
  let plain = scanned
    .replace(/<(script|style)\b[\s\S]*?(<\/\1\s*>|$)/gi, ' ')
    .replace(/<[^<>]*>/g, ' ')
    .replace(/&quot;/g, '"')
    .replace(/\s+/g, ' ')
    .trim()
  // A value cut at the end of what is masked might escape its rule: the cut word goes.
  if (plain.length > MASKED_CHARACTERS) plain = plain.slice(0, MASKED_CHARACTERS).replace(/\S*$/, '')
  const excerpt = masked(plain)
  const cut = excerpt.length > EXCERPT_CHARACTERS ? `${excerpt.slice(0, EXCERPT_CHARACTERS)}…` : excerpt
  return { size, excerpt: cut }
}
