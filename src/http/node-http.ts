import { createRequire } from 'node:module'

/*
 * node:http and node:https as their CommonJS exports, for code of the service that needs their
 * values (types come from `import type` as usual). An ESM `import … from 'node:http'` makes Node
 * build the module's ESM facade, which reads every export once, and Node 24's `WebSocket`,
 * `CloseEvent` and `MessageEvent` of node:http are getters that load Node's own copy of undici,
 * and its memory, for classes the service never uses. `require` hands over the exports object and
 * reads nothing. Measured (2026-11-28, Node 24.21, a module importing node:http and nothing else,
 * 7 runs each): 50 ms of process CPU with `import`, 22 ms with `require`; the 28 ms saved are 6–7 %
 * of the built server's CPU to its first answer (431–442 ms, src/modules/graphql/index.ts).
 */
const require = createRequire(import.meta.url)

export const http: typeof import('node:http') = require('node:http')
export const https: typeof import('node:https') = require('node:https')
