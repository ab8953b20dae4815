import type { Precondition, Tagged } from '../http/entity-tag.js'
import { NotFoundError, ValidationError, type ValidationIssue } from '../errors.js'
import { decimal, decimalsOf, MONEY_DECIMALS, UNIT_DECIMALS } from '../schemas/money.js'
import { dayKey } from '../schemas/calendar.js'
import { pageOf } from '../schemas/common.js'
import {
  FIRST_TRADE_DATE, type Asset, type AssetType, type CreateAssetInput, type UpdateAssetInput
} from '../schemas/asset.js'
import type { Trade } from '../schemas/average-cost.js'
import type { Access } from './access.js'
import { assertMatches, decidesOnRow, existing, found, tagged, type PageRequest } from './common.js'
import { digestOf } from './corporate-events.js'
import type { EventBooks, EventsOf } from './event-books.js'
import {
  bounded, dayOf, nextSeq, positionAt, positionColumns, positionWithEvents, quantityChange, reconciledTrades,
  type EventColumns
} from './holdings.js'
import { ifReached, listOwner, reachable, reached, reaches } from './ownership.js'
import type { DataStore, LockedAsset, RecordedTrade, UnitOfWork } from './ports.js'

const missing = (): Error => new NotFoundError('Ativo')

/**
 * The rules of an amount's decimals and of a date that JSON Schema cannot say (docs/api.md#inputs),
 * checked after validation and failing as a validation error does: quantities and prices at most
 * 8 decimals, fees at most 2 (docs/api.md#money) — `multipleOf: 1e-8` divides binary floats, and
 * 38.45 is no multiple of 1e-8 to a double — and a date from 1990-01-01 to today (UTC). A keyword
 * of our own would break host apps' validators.
 */
export function assertInputRules (input: { quantity?: number, price?: number, fee?: number, date?: string }): void {
  const issues: ValidationIssue[] = []
  const decimals = [['quantity', UNIT_DECIMALS], ['price', UNIT_DECIMALS], ['fee', MONEY_DECIMALS]] as const
  for (const [name, limit] of decimals) {
    const value = input[name]
    if (value === undefined || decimalsOf(value) <= limit) continue
    issues.push({
      keyword: 'maxDecimals',
      instancePath: `/${name}`,
      schemaPath: `#/properties/${name}`,
      params: { limit },
      message: `must have at most ${limit} decimals`
    })
  }
  const date = input.date
  // Today (UTC): the latest a transaction may have.
  const latest = dayKey(new Date())
  if (date !== undefined && (date < FIRST_TRADE_DATE || date > latest)) {
    const [keyword, limit] = date < FIRST_TRADE_DATE ? ['formatMinimum', FIRST_TRADE_DATE] : ['formatMaximum', latest]
    issues.push({
      keyword,
      instancePath: '/date',
      schemaPath: `#/properties/date/${keyword}`,
      params: { limit },
      message: `must be ${keyword === 'formatMinimum' ? '>=' : '<='} ${limit}`
    })
  }
  if (issues.length > 0) throw new ValidationError('body', issues)
}

/**
 * A validated create input as the store takes it: amounts of at most 8 decimals, a date from
 * 1990-01-01 to today, texts trimmed, the symbol upper-cased (docs/api.md#inputs).
 */
export function createAssetInput (input: CreateAssetInput): CreateAssetInput {
  assertInputRules(input)
  return { ...input, name: input.name.trim(), symbol: input.symbol.trim().toUpperCase() }
}

/** A validated update input as the store takes it: its amounts have at most 8 decimals. */
export function updateAssetInput (input: UpdateAssetInput): UpdateAssetInput {
  assertInputRules(input)
  return input
}

export interface AssetFilter {
  portfolioId?: string
  type?: AssetType
}

/**
 * Portfolio assets (docs/api.md#resources), each method within the caller's portfolio scope
 * (docs/api.md#whose-portfolios): every user's with the API key, a user's own with its token.
 * Unknown ids, and another user's assets, are NOT_FOUND (`Ativo não encontrado`); an asset for an
 * unknown portfolio, or another user's, is NOT_FOUND (`Portfolio não encontrado`) and stores
 * nothing. `totalValue` is `quantity × price` rounded half away from zero to cents, at most 10¹³
 * BRL (src/domain/holdings.ts). Each write is one write of the store (its unit of work), deciding on the asset's
 * row read once, under its lock: the scope, an `If-Match`, the position, replayed with the corporate events of its
 * symbol as of the write's day (docs/api.md#corporate-events).
 */
export class AssetService {
  constructor (
    private readonly store: Pick<DataStore, 'assets' | 'portfolios' | 'write'>,
    private readonly events: Pick<EventBooks, 'during'>
  ) {}

  /** A page of assets: a user token's lists hold only the assets of its own portfolios. */
  async list (access: Access, filter: AssetFilter, page: PageRequest): Promise<Asset[]> {
    const scope = await access.portfolioScope()
    const userId = listOwner(scope, undefined)
    return await this.store.assets.list({ portfolioId: filter.portfolioId, type: filter.type, userId }, pageOf(page))
  }

