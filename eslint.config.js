// `npm run lint` (and the start of `npm test`): neostandard, the flat-config successor of standard
// (two-space indent, single quotes, no semicolons, a space before a function's parentheses), with
// its TypeScript support on, lines of at most 120 characters and type members delimited as the code
// already does.
import neostandard from 'neostandard'

/*
 * The layers (docs/style.md#layers), from the ground up: values (src/schemas, src/http,
 * src/errors.ts) → adapters (store, change-feed, cache, quotes, upstream, observability) → domain →
 * operations → plugins → modules → the app (app.ts, index.ts, serve.ts, server.ts, config/, cli/). A file
 * imports only from its own layer or below; these rules name, per folder, what lies above it.
 */
const ABOVE = {
  values: ['store', 'change-feed', 'cache', 'quotes', 'upstream', 'observability', 'domain', 'operations',
    'plugins', 'modules', 'config', 'cli'],
  adapters: ['domain', 'operations', 'plugins', 'modules', 'config', 'cli'],
  domain: ['operations', 'plugins', 'modules', 'config', 'cli'],
  operations: ['plugins', 'modules', 'config', 'cli'],
  plugins: ['modules', 'config', 'cli'],
  modules: ['config', 'cli']
}
const APP_FILES = 'app|index|serve|server'

/** An import of a folder or app file above `layer`, from a file `depth` folders under src/ (0: src/ itself). */
function above (layer, depth) {
  const up = depth === 0 ? '\\./' : `(\\.\\./){${depth}}`
  return {
    regex: `^${up}((${ABOVE[layer].join('|')})/|(${APP_FILES})\\.js$)`,
    message: `${layer}: a file imports only from its own layer or below (docs/style.md#layers)`
  }
}

/**
 * The domain knows nothing of Fastify: it defines Access and its ports, and the plugins implement
 * them; nor do the operations, which the plugins build into routes.
 */
const NO_FASTIFY = {
  regex: '^(fastify|fastify-plugin|@fastify/.*)$',
  message: 'the domain and the operations import nothing of Fastify (docs/style.md#layers)'
}

/**
 * The declarations are imported at start and built into routes there; GraphQL is built from them
 * only when its engine loads, on the first GraphQL request (docs/style.md, "Start-up").
 */
const NO_GRAPHQL = {
  regex: '^(graphql|mercurius|graphql-.*)$',
  message: 'the operations import nothing of GraphQL, which loads on its first request (docs/style.md#layers)'
}

/**
 * The domain declares the ports it needs (src/domain/ports.ts) and the store implements them: no file of the
 * domain imports a file of the store, its repositories or their types.
 */
const NO_STORE = {
  regex: '^\\.\\./store/',
  message: 'the domain reaches the store through its ports (src/domain/ports.ts, docs/style.md#the-domain-layer)'
}

/** A module reaches another module's code through the layers below, never directly. */
const NO_OTHER_MODULE = {
  regex: '^\\.\\./[^.][^/]*/',
  message: 'a module imports no other module: share through src/schemas or src/domain (docs/style.md#layers)'
}

function layer (name, files, patterns) {
  return { name: `bff/layers/${name}`, files, rules: { 'no-restricted-imports': ['error', { patterns }] } }
}

export default [
  ...neostandard({
    ts: true,
    ignores: [
      'dist/**',
      'coverage/**',
      '.tap/**',
      'bench/results/**',
      'test/fixtures/generated-client*/**',
      // Ajv's standalone code, written by `npm run build:config-validator` (docs/style.md).
      'src/**/*.generated.ts',
      'node_modules/**'
    ]
  }),
  layer('values', ['src/schemas/**/*.ts', 'src/http/**/*.ts'], [above('values', 1)]),
  layer('values', ['src/errors.ts'], [above('values', 0)]),
  layer('adapters', ['src/{store,change-feed,cache,quotes,upstream,observability}/**/*.ts'], [above('adapters', 1)]),
  layer('domain', ['src/domain/**/*.ts'], [above('domain', 1), NO_FASTIFY, NO_STORE]),
  layer('operations', ['src/operations/**/*.ts'], [above('operations', 1), NO_FASTIFY, NO_GRAPHQL]),
  layer('plugins', ['src/plugins/**/*.ts'], [above('plugins', 1)]),
  layer('modules', ['src/modules/**/*.ts'], [above('modules', 2), NO_OTHER_MODULE]),
  {
    // Importing a builtin as ESM reads every export, and Node 24's `http.WebSocket` getters load
    // Node's own undici: about 28 ms of CPU per start (measured in src/http/node-http.ts).
    name: 'bff/node-http-through-require',
    files: ['src/**/*.ts'],
    ignores: ['src/http/node-http.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        paths: ['node:http', 'node:https', 'http', 'https'].map(name => ({
          name,
          allowTypeImports: true,
          message: 'Take it from src/http/node-http.ts (through require: docs/style.md, "Start-up").'
        }))
      }]
    }
  },
  {
    name: 'bff/style',
    rules: {
      '@stylistic/max-len': ['error', { code: 120, tabWidth: 2 }],
      // Type members as the code writes them: `{ a: string, b: number }` on one line, none across lines.
      '@stylistic/member-delimiter-style': ['error', {
        multiline: { delimiter: 'none' },
        singleline: { delimiter: 'comma', requireLast: false }
      }]
    }
  }
]
