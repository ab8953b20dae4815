// `npm run lint` (and the start of `npm test`): neostandard, the flat-config successor of standard
// (two-space indent, single quotes, no semicolons, a space before a function's parentheses), with
// its TypeScript support on, lines of at most 120 characters and type members delimited as the code
// already does.
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
