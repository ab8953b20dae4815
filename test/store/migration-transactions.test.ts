import { mkdtempSync, readFileSync } from 'node:fs'
import { mock } from 'node:test'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import type { Kysely } from 'kysely'
import { connect } from '../../src/store/connect.js'
import { migrate } from '../../src/store/migrate.js'
import { DashboardService } from '../../src/domain/dashboard-service.js'
import { apiKey, buildTestApp, freshDatabase, NEEDS_POSTGRES, testNeeding, type Engine } from '../helper.js'
import {
  LEGACY_NOW, LEGACY_TABLES, recordAnswers, UNKNOWN_QUOTES, type Answer, type LegacyFixture, type LegacyTable
} from '../fixtures/legacy-store/answers.js'
import { NO_EVENT_BOOKS } from '../fixtures/corporate-events.js'
import { startFakeBrapi } from '../fixtures/fake-brapi.js'

/*
 * Migration 0010 on a copy of a store written by the service before dated transactions (main at
 * the fixture's `madeBy`, on each engine: test/fixtures/legacy-store/generate.ts): the demo data,
 * a partial FIFO sale, assets whose PATCHed price is not their lots' average, a deleted asset.
 * Everything it answered is answered the same after, and its lots are the assets' BUYs.
 */

function fixtureOf (engine: Engine): LegacyFixture {
  return JSON.parse(readFileSync(new URL(`../fixtures/legacy-store/${engine}.json`, import.meta.url), 'utf8'))
}

/** A store migrated as far as that service did (0009), holding the fixture's rows as its engine held them. */
async function restore (url: string, fixture: LegacyFixture): Promise<void> {
  const { db, release } = await connect(url)
  try {
    await migrate(db, fixture.engine, { upTo: '0009-versions' })
    const untyped = db as unknown as Kysely<Record<LegacyTable, Record<string, unknown>>>
    for (const table of Object.keys(LEGACY_TABLES) as LegacyTable[]) {
      const rows = fixture.rows[table] ?? []
      if (rows.length > 0) await untyped.insertInto(table).values(rows).execute()
    }
  } finally {
    await db.destroy()
    await release?.()
  }
}

/**
 * Whether `after` answers every value of `before` the same: each property of an object (more may
 * have come), each item of a list, each number and text exactly.
 */
function sameValues (before: unknown, after: unknown, path: string, differences: string[]): void {
  if (Array.isArray(before)) {
    if (!Array.isArray(after) || after.length !== before.length) {
      differences.push(`${path}: ${JSON.stringify(after)?.slice(0, 200)} for ${JSON.stringify(before).slice(0, 200)}`)
      return
    }
    before.forEach((item, index) => { sameValues(item, after[index], `${path}[${index}]`, differences) })
  } else if (before !== null && typeof before === 'object') {
    if (after === null || typeof after !== 'object') {
      differences.push(`${path}: ${JSON.stringify(after)} for an object`)
      return
    }
    for (const [key, value] of Object.entries(before)) {
      sameValues(value, (after as Record<string, unknown>)[key], `${path}.${key}`, differences)
    }
  } else if (before !== after) {
    differences.push(`${path}: ${JSON.stringify(after)} for ${JSON.stringify(before)}`)
  }
}

