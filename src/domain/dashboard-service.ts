import { NotFoundError } from '../errors.js'
import { IBOV_SYMBOL, monthKey, quotesOf, type QuoteProvider } from '../quotes/provider.js'
import type { Asset } from '../schemas/asset.js'
import type { Access } from './access.js'
import { found, type Each } from './common.js'
import { reachable, reached } from './ownership.js'
import type { EventBook } from './corporate-events.js'
import { buildDashboard, STORED_PRICE_SOURCE, type AssetPrices, type Dashboard } from './dashboard-calculation.js'
import type { EventBooks } from './event-books.js'
import type { AssetStore, Holding, Log } from './ports.js'
import { knowCoinsOf, marketPriced, marketTickers } from './quotes.js'
import { monthlyClosesInReais, quotesInReais, type MonthClose, type QuoteInReais } from './reais.js'

const missing = (): Error => new NotFoundError('Ativo')

/** Logos by ticker, from brapi's icon set. */
function imageUrlFor (symbol: string): string {
  return `https://icons.brapi.dev/icons/${encodeURIComponent(symbol)}.svg`
}

/**
 * Prices of one asset, in reais: the provider's quote and monthly closes, converted; for a symbol
 * without a quote (one the provider does not know — a Tesouro bond, a private fund — or priced in a
 * currency without a rate), the asset's own stored price and no closes, so its history is valued
 * at its average price until the current month.
 */
function pricesOf (
  source: string,
  { asset, transactions }: Holding,
  quote: QuoteInReais | undefined,
  closes: readonly MonthClose[],
  events: EventBook | undefined
): AssetPrices {
  if (quote !== undefined) {
    const origin = { source, lastUpdate: quote.lastUpdate }
    return { assetId: asset.id, transactions, lastQuote: quote.price, origin, closes, events }
  }
  const origin = { source: STORED_PRICE_SOURCE, lastUpdate: null }
  return { assetId: asset.id, transactions, lastQuote: asset.price, origin, closes: [], events }
}

/**
 * The dashboard of `holding`, one of `portfolio`'s (every holding of its portfolio, it included):
 * the quotes of the portfolio's tickers and the benchmark in one provider batch, each one's monthly
 * closes and corporate events beside. Provider failures (502/503/504) propagate; a missing rate leaves
 * its symbols unquoted.
 */
async function dashboardOf (
  holding: Holding,
  portfolio: readonly Holding[],
  quotes: QuoteProvider,
  books: Pick<EventBooks, 'read'>,
  log: Log,
  now = new Date()
): Promise<Dashboard> {
  const { asset, transactions } = holding
  const since = transactions[0]?.date.slice(0, 7) ?? monthKey(now)
  knowCoinsOf(quotes, portfolio.map(entry => entry.asset))
  const tickers = marketTickers(portfolio.map(entry => entry.asset))
  const [inReais, closes, benchmarkCloses, eventsOf] = await Promise.all([
    quotesInReais(quotes, [...tickers, IBOV_SYMBOL], log),
    Promise.all(tickers.map(async ticker => [ticker, await monthlyClosesInReais(quotes, ticker, since, log)] as const)),
    monthlyClosesInReais(quotes, IBOV_SYMBOL, since, log),
    books.read(tickers, log)
  ])
  const closesOf = new Map(closes)
  const benchmarkQuote = inReais.get(IBOV_SYMBOL)
  return buildDashboard({
    asset: {
      id: asset.id,
      symbol: asset.symbol,
      name: asset.name,
      quantity: asset.quantity,
      imageUrl: imageUrlFor(asset.symbol)
    },
    portfolio: portfolio.map(entry => {
      const { symbol } = entry.asset
      const events = eventsOf.get(symbol)
      return marketPriced(entry.asset)
        ? pricesOf(quotes.source, entry, inReais.get(symbol), closesOf.get(symbol) ?? [], events)
        : pricesOf(quotes.source, entry, undefined, [], events)
    }),
    benchmark: benchmarkQuote === undefined ? undefined : { lastQuote: benchmarkQuote.price, closes: benchmarkCloses },
    now
  })
}

/**
 * Asset dashboards (docs/api.md#the-asset-dashboard), within the caller's portfolio scope
 * (docs/api.md#whose-portfolios): position, monthly history against the benchmark, buys and
 * sales. An unknown asset, or another user's, is NOT_FOUND (`Ativo não encontrado`).
 */
export class DashboardService {
  constructor (
    private readonly assets: Pick<AssetStore, 'portfolioHoldingsOf' | 'holdingsOfPortfolios' | 'ownersOf'>,
    private readonly quotes: QuoteProvider,
    private readonly books: Pick<EventBooks, 'read'>
  ) {}

  async ofAsset (access: Access, assetId: string, log: Log): Promise<Dashboard> {
    const scope = await access.portfolioScope()
    const holdings = await found(assetId, missing, async id =>
      await reachable(scope, id, this.assets) ? await this.assets.portfolioHoldingsOf(id) : undefined)
    return await dashboardOf(holdings.holding, holdings.portfolio, this.quotes, this.books, log)
  }

  /**
   * The dashboards of several assets from one read of their portfolios' holdings and one batch
   * of quotes (each dashboard then finds its quotes cached); an asset gone since, or out of the
   * caller's scope, is NOT_FOUND.
   */
  async ofAssets (access: Access, asked: readonly Asset[], log: Log): Promise<Array<Each<Dashboard>>> {
    const scope = await access.portfolioScope()
    const ids = new Set(await reached(scope, asked.map(asset => asset.id), this.assets))
    const assets = asked.filter(asset => ids.has(asset.id))
    const holdings = await this.assets.holdingsOfPortfolios(assets.map(asset => asset.portfolioId))
    const held = [...holdings.values()].flat().map(({ asset }) => asset)
    knowCoinsOf(this.quotes, held)
    await quotesOf(this.quotes, [...marketTickers(held), IBOV_SYMBOL], log)
    return await Promise.all(asked.map(async ({ id, portfolioId }) => {
      const portfolio = (ids.has(id) ? holdings.get(portfolioId) : undefined) ?? []
      const holding = portfolio.find(entry => entry.asset.id === id)
      if (holding === undefined) return missing()
      return await dashboardOf(holding, portfolio, this.quotes, this.books, log)
    }))
  }
}
