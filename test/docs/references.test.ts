import t from 'tap'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * What the documents name must exist: every `src/…` path (the walk of docs/style.md, the tables of
 * where things live), every link to another document and its `#anchor`, and every `docs/….md#anchor`
 * a comment of the code cites. A file renamed or a heading reworded fails here, naming the document
 * that still says the old name.
 */

const root = fileURLToPath(new URL('../..', import.meta.url))
const read = (file: string): string => readFileSync(join(root, file), 'utf8')

/** The documents a reader is sent to: the README and docs/*.md (BENCHMARKS.md too, as a link target). */
const DOCUMENTS = [
  'README.md',
  ...readdirSync(join(root, 'docs')).filter(name => name.endsWith('.md')).map(name => `docs/${name}`)
]

/** A document's text without its fenced blocks (shell comments there are not headings, examples not references). */
function prose (text: string): string {
  return text.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '')
}

/**
 * The anchors of a document's headings, as GitHub makes them: lower case, punctuation but `-` and
 * `_` dropped, each space a `-`, a repeated heading numbered (`-1`, `-2`). Ten lines rather than a
 * dependency for the tests alone.
 */
function anchors (file: string): Set<string> {
  const seen = new Map<string, number>()
  const result = new Set<string>()
  for (const [, heading = ''] of prose(read(file)).matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-')
    const count = seen.get(slug) ?? 0
    seen.set(slug, count + 1)
    result.add(count === 0 ? slug : `${slug}-${count}`)
  }
  return result
}

/** docs/aggregator.md's facts cite the files of Pluggy's SDKs (pluggy-node's `src/types/item.ts`), not ours. */
function ownText (file: string): string {
  const text = read(file)
  if (file !== 'docs/aggregator.md') return text
  return text.slice(0, text.indexOf('\n## Facts')) + text.slice(text.indexOf('\n## What the service does'))
}

/** The `src/…` paths a text names, up to the first character a path here never has (`<name>` stops before `<`). */
function sourcePaths (text: string): string[] {
  return [...text.matchAll(/(?<![\w./-])src\/[\w./-]*/g)].map(([path]) => path.replace(/[.]+$/, ''))
}

t.test('every src/ path a document names exists', async t => {
  let named = 0
  for (const file of DOCUMENTS) {
    const paths = sourcePaths(ownText(file))
    const missing = [...new Set(paths)].filter(path => !existsSync(join(root, path)))
    named += paths.length
    t.same(missing, [], `${file}: every src/ path it names exists`)
  }
  t.ok(named > 100, `the documents name ${named} paths: the pattern finds them`)
  t.ok(sourcePaths(read('docs/style.md')).includes('src/modules/graphql/index.ts'), 'the walk names GraphQL\'s entry')
})

t.test('each step of the walk in docs/style.md names the file that does it', async t => {
  const style = prose(read('docs/style.md'))
  const start = style.indexOf('\n## How a request crosses the layers')
  const walk = style.slice(start, style.indexOf('\n## ', start + 1))
  const requests = [...walk.matchAll(/^\*\*(?:A|The) (.+?)\*\*$/gm)].map(([, title = '']) => title)
  t.match(requests, [/^REST read: `GET \/portfolios\/:id`/, /^dated SELL: `POST /, /^performance: `GET /])
  // A step: its number, then its lines indented under it.
  const steps = [...walk.matchAll(/^\d+\. .*(?:\n {3}.*)*/gm)].map(([step]) => step)
  t.ok(steps.length >= 15, `${steps.length} steps`)
  t.same(steps.filter(step => sourcePaths(step).length === 0), [], 'none without a src/ path')
})

t.test('every link between the documents reaches its file and heading', async t => {
  for (const file of DOCUMENTS) {
    const broken: string[] = []
    for (const [, target = ''] of prose(read(file)).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target)) continue
      const [path = '', anchor] = target.split('#')
      const linked = path === '' ? file : normalize(join(dirname(file), path))
      if (!existsSync(join(root, linked))) broken.push(`${target}: no ${linked}`)
      else if (anchor !== undefined && !statSync(join(root, linked)).isDirectory() && !anchors(linked).has(anchor)) {
        broken.push(`${target}: no heading #${anchor} in ${linked}`)
      }
    }
    t.same(broken, [], `${file}: every link resolves`)
  }
})

/** The files under `folder` whose text a reader of the code meets: sources, tests, benchmarks. */
function codeFiles (folder: string): string[] {
  return readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' })
    .filter(name => /\.(?:ts|mjs|js)$/.test(name) && !name.includes('generated'))
    .map(name => join(folder, name))
}

t.test('every docs/….md#anchor the code cites is a heading of that document', async t => {
  const files = [...codeFiles('src'), ...codeFiles('test'), ...codeFiles('bench'), 'eslint.config.js']
  const broken: string[] = []
  let cited = 0
  for (const file of files) {
    for (const [, document = '', anchor = ''] of read(file).matchAll(/\b((?:docs\/[\w-]+|BENCHMARKS)\.md)#([\w-]+)/g)) {
      cited++
      if (!existsSync(join(root, document)) || !anchors(document).has(anchor)) {
        broken.push(`${relative(root, join(root, file))}: ${document}#${anchor}`)
      }
    }
  }
  t.ok(cited > 100, `the code cites ${cited} anchors`)
  t.same([...new Set(broken)], [], 'each resolves')
})

t.test('anchors are made as GitHub makes them', async t => {
  const api = anchors('docs/api.md')
  t.ok(api.has('reads-from-memory-and-what-another-instance-may-answer'), 'a comma dropped')
  t.ok(api.has('whose-portfolios'))
  t.notOk(api.has('id-1'), 'a shell comment in a fenced block is no heading')
})
