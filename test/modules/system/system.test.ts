import t from 'tap'
import { buildTestApp, tymon } from '../../helper.js'

t.test('GET /provider-config reports the computed hashes without credentials', async t => {
  const app = await buildTestApp(t)
  const res = await app.inject({ method: 'GET', url: '/provider-config' })
  t.equal(res.statusCode, 200)
  t.same(res.json(), {
    userProviderHash: tymon.userProviderHash,
    clientProviderHash: tymon.clientProviderHash,
    autoCalculated: true,
    models: { user: 'App\\Models\\User', client: 'App\\Models\\User\\Client' }
  })
})

t.test('GET /provider-config with explicit hashes and models', async t => {
  const app = await buildTestApp(t, { JWT_USER_MODEL: 'App\\User', JWT_CLIENT_PROVIDER_HASH: 'a'.repeat(40) })
  const res = await app.inject({ method: 'GET', url: '/provider-config' })
  t.same(res.json(), {
    userProviderHash: '87e0af1ef9fd15812fdec97153a14e0b047546aa',
    clientProviderHash: 'a'.repeat(40),
    autoCalculated: false,
    models: { user: 'App\\User', client: 'App\\Models\\User\\Client' }
  })
})
