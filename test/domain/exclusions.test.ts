import t from 'tap'
import type { App } from '../../src/app.js'
import { bearer, buildDataApp, clientToken, forEachEngine, TEXTS, userToken } from '../helper.js'
import {
  assertSameNotFound, assertSameRefusal, graphql, rest, type GraphqlAnswer, type RestAnswer
} from './interfaces.js'

const URL_ = '/openfinance-excluded-transactions'
const FIELDS = 'id client_id transaction_id reason excluded_at'
const EXCLUDE = `mutation ($input: ExcludeTransactionInput!) { excludeTransaction(input: $input) { ${FIELDS} } }`
const LIST = `query ($clientId: ID!) { excludedTransactions(clientId: $clientId) { ${FIELDS} } }`
const DELETE = 'mutation ($id: ID!) { deleteExcludedTransaction(id: $id) }'

async function exclude (
  app: App, headers: Record<string, string>, input: Record<string, unknown>
): Promise<[RestAnswer, GraphqlAnswer]> {
  return [
    await rest(app, 'POST', URL_, headers, input),
    await graphql(app, 'excludeTransaction', EXCLUDE, { input }, headers)
  ]
}

forEachEngine(t, 'a client reaches only its own exclusions (403 FORBIDDEN on both); a user any', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const clientA = bearer(clientToken({ sub: 'client-a' }))
  const user = bearer(userToken())
  const [others] = await exclude(app, user, { client_id: 'client-b', transaction_id: 'tx-b', reason: 'r' })
  t.equal(others.status, 201, 'a user excludes for any client')

  const another = { client_id: 'client-b', transaction_id: 'tx', reason: 'r' }
  const [restCreate, graphqlCreate] = await exclude(app, clientA, another)
  assertSameRefusal(t, restCreate, graphqlCreate, 403, 'FORBIDDEN', TEXTS.otherClient)
  assertSameRefusal(t,
    await rest(app, 'GET', `${URL_}?client_id=client-b`, clientA),
    await graphql(app, 'excludedTransactions', LIST, { clientId: 'client-b' }, clientA),
    403, 'FORBIDDEN', TEXTS.otherClient)
  assertSameRefusal(t,
    await rest(app, 'DELETE', `${URL_}/${others.body.id as string}`, clientA),
    await graphql(app, 'deleteExcludedTransaction', DELETE, { id: others.body.id }, clientA),
    403, 'FORBIDDEN', TEXTS.otherClient)
  const kept = await rest(app, 'GET', `${URL_}?client_id=client-b`, user)
  t.same(kept.body.map((record: { id: string }) => record.id), [others.body.id], 'the other client\'s record is kept')

  const own = await graphql(app, 'excludedTransactions', LIST, { clientId: 'client-b' }, user)
  t.same(own.value, kept.body, 'a user lists any client on both, the same records')
})

forEachEngine(t, 'texts are trimmed on create and on list, through both interfaces', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const client = bearer(clientToken({ sub: 'client-a' }))
  const input = { client_id: '  client-a ', transaction_id: ' tx-1\t', reason: '  Transferência  ' }
  const [viaRest, viaGraphql] = await exclude(app, client, input)
  const trimmed = { client_id: 'client-a', transaction_id: 'tx-1', reason: 'Transferência' }
  t.match(viaRest.body, trimmed, 'REST: trimmed, so the client\'s own')
  t.match(viaGraphql.value, trimmed, 'GraphQL: trimmed, so the client\'s own')
  t.equal(viaGraphql.value.id, viaRest.body.id, 'the same (client, transaction): one record')
  const listed = await graphql(app, 'excludedTransactions', LIST, { clientId: ' client-a ' }, client)
  t.same(listed.value, [{ ...trimmed, id: viaRest.body.id, excluded_at: viaRest.body.excluded_at }])
  t.same((await rest(app, 'GET', `${URL_}?client_id=%20client-a%20`, client)).body, listed.value)
})

forEachEngine(t, 'an exclusion is removed once by its owner, then 404 / false on both', async (t, engine) => {
  const app = await buildDataApp(t, engine)
  const client = bearer(clientToken({ sub: 'client-a' }))
  const ids: string[] = []
  for (const transaction of ['tx-rest', 'tx-graphql']) {
    const input = { client_id: 'client-a', transaction_id: transaction, reason: 'r' }
    ids.push((await rest(app, 'POST', URL_, client, input)).body.id)
  }
  const [viaRestId, viaGraphqlId] = ids as [string, string]
  const removed = await rest(app, 'DELETE', `${URL_}/${viaRestId}`, client)
  t.same(removed.body, { message: 'Exclusão removida com sucesso', id: viaRestId })
  t.same((await graphql(app, 'deleteExcludedTransaction', DELETE, { id: viaGraphqlId }, client)).value, true)
  t.same((await rest(app, 'GET', `${URL_}?client_id=client-a`, client)).body, [], 'both are gone')
  for (const id of [viaRestId, viaGraphqlId, 'no-such-exclusion', 'z'.repeat(65)]) {
    const again = await rest(app, 'DELETE', `${URL_}/${id}`, client)
    assertSameNotFound(t, again, await graphql(app, 'deleteExcludedTransaction', DELETE, { id }, client), false)
  }
  const unknown = await rest(app, 'DELETE', `${URL_}/no-such-exclusion`, client)
  t.equal(unknown.body.message, 'Exclusão não encontrada')
})
