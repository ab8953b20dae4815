import Big from 'big.js'
import t from 'tap'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildTestApp, forEachEngine, freshDatabase, TEST_API_KEYS } from '../helper.js'

/** 5 s in `npm test` (and CI); `npm run test:load` runs the full 30 s. */
const SECONDS = Number(process.env.LOAD_SECONDS ?? 5)
const CLIENTS = 50
const PORTFOLIOS = 10

interface Held { quantity: number, price: number, portfolioId: string }

forEachEngine(t, `${CLIENTS} clients create, update and delete assets for ${SECONDS} s: ` +
  'nothing acknowledged is lost', async (t, engine) => {
  const database =
    engine === 'sqlite'
      ? { DATABASE_URL: `sqlite:${join(mkdtempSync(join(tmpdir(), 'bff-load-')), 'load.sqlite')}` }
      : (await freshDatabase(t, engine)).env
  const app = await buildTestApp(t, { ...database, RATE_LIMIT_MAX: '1000000000' })
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  const headers = { 'x-api-key': TEST_API_KEYS[0] ?? '' }
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, body === undefined
      ? { method, headers }
      : { method, headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) })
    return { status: res.status, body: await res.json() as Record<string, unknown> }
  }
  const portfolios: string[] = []
  for (let i = 0; i < PORTFOLIOS; i++) {
    portfolios.push(
      (await call('POST', '/portfolios', { name: `Load ${i}`, userId: `load-${i % 3}` })).body.id as string
    )
  }

  const held = new Map<string, Held>()
  const deleted = new Set<string>()
  const counts = { create: 0, update: 0, delete: 0, serverErrors: 0 }
  const deadline = Date.now() + SECONDS * 1000
  await Promise.all(Array.from({ length: CLIENTS }, async (_, client) => {
    const mine: string[] = []
    let step = 0
    while (Date.now() < deadline) {
      step++
      // Half creates, a third updates, the rest deletes: the store grows while everything churns.
      const slot = step % 6
      const op = mine.length === 0 || slot < 3 ? 'create' : slot < 5 ? 'update' : 'delete'
      if (op === 'create') {
        const portfolioId = portfolios[(client + step) % PORTFOLIOS] ?? ''
        const asset = {
          name: `A${client}-${step}`,
          symbol: 'LOAD3',
          type: 'STOCK',
          quantity: 1 + (step % 7) / 4,
          price: 10 + (client % 13) / 8,
          portfolioId
        }
        const res = await call('POST', '/portfolio-assets', asset)
        if (res.status >= 500) counts.serverErrors++
        if (res.status === 201) {
          held.set(res.body.id as string, { quantity: asset.quantity, price: asset.price, portfolioId })
          mine.push(res.body.id as string)
          counts.create++
        }
      } else if (op === 'update') {
        const id = mine[step % mine.length] ?? ''
        const change = { quantity: 0.5 + (step % 11) / 3, price: 5 + (step % 17) / 5 }
        const res = await call('PATCH', `/portfolio-assets/${id}`, change)
        if (res.status >= 500) counts.serverErrors++
        const before = held.get(id)
        if (res.status === 200 && before !== undefined) { held.set(id, { ...before, ...change }); counts.update++ }
      } else {
        const id = mine.splice(step % mine.length, 1)[0] ?? ''
        const res = await call('DELETE', `/portfolio-assets/${id}`)
        if (res.status >= 500) counts.serverErrors++
        if (res.status === 200) { held.delete(id); deleted.add(id); counts.delete++ }
      }
    }
  }))
  t.equal(counts.serverErrors, 0, 'no 5xx under load')
  t.ok(counts.create > 0 && counts.update > 0 && counts.delete > 0, `acknowledged: ${JSON.stringify(counts)}`)

  let missing = 0
  let wrong = 0
  for (const [id, expected] of held) {
    const res = await app.inject({ method: 'GET', url: `/portfolio-assets/${id}`, headers })
    if (res.statusCode !== 200) { missing++; continue }
    const asset = res.json() as { quantity: number, price: number, portfolioId: string }
    if (
      asset.quantity !== expected.quantity ||
      asset.price !== expected.price ||
      asset.portfolioId !== expected.portfolioId
    ) {
      wrong++
    }
  }
  t.equal(missing, 0, `every acknowledged write is present (${held.size} assets)`)
  t.equal(wrong, 0, 'with its last acknowledged values')
  let resurrected = 0
  for (const id of deleted) {
    if ((await app.inject({ method: 'GET', url: `/portfolio-assets/${id}`, headers })).statusCode !== 404) resurrected++
  }
  t.equal(resurrected, 0, `every acknowledged delete is absent (${deleted.size} deletes)`)

  for (const portfolioId of portfolios) {
    const detail = (await app.inject({ method: 'GET', url: `/portfolios/${portfolioId}`, headers })).json() as {
      totalValue: number
      assets: Array<{ id: string, quantity: number, price: number }>
    }
    // Each asset's value to the cent, summed exactly (docs/api.md#money).
    const valueOf = (assets: Array<{ quantity: number, price: number }>): number =>
      assets
        .reduce((sum, a) => sum.plus(new Big(a.quantity).times(a.price).round(2, Big.roundHalfUp)), new Big(0))
        .toNumber()
    const listed = valueOf(detail.assets)
    const expected = valueOf([...held.values()].filter(a => a.portfolioId === portfolioId))
    t.equal(
      detail.totalValue,
      listed,
      `portfolio ${portfolioId}: totalValue ${detail.totalValue} = sum of its assets ${listed}`
    )
    t.equal(detail.totalValue, expected, 'and of what the clients were told')
    t.equal(detail.assets.length, [...held.values()].filter(a => a.portfolioId === portfolioId).length)
  }
})
