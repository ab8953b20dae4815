import type { Log } from './ports.js'
import { QuoteNotFoundError } from '../errors.js'
import { isTicker, quotesOf, type ProviderQuote, type QuoteProvider } from '../quotes/provider.js'
import type { Asset } from '../schemas/asset.js'
import type { Quote } from '../schemas/quote.js'
import type { Access } from './access.js'
import type { Each } from './common.js'

/** A ticker as the providers know it: upper-cased (`petr4` is PETR4; docs/api.md#inputs). */
function tickerOf (symbol: string): string {
  return symbol.toUpperCase()
}

/**
 * Whether the quote provider prices the asset: its symbol is a ticker, and its institution does not price it (an
 * imported bond or fund: docs/api.md#imports), whatever its symbol.
 */
export function marketPriced (asset: Pick<Asset, 'symbol' | 'priceSource'>): boolean {
  return asset.priceSource !== 'institution' && isTicker(asset.symbol)
}

/** The distinct symbols of `assets` the quote provider is asked for. */
export function marketTickers (assets: readonly Asset[]): string[] {
  return [...new Set(assets.filter(marketPriced).map(asset => asset.symbol))]
}

/** The symbols of `assets` that are coins for certain: those of assets of type CRYPTO (docs/api.md#coins). */
export function coinsOf (assets: readonly Asset[]): string[] {
  return assets.filter(asset => asset.type === 'CRYPTO' && isTicker(asset.symbol)).map(asset => asset.symbol)
}

/** Tells the provider which of the assets' symbols are coins, before it is asked for their prices. */
export function knowCoinsOf (provider: QuoteProvider, assets: readonly Asset[]): void {
  const coins = coinsOf(assets)
  if (coins.length > 0) provider.knowCoins?.(coins)
}

/**
 * Price quotes (docs/api.md#resources), for whoever the portfolio routes serve: a quote holds no
 * user's data, so it asks the portfolio scope (docs/api.md#whose-portfolios) and keeps to none.
 * A ticker arrives validated (`TICKER_PATTERN`) and is upper-cased here; one the provider does not
 * know is NOT_FOUND (`Cotação não encontrada para X`). Batches ask the provider once per batch of tickers.
 */
export class QuoteService {
  constructor (private readonly provider: QuoteProvider) {}

  async quote (access: Access, symbol: string, log: Log): Promise<Quote> {
    await access.portfolioScope()
    const ticker = tickerOf(symbol)
    const quote = this.answer(ticker, await this.provider.quote(ticker, log))
    if (quote instanceof Error) throw quote
    return quote
  }

  /** The quotes of several tickers, in one provider batch, each as {@link quote} answers it. */
  async quotes (access: Access, symbols: readonly string[], log: Log): Promise<Array<Each<Quote>>> {
    await access.portfolioScope()
    const tickers = symbols.map(tickerOf)
    const quotes = await quotesOf(this.provider, tickers, log)
    return tickers.map(ticker => this.answer(ticker, quotes.get(ticker)))
  }

  /**
   * The quotes of stored assets' symbols; a symbol that is no ticker (a bond's name), or an asset its institution
   * prices, is NOT_FOUND unasked.
   */
  async ofAssets (access: Access, assets: readonly Asset[], log: Log): Promise<Array<Each<Quote>>> {
    await access.portfolioScope()
    knowCoinsOf(this.provider, assets)
    const quotes = await quotesOf(this.provider, marketTickers(assets), log)
    return assets.map(asset => this.answer(asset.symbol, marketPriced(asset) ? quotes.get(asset.symbol) : undefined))
  }

  /** The provider's quote with its source, or NOT_FOUND. */
  private answer (ticker: string, quote: ProviderQuote | undefined): Each<Quote> {
    return quote === undefined ? new QuoteNotFoundError(ticker) : { ...quote, source: this.provider.source }
  }
}