async function migrated (t: Test, engine: Engine): Promise<void> {
  const fixture = fixtureOf(engine)
  t.equal(fixture.engine, engine)
  const url = engine === 'postgres'
    ? (await freshDatabase(t, engine)).searchPathUrl
    : `sqlite:${join(mkdtempSync(join(tmpdir(), 'bff-legacy-')), 'bff.sqlite')}`
  await restore(url, fixture)

  // The clock the answers were given at: the same months in every dashboard.
  mock.timers.enable({ apis: ['Date'], now: Date.parse(LEGACY_NOW) })
  t.teardown(() => { mock.timers.reset() })
  // brapi refusing the token while the answers are recorded: the corporate events' refresh
  // (docs/api.md#corporate-events) reads none and writes nothing, so what is compared is the migration's doing
  // alone. Then brapi, without events.
  const brapi = await startFakeBrapi(t)
  brapi.refusal = { status: 401, message: 'Token inválido' }
  const app = await buildTestApp(t, { DATABASE_URL: url, QUOTES_PROVIDER: 'brapi', BRAPI_URL: brapi.url })
  const dashboards = new DashboardService(app.store.assets, UNKNOWN_QUOTES, NO_EVENT_BOOKS)
  const answers = await recordAnswers(app, { dashboard: dashboards.ofAsset.bind(dashboards) }, apiKey())
  mock.timers.reset()
  brapi.refusal = undefined

  t.same(Object.keys(answers).sort(), Object.keys(fixture.answers).sort(), 'the same records, asked the same way')
  const differences: string[] = []
  for (const [request, before] of Object.entries(fixture.answers)) {
    const after = answers[request] as Answer
    if (after.status !== before.status || after.etag !== before.etag) {
      differences.push(`${request}: ${after.status} ${String(after.etag)} for ${before.status} ${String(before.etag)}`)
    }
    sameValues(before.body, after.body, request, differences)
  }
  t.same(differences, [], `every value of the ${Object.keys(fixture.answers).length} answers is answered the same`)

  // Each lot is a BUY of what it held, as it was: id, date, quantity, price, creation, order; no fee.
  const lots = fixture.rows.asset_lots ?? []
  for (const asset of answers['GET /portfolio-assets']?.body as Array<{ id: string }>) {
    const res = await app.inject({
      method: 'GET', url: `/portfolio-assets/${asset.id}/transactions`, headers: apiKey()
    })
    const expected = lots.filter(lot => lot.asset_id === asset.id)
      .sort((a, b) => String(a.date).localeCompare(String(b.date)) || Number(a.seq) - Number(b.seq))
      .map(lot => ({
        id: lot.id,
        type: 'BUY',
        date: lot.date,
        quantity: lot.quantity,
        price: lot.price,
        fee: 0,
        createdAt: lot.created_at
      }))
    t.match(res.json(), expected, `the lots of ${asset.id} are its BUYs`)
  }
  t.equal(lots.length > 0 && (await app.store.appliedMigrations()).includes('0010-asset-transactions'), true)

  // A migrated asset takes new transactions after its lots; its price is then its average price.
  const assets = answers['GET /portfolio-assets']?.body as Array<{ id: string, symbol: string, price: number }>
  const weg = assets.find(asset => asset.symbol === 'WEGE3')
  t.equal(weg?.price, 44.1, 'the price PATCHed before is the asset\'s own')
  const sale = await app.inject({
    method: 'POST',
    url: `/portfolio-assets/${String(weg?.id)}/transactions`,
    headers: apiKey(),
    payload: { type: 'SELL', date: LEGACY_NOW.slice(0, 10), quantity: 10, price: 45 }
  })
  t.equal(sale.statusCode, 201)
  const after = await app.inject({ method: 'GET', url: `/portfolio-assets/${String(weg?.id)}`, headers: apiKey() })
  // 70 at 38.45 and 60 at 41.2: (2691.5 + 2472) / 130 = 39.71923077; 120 left.
  t.match(after.json(), { quantity: 120, price: 39.71923077, totalValue: 4766.31 })
  const listed = await app.inject({
    method: 'GET', url: `/portfolio-assets/${String(weg?.id)}/transactions`, headers: apiKey()
  })
  t.equal(listed.json().at(-1).id, sale.json().id, 'after the lots of its date')
}

t.test('migration 0010 keeps every value a SQLite store answered, its lots as BUYs', async t => {
  await migrated(t, 'sqlite')
})

testNeeding(t, 'migration 0010 keeps every value a PostgreSQL store answered, its lots as BUYs', [NEEDS_POSTGRES],
  async t => { await migrated(t, 'postgres') })
