import { copyFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import {
  GRAPHIQL_ASSETS, GRAPHIQL_BUILD_FOLDER, graphiqlAssetFile, type GraphiqlAsset
} from '../modules/graphql/graphiql.js'

/**
 * `npm run build:graphiql [dist]` (a step of `npm run build`): copies the browser builds GraphiQL's
 * page loads (React, ReactDOM, GraphiQL) from their packages into `<dist>/graphiql/`, so that the
 * built server and the packed package serve them without the dev dependencies they come from.
 */
const folder = join(process.argv[2] ?? 'dist', GRAPHIQL_BUILD_FOLDER)
mkdirSync(folder, { recursive: true })
for (const asset of Object.keys(GRAPHIQL_ASSETS) as GraphiqlAsset[]) {
  copyFileSync(graphiqlAssetFile(asset), join(folder, asset))
}
