import { NotFoundError } from '../errors.js'
import type { QuoteProvider } from '../quotes/provider.js'
import type { Asset } from '../schemas/asset.js'
import { fieldsOf } from '../schemas/common.js'
import { decimal, money, percentage, positionValue, sum } from '../schemas/money.js'
import { PortfolioValuationSchema, type PortfolioValuation } from '../schemas/valuation.js'
import type { PortfolioReads } from './portfolio-read-cache.js'
import type { Access } from './access.js'
import { found } from './common.js'
import { ifReached, reached, type Owners } from './ownership.js'
import type { AssetStore, Log } from './ports.js'
import { knowCoinsOf, marketPriced, marketTickers } from './quotes.js'
import { quotesInReaisOrNone, type QuoteInReais } from './reais.js'

/**
 * Quotes in reais by ticker; `undefined`: no quote (unknown to the provider, the provider failing,
 * or priced in a currency without a rate).
 */
export interface QuoteBook {
  get: (ticker: string) => QuoteInReais | undefined
  /** Who priced them (the provider's `source`). */
  readonly source: string
}

/** A book of quotes in reais as `quotesInReaisOrNone` answers them, priced by `provider`. */
function bookOf (quotes: ReadonlyMap<string, QuoteInReais | undefined>, provider: QuoteProvider): QuoteBook {
  return { get: ticker => quotes.get(ticker), source: provider.source }
}

/**
 * A portfolio's value at market prices (docs/api.md#valuation), exact: each asset's market value
 * is `quantity × price` of its symbol's quote in reais rounded half away from zero to cents, or its own
 * `totalValue` when unquoted; `bookValue` is the sum of the assets' `totalValue` (the portfolio's
 * `totalValue`), `marketValue` the sum of their market values.
 */
export function valuate (
  portfolioId: string, assets: readonly Asset[], quotes: QuoteBook, now: Date
): PortfolioValuation {
  const unquoted = new Set<string>()
  let oldestQuote = Infinity
  const book = sum(assets.map(asset => decimal(asset.totalValue)))
  const market = sum(assets.map(asset => {
    const quote = marketPriced(asset) ? quotes.get(asset.symbol) : undefined
    if (quote === undefined) {
      unquoted.add(asset.symbol)
      return decimal(asset.totalValue)
    }
    oldestQuote = Math.min(oldestQuote, Date.parse(quote.lastUpdate))
    return positionValue(asset.quantity, quote.price)
  }))
  const result = market.minus(book)
  return {
    portfolioId,
    currency: 'BRL',
    bookValue: money(book),
    marketValue: money(market),
    result: money(result),
    resultPercent: percentage(result, book),
    quotedAt: Number.isFinite(oldestQuote) ? new Date(oldestQuote).toISOString() : null,
    quoteSource: Number.isFinite(oldestQuote) ? quotes.source : null,
    unquotedSymbols: [...unquoted].sort(),
    updatedAt: now.toISOString()
  }
}

/** Every field of a valuation but when it was computed, from its schema. */
const COMPARED_FIELDS = fieldsOf(PortfolioValuationSchema).filter(field => field !== 'updatedAt')

/** Equal values of a valuation's field: equal numbers (0 and -0 both answer 0), strings, null, or arrays of them. */
function sameValue (a: unknown, b: unknown): boolean {
  return Array.isArray(a) && Array.isArray(b)
    ? a.length === b.length && a.every((item, index) => sameValue(item, b[index]))
    : a === b
}

/**
 * Whether two valuations differ in nothing but when they were computed: every other field of the schema
 * compared, so a field added to PortfolioValuationSchema reaches the live streams without being named here
 * (0.24–0.47 µs against the hand-kept list's 0.08, after a valuate of 13–16 µs of three assets, measured with
 * bench/portfolio-repository.ts).
 */
export function sameValuation (a: PortfolioValuation | undefined, b: PortfolioValuation): boolean {
  return a !== undefined && COMPARED_FIELDS.every(field => sameValue(a[field], b[field]))
}

/**
 * Portfolio valuations on request (docs/api.md#valuation), within the caller's portfolio scope
 * (docs/api.md#whose-portfolios): one read of the portfolio's assets and one provider batch for
 * all their distinct tickers (and one for the rates of the currencies they are priced in), through
 * the quote cache the dashboards use. An unknown portfolio, or another user's, is NOT_FOUND
 * (`Portfolio não encontrado`).
 */
export class ValuationService {
  constructor (
    private readonly portfolios: Pick<PortfolioReads, 'portfolioAndAssets'>,
    private readonly assets: Pick<AssetStore, 'ofPortfolios'>,
    private readonly quotes: QuoteProvider,
    /** Who owns a portfolio of a batch. */
    private readonly owners: Owners,
    private readonly now: () => Date = () => new Date()
  ) {}

  async valuation (access: Access, portfolioId: string, log: Log): Promise<PortfolioValuation> {
    const scope = await access.portfolioScope()
    const { portfolio, assets } = await found(portfolioId, () => new NotFoundError('Portfolio'),
      async id => ifReached(scope, await this.portfolios.portfolioAndAssets(id), read => read.portfolio.userId))
    knowCoinsOf(this.quotes, assets)
    const quotes = await quotesInReaisOrNone(this.quotes, marketTickers(assets), log)
    return valuate(portfolio.id, assets, bookOf(quotes, this.quotes), this.now())
  }

  /**
   * The valuations of several portfolios (GraphQL's lists): one read of their assets, one provider
   * batch; a portfolio out of the caller's scope is valued as an unknown one, holding nothing.
   */
  async ofPortfolios (access: Access, portfolioIds: readonly string[], log: Log): Promise<PortfolioValuation[]> {
    const scope = await access.portfolioScope()
    const byPortfolio = await this.assets.ofPortfolios(await reached(scope, portfolioIds, this.owners))
    const assets = [...byPortfolio.values()].flat()
    knowCoinsOf(this.quotes, assets)
    const quotes = bookOf(await quotesInReaisOrNone(this.quotes, marketTickers(assets), log), this.quotes)
    const now = this.now()
    return portfolioIds.map(id => valuate(id, byPortfolio.get(id) ?? [], quotes, now))
  }
}
