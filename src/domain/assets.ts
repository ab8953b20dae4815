import type { Precondition, Tagged } from '../http/entity-tag.js'
import { NotFoundError, ValidationError, type ValidationIssue } from '../errors.js'
import { decimalsOf, MONEY_DECIMALS, UNIT_DECIMALS } from '../schemas/money.js'
import { pageOf } from '../schemas/common.js'
import {
  FIRST_TRADE_DATE, type Asset, type AssetType, type CreateAssetInput, type UpdateAssetInput
} from '../schemas/asset.js'
import type { AssetRepository } from '../store/assets.js'
import type { Access } from './access.js'
import { existing, found, type PageRequest } from './common.js'

const missing = (): Error => new NotFoundError('Ativo')

/** Today's date (UTC), `YYYY-MM-DD`: the latest a transaction may have. */
export function today (): string {
  return new Date().toISOString().slice(0, 10)
}

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
  const latest = today()
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
 * Portfolio assets (docs/api.md#resources), behind the API key: every method checks it first.
 * Unknown ids are NOT_FOUND (`Ativo não encontrado`); an asset for an unknown portfolio is
 * NOT_FOUND (`Portfolio não encontrado`) and stores nothing. `totalValue` is `quantity × price`
 * rounded half away from zero to cents, computed by the store when it writes (at most 10¹³ BRL).
 */
export class AssetService {
  constructor (private readonly assets: AssetRepository) {}

  async list (access: Access, filter: AssetFilter, page: PageRequest): Promise<Asset[]> {
    await access.apiKey()
    return await this.assets.list({ portfolioId: filter.portfolioId, type: filter.type }, pageOf(page))
  }

  /** The asset with its tag. */
  async get (access: Access, id: string): Promise<Tagged<Asset>> {
    await access.apiKey()
    return await found(id, missing, async id => await this.assets.get(id))
  }

  async create (access: Access, input: CreateAssetInput): Promise<Asset> {
    await access.apiKey()
    const asset = await this.assets.create(createAssetInput(input))
    if (asset === undefined) throw new NotFoundError('Portfolio')
    return asset
  }

  /**
   * Changes quantity and/or price (docs/api.md#transactions): `price` becomes the asset's price; a
   * new quantity is a BUY or SELL of the difference dated today at that price (else the asset's).
   */
  async update (
    access: Access, id: string, input: UpdateAssetInput, precondition?: Precondition
  ): Promise<Tagged<Asset>> {
    await access.apiKey()
    const update = updateAssetInput(input)
    return await found(id, missing, async id => await this.assets.update(id, update, precondition))
  }

  async delete (access: Access, id: string, precondition?: Precondition): Promise<void> {
    await access.apiKey()
    await existing(id, missing, async id => await this.assets.delete(id, precondition))
  }

  /** The assets of several portfolios, each portfolio's oldest first, in one read. */
  async ofPortfolios (access: Access, portfolioIds: readonly string[]): Promise<Map<string, Asset[]>> {
    await access.apiKey()
    return await this.assets.ofPortfolios(portfolioIds)
  }
}
