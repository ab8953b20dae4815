import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import errorResponses from '../../src/plugins/error-responses.js'
import auth from '../../src/plugins/auth.js'
import { requestAccess } from '../../src/plugins/credentials.js'
import { EVERY_PORTFOLIO, type Access } from '../../src/domain/access.js'
import { PortfolioService } from '../../src/domain/portfolios.js'
import { ExclusionService } from '../../src/domain/exclusions.js'
import type { DataStore, ExclusionStore } from '../../src/domain/ports.js'
import { providerConfig } from '../../src/schemas/tokens.js'
import { bearer, clientToken, tymon, userToken } from '../helper.js'

/** The auth plugin alone, with a budget of one failed authentication per IP and minute. */
async function authApp (t: Test): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(errorResponses)
  await app.register(auth, {
    jwtSecret: tymon.secret,
    jwtAlgorithm: 'HS256',
    leewaySeconds: 0,
    providers: providerConfig({ user: 'App\\Models\\User', client: 'App\\Models\\User\\Client' }),
    apiKeys: ['key-one'],
    authFailuresPerMinute: 1
  })
  t.teardown(() => app.close())
  return app
}

t.test('on REST the Access trusts the guard that ran for the request: nothing is verified twice', async t => {
  const app = await authApp(t)
  app.get('/keyed', { onRequest: [app.verifyApiKey] }, async request => {
    // Were the key checked again, this would now fail.
    request.headers['x-api-key'] = 'changed-after-the-guard'
    await requestAccess(app, request).apiKey()
    return { ok: true }
  })
  app.get('/bearer', { onRequest: [app.verifyJwt] }, async request => {
    request.headers.authorization = 'Bearer changed.after.guard'
    const principal = await requestAccess(app, request).principal()
    return { id: principal.id, type: principal.type }
  })
  t.same((await app.inject({ url: '/keyed', headers: { 'x-api-key': 'key-one' } })).json(), { ok: true })
  const answer = await app.inject({ url: '/bearer', headers: bearer(clientToken({ sub: 'client-9' })) })
  t.same(answer.json(), { id: 'client-9', type: 'client' })
})

t.test('without a guard (GraphQL) the Access runs it once per request, however often asked', async t => {
  const app = await authApp(t)
  app.get('/asks-twice', async request => {
    const access = requestAccess(app, request)
    const asked = [access.apiKey(), access.apiKey(), access.principal(), access.principal()]
    const outcomes = await Promise.allSettled(asked)
    return outcomes.map(outcome => outcome.status === 'fulfilled' ? 'ok' : (outcome.reason as { code: string }).code)
  })
  // One failed authentication per minute: a second verification of the same key would be 429.
  const refused = await app.inject({ url: '/asks-twice', headers: { 'x-api-key': 'wrong' } })
  const invalid = 'BFF_AUTH_API_KEY_INVALID'
  t.same(refused.json().slice(0, 2), [invalid, invalid], 'one failure, reported twice')
  const granted = await app.inject({ url: '/asks-twice', headers: { 'x-api-key': 'key-one', ...bearer(userToken()) } })
  t.same(granted.json(), ['ok', 'ok', 'ok', 'ok'])
})

/** An Access that records what was asked of it. */
function recordingAccess (granted: boolean): Access & { asked: string[] } {
  const asked: string[] = []
  const refuse = async (): Promise<never> => { throw Object.assign(new Error('refused'), { code: 'REFUSED' }) }
  return {
    asked,
    apiKey: async () => { asked.push('apiKey'); if (!granted) await refuse() },
    principal: async () => {
      asked.push('principal')
      return granted ? { id: 'client-a', type: 'client' } as never : await refuse()
    },
    portfolioScope: async () => {
      asked.push('portfolioScope')
      return granted ? EVERY_PORTFOLIO : await refuse()
    },
    caller: () => 'recorded'
  }
}

t.test('a service checks the credential before the store; an id over 64 characters is never looked up', async t => {
  const reads: string[] = []
  const store = {
    portfolios: { portfolioAndAssets: async (id: string) => { reads.push(id); return undefined } },
    write: async () => { reads.push('a write'); return false }
  } as unknown as DataStore
  const portfolios = new PortfolioService(store)

  const refused = recordingAccess(false)
  await t.rejects(portfolios.portfolioOnly(refused, 'p-1'), { code: 'REFUSED' })
  await t.rejects(portfolios.delete(refused, 'p-1'), { code: 'REFUSED' })
  t.same(refused.asked, ['portfolioScope', 'portfolioScope'])
  t.same(reads, [], 'a refused caller reaches nothing')

  const granted = recordingAccess(true)
  for (const id of ['x'.repeat(65), '']) {
    await t.rejects(portfolios.portfolioOnly(granted, id),
      { code: 'BFF_NOT_FOUND', message: 'Portfolio não encontrado' })
    await t.rejects(portfolios.delete(granted, id), { code: 'BFF_NOT_FOUND' })
  }
  t.same(reads, [], 'no lookup for an id no record can have')
  await t.rejects(portfolios.portfolioOnly(granted, 'x'.repeat(64)), { code: 'BFF_NOT_FOUND' })
  t.same(reads, ['x'.repeat(64)], 'a 64-character id is looked up')

  const exclusions = new ExclusionService({
    get: async () => ({ id: 'e-1', client_id: 'client-b' }),
    delete: async () => { t.fail('another client\'s record must not be deleted'); return true }
  } as unknown as ExclusionStore)
  await t.rejects(exclusions.delete(granted, 'e-1'), { code: 'BFF_FORBIDDEN' })
  t.same(granted.asked.at(-1), 'principal', 'the exclusion service asks for the principal')
})
