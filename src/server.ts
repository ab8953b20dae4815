import './supported-node.js'
import module from 'node:module'

/*
 * The entry point. First the Node.js version is checked (supported-node.ts: one line and exit 1 on
 * one too old). Then, before the service's code loads, V8's compile cache is switched on: a start
 * after the first on the same machine reuses the compiled code of every module instead of parsing
 * and compiling it again (about 50 ms of a 650 ms start). It lives in NODE_COMPILE_CACHE when that
 * is set, else in the system's temporary directory; NODE_DISABLE_COMPILE_CACHE=1 turns it off.
 * Node keys it by its own version and each file's content, so a new build or Node never reuses
 * stale code. The module is imported whole: a named import of a function Node 20 lacks would stop
 * the start before the version check could speak.
 */
module.enableCompileCache()
await import('./serve.js')
