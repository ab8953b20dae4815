import t from 'tap'
import WebSocket from 'ws'
import { buildApp } from '../../../src/app.js'
import { assertErrorBody, testConfig } from '../../helper.js'

t.test('concurrent first requests share one load; a failed load answers 500, the next request loads again', async t => {
  const config = testConfig()
  let loads = 0
  config.modules.graphql.loadEngine = async () => {
    loads++
    if (loads === 1) throw new Error('the engine\'s chunk is missing')
    return await import('../../../src/modules/graphql/engine.js')
  }
  const app = await buildApp(config)
  t.teardown(() => app.close())
  await app.ready()
  const query = { method: 'POST', url: '/graphql', payload: { query: '{ __typename }' } } as const
  const failed = await app.inject(query)
  t.equal(failed.statusCode, 500)
  assertErrorBody(t, failed.json(), 500, '/graphql')
  t.equal(failed.json().code, 'INTERNAL_ERROR')
  const overGet = { method: 'GET', url: '/graphql?query=%7B__typename%7D' } as const
  const answers = await Promise.all([app.inject(query), app.inject(overGet), app.inject(query)])
  t.same(answers.map(answer => answer.statusCode), [200, 200, 200])
  t.same(answers.map(answer => answer.json()), Array(3).fill({ data: { __typename: 'Query' } }))
  t.equal(loads, 2, 'loaded once more, for the three')
  await app.inject(query)
  t.equal(loads, 2, 'and never again')
})

t.test('a document sent as application/graphql reaches the engine as the app read it', async t => {
  const app = await buildApp(testConfig())
  t.teardown(() => app.close())
  const answer = await app.inject({
    method: 'POST', url: '/graphql', headers: { 'content-type': 'application/graphql' }, payload: '{ __typename }'
  })
  t.equal(answer.statusCode, 200)
  t.same(answer.json(), { data: { __typename: 'Query' } })
})

t.test('a WebSocket upgrade the engine cannot take is answered over HTTP and its socket closed', async t => {
  const config = testConfig()
  config.modules.graphql.loadEngine = async () => { throw new Error('the engine\'s chunk is missing') }
  const app = await buildApp(config)
  t.teardown(() => app.close())
  const address = await app.listen({ port: 0, host: '127.0.0.1' })
  const socket = new WebSocket(`${address.replace('http', 'ws')}/graphql`, 'graphql-transport-ws')
  const status = await new Promise<number>((resolve, reject) => {
    socket.on('unexpected-response', (_request, response) => {
      response.resume()
      // Resolved once the service closed the socket: a left-open one would time the test out.
      response.socket.once('close', () => { resolve(response.statusCode ?? 0) })
    })
    socket.on('open', () => { reject(new Error('upgraded')) })
  })
  t.equal(status, 500)
})
