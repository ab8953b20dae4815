/*
 * The first module the server, the CLI and the package's entry point evaluate: on a Node.js older
 * than the package supports (package.json `engines`), one line says so and the process exits 1,
 * before anything that needs a newer Node loads. Without it Node 20 stops with a SyntaxError about
 * an export of `node:module`, or crashes without a word loading better-sqlite3's native binary.
 * It imports nothing (only the global `process`), so that it runs before any other module of the
 * graph; and its syntax is what any Node since 12 parses.
 */

/**
 * The oldest major version of Node.js the package supports: package.json's `engines` (a test holds them equal).
 * @internal Test seam: a test holds it equal to package.json's engines.
 */
export const MINIMUM_NODE_MAJOR = 22

/**
 * The line an unsupported Node gets, or `undefined` on a supported one.
 * @internal Test seam: old versions are tested without running one.
 */
export function unsupportedNodeMessage (version: string, executable: string): string | undefined {
  const major = Number(/^v?(\d+)\./.exec(version)?.[1])
  if (major >= MINIMUM_NODE_MAJOR) return undefined
  return `bff-service needs Node.js ${MINIMUM_NODE_MAJOR} or newer; this is Node.js ${version} (${executable}). ` +
    'Run it with a newer node (the npm scripts use the Node 24 that npm install brings: README.md, Quick start).'
}

const message = unsupportedNodeMessage(process.version, process.execPath)
// Runs only on an unsupported Node: test/package.slow.test.ts starts the server, the CLI and a host
// of the package on the system's Node 20, in child processes whose coverage is not counted.
/* c8 ignore next 4 */
if (message !== undefined) {
  process.stderr.write(`${message}\n`)
  process.exit(1)
}
