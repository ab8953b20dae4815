import type { Precondition, Tagged } from '../http/entity-tag.js'
import { NotFoundError } from '../errors.js'
import { pageOf, trimmedInput } from '../schemas/common.js'
import {
  CreatePortfolioInputSchema, UpdatePortfolioInputSchema, portfolioValue, type CreatePortfolioInput,
  type Portfolio, type PortfolioDetail, type PortfolioValue, type UpdatePortfolioInput
} from '../schemas/portfolio.js'
import type { Access, PortfolioScope } from './access.js'
import type { PortfolioReads } from './portfolio-read-cache.js'
import { assertMatches, decidesOnRow, existing, found, tagged, type PageRequest } from './common.js'
import { ifReached, listOwner } from './ownership.js'
import type { DataStore, PortfolioAndAssets } from './ports.js'

const missing = (): Error => new NotFoundError('Portfolio')

/**
 * A validated create input as the store takes it: texts trimmed (docs/api.md#inputs).
 * @internal Test seam: test/schemas/fields.test.ts checks that every field of the input schema reaches the store.
 */
export function createPortfolioInput (input: CreatePortfolioInput): CreatePortfolioInput {
  return trimmedInput(CreatePortfolioInputSchema, input)
}

/**
 * A validated update input as the store takes it: texts trimmed, absent fields left absent.
 * @internal Test seam: test/schemas/fields.test.ts checks that every field of the input schema reaches the store.
 */
export function updatePortfolioInput (input: UpdatePortfolioInput): UpdatePortfolioInput {
  return trimmedInput(UpdatePortfolioInputSchema, input)
}

/** A changed portfolio and the tag its detail (`GET /portfolios/:id`) now has. */
export interface ChangedPortfolio {
  portfolio: Portfolio
  etag: string
}

/**
 * Portfolios (docs/api.md#resources), each method within the caller's portfolio scope
 * (docs/api.md#whose-portfolios): every user's with the API key, a user's own with its token.
 * Unknown ids, and another user's, are NOT_FOUND (`Portfolio não encontrado`); inputs arrive
 * validated by the portfolio schemas and are trimmed here. A change or a delete is one write of the
 * store (its unit of work), deciding on the portfolio's row read under its lock: the scope, then an
 * If-Match `precondition`. The detail, the value and the valuations' inputs are read through
 * `reads` (the instance's cache of them: src/domain/portfolio-read-cache.ts, which keeps reads by id,
 * whoever asked: the owner is checked here on each answer); everything else goes to the store.
 */
export class PortfolioService {
  constructor (
    private readonly store: Pick<DataStore, 'portfolios' | 'write'>,
    private readonly reads: PortfolioReads = store.portfolios
  ) {}

  /** A page of portfolios: without a `userId`, every user's with the API key, the user's own with its token. */
  async list (access: Access, filter: { userId?: string }, page: PageRequest): Promise<Portfolio[]> {
    const scope = await access.portfolioScope()
    return await this.store.portfolios.list({ userId: listOwner(scope, filter.userId) }, pageOf(page))
  }

  /** The portfolio alone: its total, not its assets. */
  async portfolioOnly (access: Access, id: string): Promise<Portfolio> {
    return (await this.read(await access.portfolioScope(), id)).portfolio
  }

  /** The portfolio with its whole assets, read in one snapshot: its total is the sum of theirs. */
  async portfolioAndAssets (access: Access, id: string): Promise<PortfolioAndAssets> {
    return await this.read(await access.portfolioScope(), id)
  }

  /**
   * REST's detail: the portfolio, its total and its assets, in one snapshot, with its tag. The read's own
   * objects, not copies: its schema (PortfolioDetailSchema) serializes a summary of each asset, and
   * leaves the timestamps out.
   */
  async taggedDetail (access: Access, id: string): Promise<Tagged<PortfolioDetail>> {
    const { portfolio, assets, version } = await this.read(await access.portfolioScope(), id)
    return tagged({ value: { ...portfolio, assets }, version })
  }

  /** The portfolio's total, from the kept portfolio read, whose owner it is checked against. */
  async value (access: Access, id: string): Promise<PortfolioValue> {
    return portfolioValue((await this.read(await access.portfolioScope(), id)).portfolio)
  }

  /** Creates a portfolio for its `userId`: under a user's token, the user's own (another is 403). */
  async create (access: Access, input: CreatePortfolioInput): Promise<Portfolio> {
    const scope = await access.portfolioScope()
    const create = createPortfolioInput(input)
    listOwner(scope, create.userId)
    return await this.store.portfolios.create(create)
  }

  /** Renames or describes a portfolio; answers it and its detail's tag after the change. */
  async update (
    access: Access, id: string, input: UpdatePortfolioInput, precondition?: Precondition
  ): Promise<ChangedPortfolio> {
    const scope = await access.portfolioScope()
    const update = updatePortfolioInput(input)
    const changed = await found(id, missing, async id => await this.store.write(async work => {
      if (decidesOnRow(scope, precondition)) {
        const locked = ifReached(scope, await work.portfolios.lockForWrite(id), portfolio => portfolio.userId)
        if (locked === undefined) return undefined
        assertMatches(precondition, id, locked.version)
      }
      return await work.portfolios.change(id, update)
    }))
    const { value: portfolio, etag } = tagged(changed)
    return { portfolio, etag }
  }

  /** Deletes the portfolio and its assets in one transaction. */
  async delete (access: Access, id: string, precondition?: Precondition): Promise<void> {
    const scope = await access.portfolioScope()
    await existing(id, missing, async id => await this.store.write(async work => {
      if (decidesOnRow(scope, precondition)) {
        const locked = ifReached(scope, await work.portfolios.lockForDelete(id), portfolio => portfolio.userId)
        if (locked === undefined) return false
        assertMatches(precondition, id, locked.version)
      }
      return await work.portfolios.delete(id)
    }))
  }

  /**
   * The portfolio's one read (the instance's cache of it, else the store), within the scope: another
   * user's is NOT_FOUND like an unknown id. The promise itself, so that a read costs no step more.
   */
  private read (scope: PortfolioScope, id: string): Promise<PortfolioAndAssets> {
    return found(id, missing, async id =>
      ifReached(scope, await this.reads.portfolioAndAssets(id), read => read.portfolio.userId))
  }
}
