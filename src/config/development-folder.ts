import { realpathSync } from 'node:fs'
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path'

/**
 * The folder, relative to the working directory, where development keeps its store
 * (`sqlite:./data/bff.sqlite`, seeded with demo data) and its generated secrets. Production never
 * uses anything in it (docs/deploy.md, "Required in production").
 */
export const DEVELOPMENT_FOLDER = 'data'

/** `path` with the symbolic links of its longest existing part resolved (the rest may not exist yet). */
function canonical (path: string): string {
  try {
    return realpathSync.native(path)
  } catch {
    const parent = dirname(path)
    return parent === path ? path : join(canonical(parent), basename(path))
  }
}

/**
 * Whether the SQLite file of `databaseUrl` (`sqlite:<file>`, a file relative to `workingDirectory`)
 * lies in the development folder of that directory, however it is written (`data/x`, an
 * absolute path, `./other/../data/x`, a link to the folder).
 */
export function inDevelopmentFolder (databaseUrl: string, workingDirectory: string): boolean {
  if (!databaseUrl.startsWith('sqlite:') || databaseUrl === 'sqlite::memory:') return false
  const file = canonical(resolve(workingDirectory, databaseUrl.slice('sqlite:'.length)))
  const inside = relative(canonical(resolve(workingDirectory, DEVELOPMENT_FOLDER)), file)
  return !isAbsolute(inside) && inside.split(sep)[0] !== '..'
}
