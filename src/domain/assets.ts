import type { Precondition, Tagged } from '../http/entity-tag.js'
import { NotFoundError, ValidationError } from '../errors.js'
import { decimalsOf, UNIT_DECIMALS } from '../schemas/money.js'
import { pageOf } from '../schemas/common.js'
import type { Asset, AssetType, CreateAssetInput, UpdateAssetInput } from '../schemas/asset.js'
import type { AssetRepository } from '../store/assets.js'
import type { Access } from './access.js'
import { existing, found, type PageRequest } from './common.js'

const missing = (): Error => new NotFoundError('Ativo')

/**
 * Quantities and prices have at most 8 decimals (docs/api.md#money). JSON Schema cannot say so
 * exactly — `multipleOf: 1e-8` divides binary floats, and 38.45 is no multiple of 1e-8 to a
 * double — and a keyword of our own would break host apps' validators, so it is checked here,
 * after validation, failing as a validation error does.
 */
function assertUnitAmounts (input: { quantity?: number, price?: number }): void {
  const tooPrecise = (['quantity', 'price'] as const).filter(name => {
    const value = input[name]
    return value !== undefined && decimalsOf(value) > UNIT_DECIMALS
  })
  if (tooPrecise.length === 0) return
  throw new ValidationError('body', tooPrecise.map(name => ({
    keyword: 'maxDecimals',
    instancePath: `/${name}`,
    schemaPath: `#/properties/${name}`,
    params: { limit: UNIT_DECIMALS },
    message: `must have at most ${UNIT_DECIMALS} decimals`
  })))
}

/**
 * A validated create input as the store takes it: amounts of at most 8 decimals, texts trimmed,
 * the symbol upper-cased (docs/api.md#inputs).
 */
export function createAssetInput (input: CreateAssetInput): CreateAssetInput {
  assertUnitAmounts(input)
  return { ...input, name: input.name.trim(), symbol: input.symbol.trim().toUpperCase() }
}

/** A validated update input as the store takes it: its amounts have at most 8 decimals. */
export function updateAssetInput (input: UpdateAssetInput): UpdateAssetInput {
  assertUnitAmounts(input)
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

  /** Changes quantity and/or price: a higher quantity is a buy, a lower one a sale of the oldest lots. */
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
