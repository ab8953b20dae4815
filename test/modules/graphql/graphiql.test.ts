import t from 'tap'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { graphiqlAssetFile } from '../../../src/modules/graphql/graphiql.js'
import { buildTestApp } from '../../helper.js'

t.test('the GraphiQL page and its files exist outside production only', async t => {
  const production = await buildTestApp(t, { NODE_ENV: 'production' })
  for (const path of ['/graphiql', '/graphiql/graphiql.js', '/graphiql/start.js']) {
    t.equal((await production.inject({ method: 'GET', url: path })).statusCode, 404, `${path}: 404 in production`)
  }
  const development = await buildTestApp(t)
  const script = await development.inject({ method: 'GET', url: '/graphiql/react.js' })
  t.equal(script.statusCode, 200)
  t.match(script.headers['content-type'], /^text\/javascript/)
  t.equal(script.headers['cache-control'], 'public, max-age=86400', 'kept by the browser for a day')
  t.match(script.body, /React/)
})

t.test('GraphiQL\'s files come from dist/graphiql/ when the code runs built, else from their packages', async t => {
  const dist = t.testdir({})
  mkdirSync(join(dist, 'graphiql'))
  writeFileSync(join(dist, 'graphiql', 'react.js'), 'built')
  t.equal(graphiqlAssetFile('react.js', join(dist, 'chunks', 'engine.js')), join(dist, 'graphiql', 'react.js'),
    'from a chunk of the bundle')
  t.equal(graphiqlAssetFile('react.js', join(dist, 'modules', 'graphql', 'graphiql.js')),
    join(dist, 'graphiql', 'react.js'), 'from tsc\'s output')
  t.match(graphiqlAssetFile('react.js'), /node_modules\/react\/umd\/react\.production\.min\.js$/, 'from the sources')
})
