import type { FastifyBaseLogger } from 'fastify'
import type { Holding, AssetRepository } from '../store/assets.js'
import { IBOV_SYMBOL, isTicker, monthKey, type MonthKey, type QuoteProvider } from '../quotes/provider.js'
import { buildDashboard, STORED_PRICE_SOURCE, type AssetPrices, type Dashboard } from './dashboard.js'

/** Logos by ticker, from brapi's icon set. */
export function imageUrlFor (symbol: string): string {
  return `https://icons.brapi.dev/icons/${encodeURIComponent(symbol)}.svg`
}

/**
 * Prices of one asset: the provider's quote and closes; for a symbol the provider does not know
 * (a Tesouro bond, a private fund), the asset's own stored price and no closes, so its history
 * is valued at its buy prices until the current month. Provider failures (502/504) propagate.
 */
async function pricesOf (
  quotes: QuoteProvider,
  { asset, lots }: Holding,
  since: MonthKey,
  log: FastifyBaseLogger
): Promise<AssetPrices> {
  if (isTicker(asset.symbol)) {
    const [quote, closes] = await Promise.all([
      quotes.quote(asset.symbol, log),
      quotes.monthlyCloses(asset.symbol, since, log)
    ])
    if (quote !== undefined) {
      const origin = { source: quotes.source, lastUpdate: quote.lastUpdate }
      return { assetId: asset.id, lots, lastQuote: quote.price, origin, closes: closes ?? [] }
    }
  }
  const origin = { source: STORED_PRICE_SOURCE, lastUpdate: null }
  return { assetId: asset.id, lots, lastQuote: asset.price, origin, closes: [] }
}

/** The dashboard of one asset, or `undefined` when there is no such asset. */
export async function assetDashboard (
  assets: AssetRepository,
  quotes: QuoteProvider,
  assetId: string,
  log: FastifyBaseLogger,
  now = new Date()
): Promise<Dashboard | undefined> {
  const holdings = await assets.portfolioHoldingsOf(assetId)
  if (holdings === undefined) return undefined
  return await dashboardOf(holdings.holding, holdings.portfolio, quotes, log, now)
}

/** The dashboard of `holding`, one of `portfolio`'s (every holding of its portfolio, it included). */
export async function dashboardOf (
  holding: Holding,
  portfolio: readonly Holding[],
  quotes: QuoteProvider,
  log: FastifyBaseLogger,
  now = new Date()
): Promise<Dashboard> {
  const { asset, lots } = holding
  const since = lots[0]?.date.slice(0, 7) ?? monthKey(now)
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
