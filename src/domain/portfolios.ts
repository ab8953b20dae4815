import type { Precondition, Tagged } from '../http/entity-tag.js'
import { NotFoundError } from '../errors.js'
import { pageOf, trimmed } from '../schemas/common.js'
import type { Asset } from '../schemas/asset.js'
import type {
  CreatePortfolioInput, Portfolio, PortfolioDetail, PortfolioValue, UpdatePortfolioInput
} from '../schemas/portfolio.js'
import type { PortfolioRepository } from '../store/portfolios.js'
import type { Access } from './access.js'
import type { PortfolioReads } from './portfolio-reads.js'
import { existing, found, type PageRequest } from './common.js'

const missing = (): Error => new NotFoundError('Portfolio')

/** A validated create input as the store takes it: texts trimmed (docs/api.md#inputs). */
export function createPortfolioInput (input: CreatePortfolioInput): CreatePortfolioInput {
  return { name: input.name.trim(), description: trimmed(input.description ?? null), userId: input.userId.trim() }
}

/** A validated update input as the store takes it: texts trimmed, absent fields left absent. */
export function updatePortfolioInput (input: UpdatePortfolioInput): UpdatePortfolioInput {
  const update: UpdatePortfolioInput = {}
  if (input.name !== undefined) update.name = input.name.trim()
  if (input.description !== undefined) update.description = trimmed(input.description)
  return update
}

/** A changed portfolio and the tag its detail (`GET /portfolios/:id`) now has. */
export interface ChangedPortfolio {
  portfolio: Portfolio
  etag: string
}

/**
 * Portfolios (docs/api.md#resources), behind the API key: every method checks it first. Unknown
 * ids are NOT_FOUND (`Portfolio não encontrado`); inputs arrive validated by the portfolio
 * schemas and are trimmed here; an If-Match `precondition` is checked in the write's transaction.
 * The detail, the value and the valuations' inputs are read through `reads` (the instance's cache
 * of them: src/domain/portfolio-reads.ts); everything else, writes first, goes to the store.
 */
export class PortfolioService {
  constructor (private readonly portfolios: PortfolioRepository, private readonly reads: PortfolioReads = portfolios) {}

  async list (access: Access, filter: { userId?: string }, page: PageRequest): Promise<Portfolio[]> {
    await access.apiKey()
    return await this.portfolios.list({ userId: filter.userId }, pageOf(page))
  }

  async get (access: Access, id: string): Promise<Portfolio> {
    await access.apiKey()
    return await found(id, missing, async id => await this.portfolios.get(id))
  }

  /** The portfolio with its whole assets, read in one snapshot: its total is the sum of theirs. */
  async withAssets (access: Access, id: string): Promise<{ portfolio: Portfolio, assets: Asset[] }> {
    await access.apiKey()
    return await found(id, missing, async id => await this.reads.withAssets(id))
  }

  /** REST's detail: the portfolio, its total and a summary of each asset, in one snapshot, with its tag. */
  async detail (access: Access, id: string): Promise<Tagged<PortfolioDetail>> {
    await access.apiKey()
    return await found(id, missing, async id => await this.reads.detail(id))
  }

  async value (access: Access, id: string): Promise<PortfolioValue> {
    await access.apiKey()
    return await found(id, missing, async id => await this.reads.value(id))
  }

  async create (access: Access, input: CreatePortfolioInput): Promise<Portfolio> {
    await access.apiKey()
    return await this.portfolios.create(createPortfolioInput(input))
  }

  /** Renames or describes a portfolio; answers it and its detail's tag after the change. */
  async update (
    access: Access, id: string, input: UpdatePortfolioInput, precondition?: Precondition
  ): Promise<ChangedPortfolio> {
    await access.apiKey()
    const update = updatePortfolioInput(input)
    return await found(id, missing, async id => await this.portfolios.change(id, update, precondition))
  }

  /** Deletes the portfolio and its assets in one transaction. */
  async delete (access: Access, id: string, precondition?: Precondition): Promise<void> {
    await access.apiKey()
    await existing(id, missing, async id => await this.portfolios.delete(id, precondition))
  }
}
