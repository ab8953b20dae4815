// `npm run lint` (and the start of `npm test`): neostandard, the flat-config successor of standard
// (two-space indent, single quotes, no semicolons, a space before a function's parentheses), with
// its TypeScript support on, and lines of at most 120 characters.
import neostandard from 'neostandard'

export default [
  ...neostandard({
    ts: true,
    ignores: [
      'dist/**',
      'coverage/**',
      '.tap/**',
      'bench/results/**',
      'test/fixtures/generated-client*/**',
      'node_modules/**'
    ]
  }),
  {
    name: 'bff/line-length',
    rules: {
      '@stylistic/max-len': ['error', { code: 120, tabWidth: 2 }]
    }
  }
]
