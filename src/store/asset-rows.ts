import { randomUUID } from 'node:crypto'
import type { Transaction } from 'kysely'
import type { StoreEngine } from './connect.js'
import type { Database } from './database.js'
import type { Versioned } from '../http/entity-tag.js'
import type { Asset, CreateAssetInput } from '../schemas/asset.js'
import { toAsset } from './rows.js'

interface PositionColumns {
  quantity: number
  price: number
  valueCents: number
  eventsDigest: string
  eventsUnapplied: boolean
  eventsAsOf: string | null
}

/** What an institution says of an imported asset (docs/api.md#imports), its price's origin included. */
type InstitutionFields = Pick<Asset, 'priceSource' | 'asOf' | 'issuer' | 'dueDate' | 'rate' | 'rateType' | 'isin'>

/** A new asset's row: the fields its create names, and its first position; an import's, its investment too. */
type NewAsset = Pick<CreateAssetInput, 'portfolioId' | 'name' | 'symbol' | 'type'> & PositionColumns &
  Partial<Pick<Asset, 'investmentId'> & InstitutionFields>

/** An asset's row read for a write: its owner, and whether its position was written with the events it names. */
type LockedRow = Versioned<Asset> & { userId: string, eventsDigest: string, eventsCurrent: boolean }

/** The columns of a position's events. */
function eventColumns (position: PositionColumns) {
  return {
    events_digest: position.eventsDigest,
    events_unapplied: position.eventsUnapplied ? 1 : 0,
    events_as_of: position.eventsAsOf
  }
}

/** The columns of what an institution says of an asset (each null when it says nothing). */
function institutionColumns (fields: Partial<InstitutionFields>) {
  return {
    price_source: fields.priceSource ?? null,
    as_of: fields.asOf ?? null,
    issuer: fields.issuer ?? null,
    due_date: fields.dueDate ?? null,
    rate: fields.rate ?? null,
    rate_type: fields.rateType ?? null,
    isin: fields.isin ?? null
  }
}

/**
 * Assets' rows inside a write of the domain (the `assets` of its unit of work: src/domain/ports.ts): what they read
 * and write, and no rule. A read for a write locks the asset's row on PostgreSQL (SQLite's one connection runs one
 * transaction at a time), after what a delete takes first: the locks of every write are taken in one order —
 * transactions, then assets, then portfolios (which the domain touches last) — so that no two writes deadlock.
 */
export class AssetRows {
  constructor (
    private readonly trx: Transaction<Database>,
    private readonly engine: StoreEngine,
    private readonly now: string
  ) {}

  /** The asset, its version, its portfolio's owner and its events' columns; undefined when there is no such asset. */
  async lockForWrite (id: string): Promise<LockedRow | undefined> {
    return await this.lockWhere('portfolio_assets.id', id)
  }

  /** As {@link lockForWrite}, the asset of the portfolio imported from the aggregator's investment `investmentId`. */
  async lockByInvestment (
    portfolioId: string, investmentId: string
  ): Promise<LockedRow | undefined> {
    return await this.lockWhere('portfolio_assets.investment_id', investmentId, portfolioId)
  }

  private async lockWhere (
    column: 'portfolio_assets.id' | 'portfolio_assets.investment_id', value: string, portfolioId?: string
  ): Promise<LockedRow | undefined> {
    let query = this.trx.selectFrom('portfolio_assets').selectAll('portfolio_assets')
      // A subquery, not a join: PostgreSQL's `for update` then locks the asset's row alone.
      .select(eb => eb.selectFrom('portfolios').select('user_id')
        .whereRef('portfolios.id', '=', 'portfolio_assets.portfolio_id').$asScalar().$notNull().as('user_id'))
      .where(column, '=', value)
    if (portfolioId !== undefined) query = query.where('portfolio_assets.portfolio_id', '=', portfolioId)
    const row = await (this.engine === 'postgres' ? query.forUpdate() : query).executeTakeFirst()
    if (row === undefined) return undefined
    const eventsCurrent = row.events_version === row.version
    const { version, user_id: userId, events_digest: eventsDigest } = row
    return { value: toAsset(row), version, userId, eventsDigest, eventsCurrent }
  }