  /** The asset with its tag. */
  async get (access: Access, id: string): Promise<Tagged<Asset>> {
    const scope = await access.portfolioScope()
    const read = await found(id, missing, async id =>
      await reachable(scope, id, this.store.assets) ? await this.store.assets.versioned(id) : undefined)
    return tagged(read)
  }

  /** Stores the asset and its first transaction: a BUY of its quantity at its price, on its date (else today). */
  async create (access: Access, input: CreateAssetInput): Promise<Asset> {
    const scope = await access.portfolioScope()
    const { date, quantity, price, ...asset } = createAssetInput(input)
    return await this.events.during(async eventsOf => await this.store.write(async work => {
      // The portfolio's row first, as the write's lock (it cannot vanish before the insert); another user's, or
      // none, is refused before anything else is written, and what the touch wrote is rolled back.
      const owner = await work.portfolios.touch(asset.portfolioId)
      if (owner === undefined || !reaches(scope, owner)) throw new NotFoundError('Portfolio')
      const buy: Trade = bounded({ type: 'BUY', date: date ?? dayOf(work.now), quantity, price, fee: 0 })
      const held = positionWithEvents([], [buy], eventsOf(asset.symbol, dayOf(work.now)))
      const created = await work.assets.insert({ ...asset, ...positionColumns(held.position, held.events) })
      await work.trades.insert(created.id, buy, 1)
      return created
    }))
  }

  /**
   * Changes quantity and/or price (docs/api.md#transactions): `price` becomes the asset's price; a
   * new quantity is a BUY or SELL of the difference from what is held (its trades and the corporate events as of
   * today) dated today at that price (else the asset's).
   */
  async update (
    access: Access, id: string, input: UpdateAssetInput, precondition?: Precondition
  ): Promise<Tagged<Asset>> {
    const scope = await access.portfolioScope()
    const update = updateAssetInput(input)
    const changed = await found(id, missing, async id => await this.events.during(async eventsOf =>
      await this.store.write(async work => {
        const locked = ifReached(scope, await work.assets.lockForWrite(id), asset => asset.userId)
        if (locked === undefined) return undefined
        assertMatches(precondition, id, locked.version)
        const { value: asset } = locked
        const price = update.price ?? asset.price
        const { held, events, recorded } = await this.heldNow(work, locked, eventsOf, update.quantity !== undefined)
        const quantity = update.quantity ?? held
        if (quantity !== held) {
          const change = bounded(quantityChange(decimal(quantity).minus(held), price, work.now))
          await work.trades.insert(id, change, nextSeq(recorded))
        }
        const after = await work.assets.setPosition(id, positionAt(quantity, price, events))
        await work.portfolios.touch(asset.portfolioId)
        return after
      })))
    return tagged(changed)
  }

  /**
   * What the locked asset holds now and the columns of the events it follows: its row's when they are today's
   * events and no quantity is given (a PATCH of price reads no transaction), else replayed from its transactions.
   */
  private async heldNow (
    work: UnitOfWork, locked: LockedAsset, eventsOf: EventsOf, quantityGiven: boolean
  ): Promise<{ held: number, events: EventColumns, recorded: readonly RecordedTrade[] }> {
    const { value: asset } = locked
    const events = eventsOf(asset.symbol, dayOf(work.now))
    if (!quantityGiven && locked.eventsCurrent && locked.eventsDigest === digestOf(events.book, events.today)) {
      const { eventsUnapplied, eventsAsOf } = asset
      const kept = { eventsDigest: locked.eventsDigest, eventsUnapplied, eventsAsOf }
      return { held: asset.quantity, events: kept, recorded: [] }
    }
    const recorded = await reconciledTrades(work, locked)
    const replayed = positionWithEvents(recorded, recorded, events)
    return { held: replayed.position.quantity.toNumber(), events: replayed.events, recorded }
  }

  /** Removes the asset and its transactions. */
  async delete (access: Access, id: string, precondition?: Precondition): Promise<void> {
    const scope = await access.portfolioScope()
    await existing(id, missing, async id => await this.store.write(async work => {
      if (decidesOnRow(scope, precondition)) {
        const locked = ifReached(scope, await work.assets.lockForDelete(id), asset => asset.userId)
        if (locked === undefined) return false
        assertMatches(precondition, id, locked.version)
      }
      const portfolioId = await work.assets.delete(id)
      if (portfolioId === undefined) return false
      await work.portfolios.touch(portfolioId)
      return true
    }))
  }

  /**
   * The assets of several portfolios, each portfolio's oldest first, in one read; a portfolio out
   * of the caller's scope has none, as an unknown one.
   */
  async ofPortfolios (access: Access, portfolioIds: readonly string[]): Promise<Map<string, Asset[]>> {
    const scope = await access.portfolioScope()
    const reachedIds = await reached(scope, portfolioIds, this.store.portfolios)
    const byPortfolio = await this.store.assets.ofPortfolios(reachedIds)
    for (const id of portfolioIds) if (!byPortfolio.has(id)) byPortfolio.set(id, [])
    return byPortfolio
  }
}
