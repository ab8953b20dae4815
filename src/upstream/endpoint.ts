import { BadRequestError } from '../errors.js'

/** RFC 3986 path characters; excludes `\`, `?`, `#`, spaces, CR/LF, NUL and other controls. */
const PATH_CHARACTERS = /^[A-Za-z0-9\-._~!$&'()*+,;=:@/%]+$/
const SCHEME = /^[a-z][a-z0-9+.-]*:/i
const MAX_ENDPOINT_LENGTH = 2048

function refuse (reason: string): never {
  throw new BadRequestError(`endpoint ${reason}`)
}

/**
 * An upstream path a caller may name (docs/api.md#relays): relative, without a scheme, a host,
 * `//`, dot segments or `;` (also percent-encoded), backslashes, CR/LF, NUL, a query or a
 * fragment; with `leadingSlash: false` (the proxy's path after `/proxy/`), not starting with `/`
 * either. Returns it with one leading slash. Anything else is 400 before a byte goes upstream.
 */
export function relativeEndpoint (raw: string, { leadingSlash = true }: { leadingSlash?: boolean } = {}): string {
  if (raw.length === 0 || raw.length > MAX_ENDPOINT_LENGTH) refuse(`must be 1 to ${MAX_ENDPOINT_LENGTH} characters`)
  if (!leadingSlash && raw.startsWith('/')) refuse('must not start with / (it would name another host)')
  if (!PATH_CHARACTERS.test(raw)) {
    refuse('must be a plain path (no query, fragment, spaces, backslashes or control characters)')
  }
  if (SCHEME.test(raw)) refuse('must be a relative path, not a URL')
  if (raw.includes('//')) refuse('must not contain //')
  let decoded: string
  try {
    decoded = decodeURIComponent(raw)
  } catch {
    refuse('has an invalid percent-encoding')
  }
  // Anything that decodes to a separator, a control character or another escape could be
  // read differently upstream; a path a frontend needs never has it.
  // eslint-disable-next-line no-control-regex -- the control characters are what it looks for
  if (/[%\\/?#;]/.test(decoded.replaceAll('/', '')) || /[\u0000-\u001f\u007f]/.test(decoded)) {
    refuse('must not encode separators, escapes or control characters')
  }
  const segments = decoded.split('/')
  if (segments.some(segment => segment === '.' || segment === '..')) refuse('must not contain dot segments')
  return `/${raw.replace(/^\/+/, '')}`
}

/** `path` under `prefix` (`/items` allows `/items` and `/items/…`, not `/itemsx`). */
export function underPrefix (path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(`${prefix}/`)
}
