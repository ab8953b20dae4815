import { createRequire } from 'node:module'

/*
 * node:http and node:https as their CommonJS exports, for code of the service that needs their
 * values (types come from `import type` as usual). An ESM `import … from 'node:http'` makes Node
 * build the module's ESM facade, which reads every export once, and Node 24's `WebSocket`,
 * `CloseEvent` and `MessageEvent` of node:http are getters that load Node's own copy of undici:
 * about 60 ms of CPU of a 650 ms start, and its memory, for classes the service never uses.
 * `require` hands over the exports object and reads nothing.
 */
const require = createRequire(import.meta.url)

export const http: typeof import('node:http') = require('node:http')
export const https: typeof import('node:https') = require('node:https')
