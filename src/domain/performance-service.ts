import { NotFoundError } from '../errors.js'
import { IBOV_SYMBOL, type PercentObservation, type QuoteProvider } from '../quotes/provider.js'
import { addDays, dayKey } from '../schemas/calendar.js'
import type { PerformanceRange, PortfolioPerformance } from '../schemas/performance.js'
import type { Access } from './access.js'
import { ifReached } from './ownership.js'
import { found } from './common.js'
import type { EventBooks } from './event-books.js'
import { buildPerformance, nominalStart } from './performance-calculation.js'
import type { PerformanceCache } from './performance-cache.js'
import type { PortfolioReads } from './portfolio-read-cache.js'
import type { AssetStore, Holding, Log } from './ports.js'
import { knowCoinsOf, marketPriced, marketTickers } from './quotes.js'
import { dailyClosesInReais, type DayClose } from './reais.js'

/**
 * How far before a range's start its closes are asked: its last day may be some days before today
 * (a weekend, a holiday, the provider's last close), and its first day is the last trading day at
 * or before its start.
 */
const SINCE_MARGIN_DAYS = 14

/**
 * The first day whose closes a range needs, from today: its start (moved to the first transaction's
 * eve) less the margin, from the first of that month — so the portfolios whose ranges start in one
 * month share one history per symbol in the quote cache (it is kept by the day asked from).
 */
function sinceOf (range: PerformanceRange, today: string, firstTransaction: string | undefined): string {
  let start = nominalStart(range, today, firstTransaction)
  if (firstTransaction !== undefined && addDays(firstTransaction, -1) > start) start = addDays(firstTransaction, -1)
  return `${addDays(start < today ? start : today, -SINCE_MARGIN_DAYS).slice(0, 7)}-01`
}

/** A benchmark the provider cannot give (a plan without it, a failure: its client logged which) is none. */
async function orNone<T> (what: string, read: () => Promise<T | undefined>, log: Log): Promise<T | undefined> {
  try {
    return await read()
  } catch (error) {
    log.debug({ err: error, benchmark: what }, 'benchmark unavailable: answered null')
    return undefined
  }
}

/**
 * Portfolio performances over ranges (docs/api.md#performance), of the portfolios the caller's scope
 * reaches (docs/api.md#whose-portfolios; another user's is an unknown id): one read of
 * the portfolio's assets and transactions, one provider history request per symbol for the range's
 * daily closes (and one each for IBOVESPA, the SELIC, the IPCA and the rates of the currencies its
 * closes are in), all through the quote cache; the answer kept per portfolio and range
 * ({@link PerformanceCache}). An unknown portfolio is NOT_FOUND (`Portfolio não encontrado`);
 * a provider failure of an asset's closes is the provider's error (502/503/504), of a benchmark
 * that benchmark's `null`.
 */
export class PerformanceService {
  constructor (
    private readonly portfolios: Pick<PortfolioReads, 'portfolioAndAssets'>,
    private readonly assets: Pick<AssetStore, 'holdingsOfPortfolios'>,
    private readonly quotes: QuoteProvider,
    private readonly books: Pick<EventBooks, 'read'>,
    private readonly cache: PerformanceCache | undefined,
    private readonly now: () => Date = () => new Date()
  ) {}

  async performance (
    access: Access, portfolioId: string, range: PerformanceRange, log: Log
  ): Promise<PortfolioPerformance> {
    const scope = await access.portfolioScope()
    const { portfolio } = await found(portfolioId, () => new NotFoundError('Portfolio'),
      async id => ifReached(scope, await this.portfolios.portfolioAndAssets(id), read => read.portfolio.userId))
    const compute = async (): Promise<PortfolioPerformance> => await this.compute(portfolio.id, range, log)
    return await (this.cache === undefined ? compute() : this.cache.get(portfolio.id, range, compute))
  }

  private async compute (portfolioId: string, range: PerformanceRange, log: Log): Promise<PortfolioPerformance> {
    const holdings: Holding[] = (await this.assets.holdingsOfPortfolios([portfolioId])).get(portfolioId) ?? []
    const today = dayKey(this.now())
    const firstTransaction = holdings.flatMap(({ transactions }) => transactions.map(trade => trade.date)).sort()[0]
    const since = sinceOf(range, today, firstTransaction)
    knowCoinsOf(this.quotes, holdings.map(({ asset }) => asset))
    const tickers = marketTickers(holdings.map(({ asset }) => asset))
    const [closes, events, ibov, selic, ipca] = await Promise.all([
      Promise.all(tickers.map(async ticker =>
        [ticker, await dailyClosesInReais(this.quotes, ticker, since, log)] as const)),
      this.books.read(tickers, log),
      orNone('ibov', async () => await dailyClosesInReais(this.quotes, IBOV_SYMBOL, since, log), log),
      orNone<PercentObservation[]>('selic', async () => await this.quotes.primeRate?.(since, log), log),
      orNone<PercentObservation[]>('ipca', async () => await this.quotes.inflation?.(since, log), log)
    ])
    const closesOf = new Map<string, readonly DayClose[]>(closes)
    return buildPerformance({
      portfolioId,
      quoteSource: this.quotes.source,
      range,
      today,
      since,
      holdings: holdings.map(({ asset, transactions }) => ({
        transactions,
        closes: marketPriced(asset) ? closesOf.get(asset.symbol) ?? [] : [],
        storedPrice: asset.price,
        events: events.get(asset.symbol)
      })),
      ibov: ibov ?? [],
      selic,
      ipca
    })
  }
}
