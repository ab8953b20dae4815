import { writeFileSync } from 'node:fs'
import { printSchema } from 'graphql'
import { buildGraphql } from '../modules/graphql/schema.js'

/** Where `npm run graphql:schema` writes the SDL (checked by a test, so a schema change shows in review). */
export const SCHEMA_FILE = new URL('../../schema.graphql', import.meta.url)

/** The SDL of the service's GraphQL schema, as committed. */
export function schemaSdl (): string {
  return `${printSchema(buildGraphql().schema)}\n`
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  writeFileSync(SCHEMA_FILE, schemaSdl())
  console.log(`wrote ${SCHEMA_FILE.pathname}`)
}
