import t from 'tap'
import { assertErrorBody, bearer, buildDataApp, clientToken, forEachEngine, userToken, TEXTS } from '../../helper.js'

const URL_ = '/openfinance-excluded-transactions'
const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

forEachEngine(t, 'a client excludes, lists and removes its own transactions', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const client = bearer(clientToken({ sub: 77 }))
  const created = await app.inject({
    method: 'POST',
    url: URL_,
    headers: client,
    payload: {
      client_id: '77',
      transaction_id: 'tx-1',
      reason: 'Transferência entre contas',
      excluded_at: '2026-11-01T12:00:00Z',
      extra: 'dropped'
    }
  })
  t.equal(created.statusCode, 201)
  t.match(created.json(), {
    id: String,
    client_id: '77',
    transaction_id: 'tx-1',
    reason: 'Transferência entre contas',
    excluded_at: '2026-11-01T12:00:00.000Z',
    created_at: ISO_MS
  })
  t.notOk('extra' in created.json())

  const again = await app.inject({
    method: 'POST',
    url: URL_,
    headers: client,
    payload: { client_id: '77', transaction_id: 'tx-1', reason: 'de novo' }
  })
  t.equal(again.statusCode, 200, 'a repeat returns the stored record')
  t.same(again.json(), created.json())

  const withDefault = await app.inject({
    method: 'POST',
    url: URL_,
    headers: client,
    payload: { client_id: '77', transaction_id: 'tx-2', reason: 'r' }
  })
  t.equal(withDefault.statusCode, 201)
  t.match(withDefault.json().excluded_at, ISO_MS)

  const list = await app.inject({ method: 'GET', url: `${URL_}?client_id=77`, headers: client })
  t.equal(list.statusCode, 200)
  t.same(list.json().map((r: { transaction_id: string }) => r.transaction_id), ['tx-1', 'tx-2'])
  t.same(Object.keys(list.json()[0]).sort(), ['client_id', 'excluded_at', 'id', 'reason', 'transaction_id'])

  const removed = await app.inject({ method: 'DELETE', url: `${URL_}/${created.json().id}`, headers: client })
  t.equal(removed.statusCode, 200)
  t.same(removed.json(), { message: 'Exclusão removida com sucesso', id: created.json().id })
  const gone = await app.inject({ method: 'DELETE', url: `${URL_}/${created.json().id}`, headers: client })
  t.equal(gone.statusCode, 404)
  t.match(gone.json(), { code: 'NOT_FOUND', message: 'Exclusão não encontrada' })
  t.equal((await app.inject({ method: 'GET', url: `${URL_}?client_id=77`, headers: client })).json().length, 1)
})

forEachEngine(t, 'a client cannot touch another client\'s records; a user can', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const owner = bearer(clientToken({ sub: 'c1' }))
  const intruder = bearer(clientToken({ sub: 'c2' }))
  const user = bearer(userToken({ sub: 5 }))
  const record = (await app.inject({
    method: 'POST',
    url: URL_,
    headers: owner,
    payload: { client_id: 'c1', transaction_id: 't', reason: 'r' }
  })).json()

  const create = await app.inject({
    method: 'POST',
    url: URL_,
    headers: intruder,
    payload: { client_id: 'c1', transaction_id: 'x', reason: 'r' }
  })
  t.equal(create.statusCode, 403)
  t.equal(create.json().message, TEXTS.otherClient)
  assertErrorBody(t, create.json(), 403, URL_)
  t.equal((await app.inject({ method: 'GET', url: `${URL_}?client_id=c1`, headers: intruder })).statusCode, 403)
  t.equal((await app.inject({ method: 'DELETE', url: `${URL_}/${record.id}`, headers: intruder })).statusCode, 403)

  const listed = await app.inject({ method: 'GET', url: `${URL_}?client_id=c1`, headers: user })
  t.equal(listed.statusCode, 200)
  t.same(listed.json().map((r: { transaction_id: string }) => r.transaction_id), ['t'], 'the intruder stored nothing')
  t.equal((await app.inject({
    method: 'POST',
    url: URL_,
    headers: user,
    payload: { client_id: 'c9', transaction_id: 'y', reason: 'r' }
  })).statusCode, 201)
  t.equal((await app.inject({ method: 'DELETE', url: `${URL_}/${record.id}`, headers: user })).statusCode, 200)
})

forEachEngine(t, 'validation and credentials', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const user = bearer(userToken())
  const missing = await app.inject({ method: 'POST', url: URL_, headers: user, payload: {} })
  t.equal(missing.statusCode, 400)
  t.same(missing.json().message, [
    'client_id should not be empty', 'client_id must be a string',
    'transaction_id should not be empty', 'transaction_id must be a string',
    'reason should not be empty', 'reason must be a string'
  ])
  const badDate = await app.inject({
    method: 'POST',
    url: URL_,
    headers: user,
    payload: { client_id: 'c', transaction_id: 't', reason: 'r', excluded_at: 'yesterday' }
  })
  t.same(badDate.json().message, ['excluded_at must be a valid ISO 8601 date string'])
  const noClient = await app.inject({ method: 'GET', url: URL_, headers: user })
  t.equal(noClient.statusCode, 400)
  t.same(noClient.json().message, ['client_id should not be empty', 'client_id must be a string'])

  for (const [method, url] of [['GET', `${URL_}?client_id=c`], ['POST', URL_], ['DELETE', `${URL_}/x`]] as const) {
    const res = await app.inject({
      method,
      url,
      ...(method === 'POST' ? { payload: { client_id: 'c', transaction_id: 't', reason: 'r' } } : {})
    })
    t.equal(res.statusCode, 401, `${method} without a token`)
    t.equal(res.json().message, 'Token não fornecido ou inválido')
  }
  t.same((await app.inject({
    method: 'GET',
    url: `${URL_}?client_id=c`,
    headers: user
  })).json(), [], 'nothing was stored')
})

forEachEngine(t, 'concurrent duplicates are stored once', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const user = bearer(userToken())
  const results = await Promise.all(Array.from({ length: 20 }, () => app.inject({
    method: 'POST',
    url: URL_,
    headers: user,
    payload: { client_id: 'c', transaction_id: 'same', reason: 'r' }
  })))
  t.equal(results.filter(r => r.statusCode === 201).length, 1)
  t.equal(results.filter(r => r.statusCode === 200).length, 19)
  t.equal(new Set(results.map(r => r.json().id)).size, 1)
})
