import t, { type Test } from 'tap'
import type { TObject } from '@sinclair/typebox'
import { Ajv } from 'ajv'
import { connect } from '../../src/store/connect.js'
import { migrate } from '../../src/store/migrate.js'
import { columnOf, columnsOf, storedFields } from '../../src/store/columns.js'
import { fieldsOf } from '../../src/schemas/common.js'
import { Store } from '../../src/store/store.js'
import { AssetSchema } from '../../src/schemas/asset.js'
import { createPortfolioInput, updatePortfolioInput } from '../../src/domain/portfolios.js'
import {
  CreatePortfolioInputSchema, PortfolioAssetSummarySchema, PortfolioSchema,
  UpdatePortfolioInputSchema, type CreatePortfolioInput, type UpdatePortfolioInput
} from '../../src/schemas/portfolio.js'
import { forEachEngine, freshDatabase, freshStore, type Engine } from '../helper.js'
import { domainOver, TRUSTED } from '../fixtures/store-domain.js'

// A field of a portfolio or an asset is declared once, in its schema: the table, every read, the insert, the
// update and the domain's inputs follow from it (src/store/columns.ts). These tests fail for a field added to a
// schema without its column (its migration), or read, written or answered by a hand-kept list that forgot it.

const page = { limit: 1000, offset: 0 }

/** The columns of each table of the store, as the migrations made them. */
async function tableColumns (t: Test, engine: Engine): Promise<Map<string, string[]>> {
  const { url, schema } = await freshDatabase(t, engine)
  const { db, engine: opened, release } = await connect(url, { schema })
  try {
    await migrate(db, opened, { schema })
    const tables = await db.introspection.getTables()
    return new Map(tables.filter(table => opened === 'sqlite' || table.schema === schema)
      .map(table => [table.name, table.columns.map(column => column.name)]))
  } finally {
    await db.destroy()
    await release?.()
  }
}

/** The types of the fields: formats are the routes' business, here the question is whether each field is there. */
const ajv = new Ajv({ validateFormats: false, strict: false })

/** `value` holds every field of `schema`, in its order, each of its type (a missing column reads as undefined). */
function answers (t: Test, schema: TObject, value: unknown, what: string): void {
  t.same(Object.keys(value as object), fieldsOf(schema), `${what}: every field of ${schema.title ?? 'its schema'}`)
  const valid = ajv.validate(schema, value)
  t.ok(valid, `${what}: of its schema's types ${ajv.errorsText()}`)
}

t.test('a field and its column: camelCase to snake_case, the one mapping', async t => {
  t.equal(columnOf('id'), 'id')
  t.equal(columnOf('userId'), 'user_id')
  t.equal(columnOf('createdAt'), 'created_at')
  t.same(columnsOf({ name: 'N', description: null, userId: undefined }), { name: 'N', description: null },
    'the fields given, undefined ones left out')
  t.same(storedFields(PortfolioSchema, ['totalValue']),
    ['id', 'name', 'description', 'userId', 'createdAt', 'updatedAt'], 'a portfolio\'s stored fields')
})

forEachEngine(t, 'every stored field of a portfolio and an asset has its column, as the migrations made it',
  async (t, engine) => {
    const tables = await tableColumns(t, engine)
    const stored = (schema: TObject, computed: string[]): string[] => storedFields(schema, computed).map(columnOf)
    t.same(new Set(tables.get('portfolios')), new Set([...stored(PortfolioSchema, ['totalValue']), 'version']),
      'portfolios: PortfolioSchema\'s fields but the summed totalValue, and the ETag\'s version')
    t.same(new Set(tables.get('portfolio_assets')),
      new Set([...stored(AssetSchema, ['totalValue']), 'value_cents', 'version', 'events_digest', 'events_version']),
      'portfolio_assets: AssetSchema\'s fields, totalValue as its cents, the ETag\'s version, and what the position ' +
      'was computed with (its events\' digest and version)')
  })

