import { NotFoundError } from '../errors.js'
import type { Asset } from '../schemas/asset.js'
import { dayKey } from '../schemas/calendar.js'
import type { AssetEvent, PortfolioIncome } from '../schemas/corporate-events.js'
import { decimal, money, type Decimal } from '../schemas/money.js'
import type { AssetTransaction } from '../schemas/transaction.js'
import type { Access } from './access.js'
import { entitlements, eventAnswer, type CashPaid } from './asset-events.js'
import { found, type Each } from './common.js'
import type { EventBook } from './corporate-events.js'
import type { EventBooks } from './event-books.js'
import { ifReached, reachable, reached } from './ownership.js'
import type { AssetStore, DataStore, Holding, Log } from './ports.js'

const missingAsset = (): Error => new NotFoundError('Ativo')
const missingPortfolio = (): Error => new NotFoundError('Portfolio')

interface Totals {
  gross: Decimal
  withheld: Decimal
  net: Decimal
}

const NOTHING: Totals = { gross: decimal(0), withheld: decimal(0), net: decimal(0) }

function plus (totals: Totals, cash: CashPaid): Totals {
  const { gross, withheld, net } = totals
  return { gross: gross.plus(cash.gross), withheld: withheld.plus(cash.withheld), net: net.plus(cash.net) }
}

function answered (totals: Totals): { gross: number, withheld: number, net: number } {
  return { gross: money(totals.gross), withheld: money(totals.withheld), net: money(totals.net) }
}

/**
 * A portfolio's income of `year` (docs/api.md#corporate-events): each cash event its holdings were entitled to
 * whose payment date falls in the year, by payment month — gross, withheld and net, the net split into paid and
 * announced — and by symbol. An event without a payment date belongs to no month: it is in the asset's events and
 * its dashboard's `incomeAnnounced`, not here.
 */
function incomeOfYear (
  portfolioId: string, year: number, holdings: ReadonlyArray<{ symbol: string, paid: readonly CashPaid[] }>
): PortfolioIncome {
  const months = Array.from({ length: 12 }, (_, index) => ({
    month: `${year}-${String(index + 1).padStart(2, '0')}`, totals: NOTHING, paid: decimal(0), announced: decimal(0)
  }))
  const bySymbol = new Map<string, Totals>()
  for (const { symbol, paid } of holdings) {
    for (const cash of paid) {
      const date = cash.event.paymentDate
      if (date === null || Number(date.slice(0, 4)) !== year) continue
      const month = months[Number(date.slice(5, 7)) - 1] as typeof months[number]
      month.totals = plus(month.totals, cash)
      if (cash.status === 'paid') month.paid = month.paid.plus(cash.net)
      else month.announced = month.announced.plus(cash.net)
      bySymbol.set(symbol, plus(bySymbol.get(symbol) ?? NOTHING, cash))
    }
  }
  const total = months.reduce((all, month) => ({
    gross: all.gross.plus(month.totals.gross),
    withheld: all.withheld.plus(month.totals.withheld),
    net: all.net.plus(month.totals.net)
  }), NOTHING)
  return {
    portfolioId,
    currency: 'BRL',
    year,
    total: answered(total),
    months: months.map(month => ({
      month: month.month, ...answered(month.totals), paid: money(month.paid), announced: money(month.announced)
    })),
    bySymbol: [...bySymbol].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([symbol, totals]) => ({ symbol, ...answered(totals) }))
  }
}

/**
 * The corporate events of assets and the income of portfolios (docs/api.md#corporate-events), within the caller's
 * portfolio scope (docs/api.md#whose-portfolios): read from the stored transactions and the events of the symbols,
 * through the quote cache (asked at most once a day per symbol), replayed as every position is. An unknown asset or
 * portfolio, or another user's, is NOT_FOUND; a provider that fails on events never read is the provider's error.
 */
export class EventService {
  constructor (
    private readonly store: Pick<DataStore, 'portfolios' | 'transactions'> & {
      assets: Pick<AssetStore, 'versioned' | 'ownersOf' | 'holdingsOfPortfolios'>
    },
    private readonly books: Pick<EventBooks, 'read'>,
    private readonly now: () => Date = () => new Date()
  ) {}

  /** The events the asset was entitled to, by data com. */
  async ofAsset (access: Access, assetId: string, log: Log): Promise<AssetEvent[]> {
    const scope = await access.portfolioScope()
    const asset = await found(assetId, missingAsset, async id =>
      await reachable(scope, id, this.store.assets) ? (await this.store.assets.versioned(id))?.value : undefined)
    const [answer] = await this.ofReached([asset], log)
    return answer as AssetEvent[]
  }

  /** The events of several assets (GraphQL's `PortfolioAsset.events`) in one read and one batch of events. */
  async ofAssets (access: Access, assets: readonly Asset[], log: Log): Promise<Array<Each<AssetEvent[]>>> {
    const scope = await access.portfolioScope()
    const ids = new Set(await reached(scope, assets.map(asset => asset.id), this.store.assets))
    const answers = await this.ofReached(assets.filter(asset => ids.has(asset.id)), log)
    let next = 0
    return assets.map(asset => ids.has(asset.id) ? answers[next++] as AssetEvent[] : missingAsset())
  }

  /** The portfolio's income of `year` (this year when absent), by payment month. */
  async income (access: Access, portfolioId: string, year: number | undefined, log: Log): Promise<PortfolioIncome> {
    const scope = await access.portfolioScope()
    const portfolio = await found(portfolioId, missingPortfolio, async id =>
      ifReached(scope, await this.store.portfolios.portfolioOnly(id), read => read.userId))
    const holdings: Holding[] = (await this.store.assets.holdingsOfPortfolios([portfolio.id])).get(portfolio.id) ?? []
    const today = dayKey(this.now())
    const books = await this.books.read(holdings.map(({ asset }) => asset.symbol), log)
    const paid = holdings.map(({ asset, transactions }) => ({
      symbol: asset.symbol,
      paid: cashOf(transactions, books.get(asset.symbol), today)
    }))
    return incomeOfYear(portfolio.id, year ?? Number(today.slice(0, 4)), paid)
  }

  private async ofReached (assets: readonly Asset[], log: Log): Promise<AssetEvent[][]> {
    const today = dayKey(this.now())
    const [transactions, books] = await Promise.all([
      this.store.transactions.ofAssets(assets.map(asset => asset.id)),
      this.books.read(assets.map(asset => asset.symbol), log)
    ])
    return assets.map(asset => {
      const book = books.get(asset.symbol)
      if (book === undefined) return []
      return entitlements(transactions.get(asset.id) ?? [], { book, today }).map(eventAnswer)
    })
  }
}

/** The cash events `transactions` were entitled to, with what each pays. */
function cashOf (transactions: readonly AssetTransaction[], book: EventBook | undefined, today: string): CashPaid[] {
  if (book === undefined || book.cash.length === 0) return []
  return entitlements(transactions, { book, today }).flatMap(({ cash }) => cash === undefined ? [] : [cash])
}
