import { NotFoundError } from '../errors.js'
import { IBOV_SYMBOL, isTicker, monthKey, quotesOf, type MonthKey, type QuoteProvider } from '../quotes/provider.js'
import type { Asset } from '../schemas/asset.js'
import type { AssetRepository, Holding } from '../store/assets.js'
import type { Access } from './access.js'
import { found, type Each } from './common.js'
import { buildDashboard, STORED_PRICE_SOURCE, type AssetPrices, type Dashboard } from './dashboard.js'
import type { Log } from './ports.js'

const missing = (): Error => new NotFoundError('Ativo')

/** Logos by ticker, from brapi's icon set. */
export function imageUrlFor (symbol: string): string {
  return `https://icons.brapi.dev/icons/${encodeURIComponent(symbol)}.svg`
}

/**
 * Prices of one asset: the provider's quote and closes; for a symbol the provider does not know
 * (a Tesouro bond, a private fund), the asset's own stored price and no closes, so its history
 * is valued at its average price until the current month. Provider failures (502/504) propagate.
 */
async function pricesOf (
  quotes: QuoteProvider,
  { asset, transactions }: Holding,
  since: MonthKey,
  log: Log
): Promise<AssetPrices> {
  if (isTicker(asset.symbol)) {
    const [quote, closes] = await Promise.all([
      quotes.quote(asset.symbol, log),
      quotes.monthlyCloses(asset.symbol, since, log)
    ])
    if (quote !== undefined) {
      const origin = { source: quotes.source, lastUpdate: quote.lastUpdate }
      return { assetId: asset.id, transactions, lastQuote: quote.price, origin, closes: closes ?? [] }
    }
  }
  const origin = { source: STORED_PRICE_SOURCE, lastUpdate: null }
  return { assetId: asset.id, transactions, lastQuote: asset.price, origin, closes: [] }
}

/** The dashboard of `holding`, one of `portfolio`'s (every holding of its portfolio, it included). */
async function dashboardOf (
  holding: Holding,
  portfolio: readonly Holding[],
  quotes: QuoteProvider,
  log: Log,
  now = new Date()
): Promise<Dashboard> {
  const { asset, transactions } = holding
  const since = transactions[0]?.date.slice(0, 7) ?? monthKey(now)
  const [prices, benchmarkQuote, benchmarkCloses] = await Promise.all([
    Promise.all(portfolio.map(async entry => await pricesOf(quotes, entry, since, log))),
    quotes.quote(IBOV_SYMBOL, log),
    quotes.monthlyCloses(IBOV_SYMBOL, since, log)
  ])
  return buildDashboard({
    asset: {
      id: asset.id,
      symbol: asset.symbol,
      name: asset.name,
      quantity: asset.quantity,
      imageUrl: imageUrlFor(asset.symbol)
    },
    portfolio: prices,
    benchmark:
      benchmarkQuote === undefined ? undefined : { lastQuote: benchmarkQuote.price, closes: benchmarkCloses ?? [] },
    now
  })
}

/**
 * Asset dashboards (docs/api.md#the-asset-dashboard), behind the API key: position,
 * monthly history against the benchmark, buys and sales. An unknown asset is NOT_FOUND (`Ativo não encontrado`).
 */
export class DashboardService {
  constructor (private readonly assets: AssetRepository, private readonly quotes: QuoteProvider) {}

  async ofAsset (access: Access, assetId: string, log: Log): Promise<Dashboard> {
    await access.apiKey()
    const holdings = await found(assetId, missing, async id => await this.assets.portfolioHoldingsOf(id))
    return await dashboardOf(holdings.holding, holdings.portfolio, this.quotes, log)
  }

  /**
   * The dashboards of several assets from one read of their portfolios' holdings and one batch
   * of quotes (each dashboard then finds its quotes cached); an asset gone since is NOT_FOUND.
   */
  async ofAssets (access: Access, assets: readonly Asset[], log: Log): Promise<Array<Each<Dashboard>>> {
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