forEachEngine(t, 'every read and write of a portfolio answers every field of its schema', async (t, engine) => {
  const store = await Store.open(...await freshStore(t, engine))
  t.teardown(() => store.close())
  const created = await store.portfolios.create({ name: 'Fields', description: 'All of them', userId: 'u1' })
  answers(t, PortfolioSchema, created, 'create')
  const asset = await domainOver(store).assets.create(TRUSTED, {
    name: 'Petrobras PN', symbol: 'PETR4', type: 'STOCK', quantity: 3, price: 10.5, portfolioId: created.id
  })
  answers(t, AssetSchema, asset, 'asset create')

  answers(t, PortfolioSchema, await store.portfolios.portfolioOnly(created.id), 'portfolioOnly')
  const listed = await store.portfolios.list({ userId: 'u1' }, page)
  t.equal(listed.length, 1)
  answers(t, PortfolioSchema, listed[0], 'list')
  const withAssets = await store.portfolios.portfolioAndAssets(created.id)
  answers(t, PortfolioSchema, withAssets?.portfolio, 'portfolioAndAssets')
  t.equal(withAssets?.assets.length, 1)
  answers(t, AssetSchema, withAssets?.assets[0], 'portfolioAndAssets\'s asset')
  t.same(withAssets?.assets[0], asset, 'an asset read as JSON is the asset stored')
  answers(t, AssetSchema, (await store.assets.versioned(asset.id))?.value, 'asset versioned')
  answers(t, AssetSchema, (await store.assets.list({ portfolioId: created.id }, page))[0], 'asset list')

  // REST's detail is this read, each asset answered as its summary (PortfolioDetailSchema): a field of the summary is
  // one of the asset's.
  const summary = Object.fromEntries(fieldsOf(PortfolioAssetSummarySchema)
    .map(field => [field, (withAssets?.assets[0] as Record<string, unknown> | undefined)?.[field]]))
  answers(t, PortfolioAssetSummarySchema, summary, 'detail\'s asset')
  t.equal(withAssets?.portfolio.totalValue, 31.5, 'the total summed from the assets\' cents')
})

forEachEngine(t, 'a change stores each field of UpdatePortfolioInputSchema it is given', async (t, engine) => {
  const store = await Store.open(...await freshStore(t, engine))
  t.teardown(() => store.close())
  const { id } = await store.portfolios.create({ name: 'Before', description: 'Before', userId: 'u1' })
  /** A new value of each editable field: the compiler asks for one for a field added to the input. */
  const values: Required<UpdatePortfolioInput> = { name: 'After', description: 'After' }
  t.same(Object.keys(values), fieldsOf(UpdatePortfolioInputSchema), 'a value for every editable field')
  for (const field of fieldsOf(UpdatePortfolioInputSchema)) {
    const changed = await store.write(async work => await work.portfolios.change(id, { [field]: values[field] }))
    answers(t, PortfolioSchema, changed?.value, `change of ${field}`)
    t.equal(changed?.value[field], values[field], `${field}: answered`)
    t.equal((await store.portfolios.portfolioOnly(id))?.[field], values[field], `${field}: stored`)
  }
})

t.test('the domain hands the store every field of the inputs\' schemas, texts trimmed', async t => {
  const create: Required<CreatePortfolioInput> = { name: ' Name ', description: ' What for ', userId: ' u1 ' }
  t.same(Object.keys(create), fieldsOf(CreatePortfolioInputSchema), 'a value for every field of the create')
  t.same(createPortfolioInput(create), { name: 'Name', description: 'What for', userId: 'u1' })
  t.same(createPortfolioInput({ name: 'N', userId: 'u1' }), { name: 'N', userId: 'u1' }, 'absent: left absent')
  const update: Required<UpdatePortfolioInput> = { name: ' Name ', description: null }
  t.same(Object.keys(update), fieldsOf(UpdatePortfolioInputSchema), 'a value for every field of the update')
  t.same(updatePortfolioInput(update), { name: 'Name', description: null }, 'null kept: it clears')
  t.same(updatePortfolioInput({ description: ' D ' }), { description: 'D' }, 'absent: left absent')
})
