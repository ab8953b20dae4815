import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance } from 'fastify'

/**
 * GraphiQL at `/graphiql` (development only: docs/api.md#graphql), served from the package's own
 * files: React, ReactDOM and GraphiQL's browser builds, the versions package.json names, copied into
 * `dist/graphiql/` by `npm run build` (dev dependencies, so production installs carry none of it).
 * Mercurius's own page loads them from a CDN and is blank without the internet. The page needs no
 * GraphQL engine: opening it loads none (./index.ts).
 */

/** Each file the page loads, by the name it is served under: its package, and its path there. */
export const GRAPHIQL_ASSETS = {
  'react.js': ['react', 'umd/react.production.min.js'],
  'react-dom.js': ['react-dom', 'umd/react-dom.production.min.js'],
  'graphiql.js': ['graphiql', 'graphiql.min.js'],
  'graphiql.css': ['graphiql', 'graphiql.min.css']
} as const
export type GraphiqlAsset = keyof typeof GRAPHIQL_ASSETS

/** Where `npm run build` puts the assets: `dist/graphiql/`, beside the server's bundle and the compiled modules. */
export const GRAPHIQL_BUILD_FOLDER = 'graphiql'

/**
 * The file of `asset`: in `dist/graphiql/` when the code runs built (the bundle, dist/chunks/, or
 * tsc's dist/modules/graphql/), else from its package (the sources, with dev dependencies).
 */
export function graphiqlAssetFile (asset: GraphiqlAsset, from = fileURLToPath(import.meta.url)): string {
  for (let folder = dirname(from), depth = 0; depth < 4; folder = dirname(folder), depth++) {
    const built = join(folder, GRAPHIQL_BUILD_FOLDER, asset)
    if (existsSync(built)) return built
  }
  const [name, path] = GRAPHIQL_ASSETS[asset]
  // Through package.json: React's `exports` leave its browser builds out.
  return join(dirname(createRequire(from).resolve(`${name}/package.json`)), path)
}

const PAGE = `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>GraphiQL · BFF Service</title>
  <meta name="robots" content="noindex">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <style>body { margin: 0; } #graphiql { height: 100vh; }</style>
  <link rel="stylesheet" href="./graphiql/graphiql.css">
</head>
<body>
  <div id="graphiql">Loading GraphiQL…</div>
  <script src="./graphiql/react.js"></script>
  <script src="./graphiql/react-dom.js"></script>
  <script src="./graphiql/graphiql.js"></script>
  <script src="./graphiql/start.js"></script>
</body>
</html>
`

/**
 * The page's own script: GraphiQL on the endpoint beside the page (`/graphql`, WebSocket
 * subscriptions on the same path), with a header editor for the credentials (x-api-key,
 * Authorization), kept by the browser between visits.
 */
const START = `/* global React, ReactDOM, GraphiQL */
'use strict'
const endpoint = new URL('./graphql', window.location.href)
const subscriptions = new URL(endpoint)
subscriptions.protocol = endpoint.protocol === 'https:' ? 'wss:' : 'ws:'
const fetcher = GraphiQL.createFetcher({ url: endpoint.href, subscriptionUrl: subscriptions.href })
ReactDOM.createRoot(document.getElementById('graphiql')).render(React.createElement(GraphiQL, {
  fetcher,
  defaultHeaders: JSON.stringify({ 'x-api-key': '' }, null, 2),
  shouldPersistHeaders: true
}))
`

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8'
}

/** `/graphiql` and its files, cached by the browser for a day (they change only with the package). */
export function graphiqlRoutes (app: FastifyInstance): void {
  const hidden = { schema: { hide: true } }
  app.get('/graphiql', hidden, async (_request, reply) => await reply.type('text/html; charset=utf-8').send(PAGE))
  app.get('/graphiql/start.js', hidden, async (_request, reply) => await reply.type(TYPES['.js'] ?? '').send(START))
  for (const asset of Object.keys(GRAPHIQL_ASSETS) as GraphiqlAsset[]) {
    app.get(`/graphiql/${asset}`, hidden, async (_request, reply) => {
      const body = await readFile(graphiqlAssetFile(asset))
      return await reply.type(TYPES[asset.slice(asset.lastIndexOf('.'))] ?? '')
        .header('cache-control', 'public, max-age=86400').send(body)
    })
  }
}