  /** As {@link lockForWrite}, for the asset's delete: its transactions locked first. */
  async lockForDelete (id: string): Promise<LockedRow | undefined> {
    if (this.engine === 'postgres') {
      await this.trx.selectFrom('asset_transactions').select('id').where('asset_id', '=', id).forUpdate().execute()
    }
    return await this.lockForWrite(id)
  }

  /** As {@link lockForWrite}, for the removal of its transaction `tradeId`: that one locked first. */
  async lockForRemoval (id: string, tradeId: string): Promise<LockedRow | undefined> {
    if (this.engine === 'postgres') {
      await this.trx.selectFrom('asset_transactions').select('id').where('id', '=', tradeId)
        .where('asset_id', '=', id).forUpdate().execute()
    }
    return await this.lockForWrite(id)
  }

  async insert (asset: NewAsset): Promise<Asset> {
    const row = {
      id: randomUUID(),
      portfolio_id: asset.portfolioId,
      name: asset.name,
      symbol: asset.symbol,
      type: asset.type,
      quantity: asset.quantity,
      price: asset.price,
      value_cents: asset.valueCents,
      ...eventColumns(asset),
      created_at: this.now,
      updated_at: this.now,
      version: 1,
      investment_id: asset.investmentId ?? null,
      ...institutionColumns(asset),
      events_version: 1
    }
    await this.trx.insertInto('portfolio_assets').values(row).execute()
    return toAsset(row)
  }

  /**
   * Sets the asset's position columns and bumps its version (the events' with it): the asset after it. Its price is
   * then its institution's when `institution` says so (an import's write, which sets what the institution says of it
   * too), else the average price or the investor's own.
   */
  async setPosition (
    id: string, position: PositionColumns, institution?: InstitutionFields
  ): Promise<Versioned<Asset>> {
    const { quantity, price, valueCents } = position
    const origin = institution === undefined ? { price_source: null, as_of: null } : institutionColumns(institution)
    const row = await this.trx.updateTable('portfolio_assets')
      .set(eb => ({
        quantity,
        price,
        value_cents: valueCents,
        ...origin,
        ...eventColumns(position),
        updated_at: this.now,
        version: eb('version', '+', 1),
        events_version: eb('version', '+', 1)
      }))
      .where('id', '=', id).returningAll().executeTakeFirstOrThrow()
    return { value: toAsset(row), version: row.version }
  }

  /**
   * Records that the events `digest` names, read at `asOf`, are still those of every asset of `symbol` computed
   * with them and marked read before `asOf`'s day: each one's version bumped. Their portfolios' ids, once each.
   */
  async markEventsRead (symbol: string, digest: string, asOf: string): Promise<string[]> {
    const rows = await this.trx.updateTable('portfolio_assets')
      .set(eb => ({
        events_as_of: asOf, updated_at: this.now, version: eb('version', '+', 1), events_version: eb('version', '+', 1)
      }))
      .where('symbol', '=', symbol).where('events_digest', '=', digest)
      .where(eb => eb('events_version', '=', eb.ref('version')))
      .where(eb => eb.or([eb('events_as_of', 'is', null), eb('events_as_of', '<', asOf.slice(0, 10))]))
      .returning('portfolio_id').execute()
    return [...new Set(rows.map(row => row.portfolio_id))].sort()
  }

  /** Deletes the asset and its transactions: its portfolio's id, undefined when there was no such asset. */
  async delete (id: string): Promise<string | undefined> {
    await this.trx.deleteFrom('asset_transactions').where('asset_id', '=', id).execute()
    const row = await this.trx.deleteFrom('portfolio_assets').where('id', '=', id).returning('portfolio_id')
      .executeTakeFirst()
    return row?.portfolio_id
  }
}
