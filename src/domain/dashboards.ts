import type { FastifyBaseLogger } from 'fastify'
import { dashboardOf } from '../dashboard/service.js'
import { NotFoundError } from '../errors.js'
import { IBOV_SYMBOL, isTicker, quotesOf, type QuoteProvider } from '../quotes/provider.js'
import type { Asset } from '../schemas/asset.js'
import type { Dashboard } from '../schemas/dashboard.js'
import type { AssetRepository } from '../store/assets.js'
import type { Access } from './access.js'
import { found, type Each } from './common.js'

const missing = (): Error => new NotFoundError('Ativo')

/**
 * Asset dashboards (docs/api.md#resources; rules in the README), behind the API key: position,
 * monthly history against the benchmark, buys. An unknown asset is NOT_FOUND (`Ativo não encontrado`).
 */
export class DashboardService {
  constructor (private readonly assets: AssetRepository, private readonly quotes: QuoteProvider) {}

  async ofAsset (access: Access, assetId: string, log: FastifyBaseLogger): Promise<Dashboard> {
    await access.apiKey()
    const holdings = await found(assetId, missing, async id => await this.assets.portfolioHoldingsOf(id))
    return await dashboardOf(holdings.holding, holdings.portfolio, this.quotes, log)
  }

  /**
   * The dashboards of several assets from one read of their portfolios' holdings and one batch
   * of quotes (each dashboard then finds its quotes cached); an asset gone since is NOT_FOUND.
   */
  async ofAssets (access: Access, assets: readonly Asset[], log: FastifyBaseLogger): Promise<Array<Each<Dashboard>>> {
    await access.apiKey()
    const holdings = await this.assets.holdingsOfPortfolios(assets.map(asset => asset.portfolioId))
    const symbols = [...holdings.values()].flat().map(({ asset }) => asset.symbol).filter(isTicker)
    await quotesOf(this.quotes, [...symbols, IBOV_SYMBOL], log)
    return await Promise.all(assets.map(async ({ id, portfolioId }) => {
      const portfolio = holdings.get(portfolioId) ?? []
      const holding = portfolio.find(entry => entry.asset.id === id)
      if (holding === undefined) return missing()
      return await dashboardOf(holding, portfolio, this.quotes, log)
    }))
  }
}
