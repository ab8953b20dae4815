import { NotFoundError } from '../errors.js'
import { FIRST_TRADE_DATE, type Asset } from '../schemas/asset.js'
import { averagePrice, type Trade } from '../schemas/average-cost.js'
import { addDays } from '../schemas/calendar.js'
import type { SkippedInvestment } from '../schemas/import.js'
import { decimal, quotient, UNIT_DECIMALS, type Decimal } from '../schemas/money.js'
import type { EventsOf } from './event-books.js'
import {
  dayOf, eventColumns, nextSeq, positionAt, positionColumns, positionWithEvents, reconciledTrades
} from './holdings.js'
import type { ImportedTrade, InvestmentPlan } from './investments.js'
import type { PositionColumns, RecordedTrade, UnitOfWork } from './ports.js'
import { replay, type ReplayedEvents } from './replay.js'

/*
 * An investment written into its asset (docs/api.md#imports), in one write of the store: the asset found again by
 * the investment's id (or created), the institution's buys and sales it does not have yet recorded, and the
 * estimated entries — an opening buy, a closing sale — set so that the replay of every transaction of the asset
 * (src/domain/replay.ts: the one place a position is computed) holds what the institution holds. A transaction
 * recorded by hand is never removed: it counts in the replay like the others.
 */

/** Where an import writes: its id, its portfolio, and the portfolio's owner (whose item it checked). */
export interface ImportTarget {
  importId: string
  portfolioId: string
  owner: string
}

/** The estimated entries of an asset: what the institution's history leaves unexplained. */
interface Estimates {
  opening: Trade | undefined
  closing: Trade | undefined
}

function buy (quantity: Decimal, date: string, price: number): Trade {
  return { type: 'BUY', date, quantity: quantity.toNumber(), price, fee: 0 }
}

/** The replay of `entries` after an opening buy of `quantity` (none for 0), which counts first. */
function replayedWith (
  entries: readonly Trade[], quantity: Decimal, date: string, price: number, events: ReplayedEvents
) {
  return replay(quantity.gt(0) ? [buy(quantity, date, price), ...entries] : entries, events)
}

/**
 * The least opening with which no sale of `entries` sells more than is held: each round adds what the sale that
 * stopped the replay lacked (the least such gap of its day, so never more than it needs), and the replay is run
 * again from the start.
 */
function leastOpening (entries: readonly Trade[], date: string, price: number, events: ReplayedEvents): Decimal {
  const sales = entries.filter(entry => entry.type === 'SELL')
  let least = decimal(0)
  for (let round = 0; round <= sales.length; round++) {
    const { after, shortAt } = replayedWith(entries, least, date, price, events)
    if (shortAt === undefined) return least
    const gaps = sales.filter(sale => sale.date === shortAt && decimal(sale.quantity).gt(after.quantity))
      .map(sale => decimal(sale.quantity).minus(after.quantity))
    least = least.plus(gaps.reduce((smallest, gap) => gap.lt(smallest) ? gap : smallest))
  }
  /* c8 ignore next 2 -- each round makes one more sale of the day that stopped the replay no longer short */
  throw new Error('no opening makes the institution\'s sales possible')
}

/** The day before `day`, not before the first a transaction may have. */
function dayBefore (day: string): string {
  const before = addDays(day, -1)
  return before < FIRST_TRADE_DATE ? FIRST_TRADE_DATE : before
}

/**
 * The opening and closing entries that make `entries` (every transaction of the asset but them) hold `plan.held`.
 * The opening is a buy dated the investment's purchase (or issue) when that is before every entry, else the day
 * before the first, else the import's day; priced at `amountOriginal ÷ quantity`, else the first known price, else
 * the institution's. When the institution holds less than the entries explain (a transfer out, the taxes of a
 * fund's quotas), the rest is a closing sale at the average price, which realizes nothing, dated the institution's
 * figures' day (or the last entry's, if later).
 */
function estimatesFor (
  entries: readonly Trade[], plan: InvestmentPlan, firstPrice: number | undefined, events: ReplayedEvents
): Estimates {
  const today = events.today
  const first = entries.reduce<string | undefined>((earliest, { date }) => earliest === undefined || date < earliest
    ? date
    : earliest, undefined)
  const date = first === undefined
    ? plan.purchasedOn ?? today
    : plan.purchasedOn !== undefined && plan.purchasedOn < first ? plan.purchasedOn : dayBefore(first)
  const price = plan.openingPrice ?? firstPrice ?? plan.institutionPrice ?? 0
  const least = leastOpening(entries, date, price, events)
  const base = replayedWith(entries, least, date, price, events).after
  if (plan.held.gte(base.quantity)) {
    // What is held at the end moves with the opening (one for one with trades; an event after it, such as a split,
    // would scale it): a second replay says by how much.
    const slope = replayedWith(entries, least.plus(1), date, price, events).after.quantity.minus(base.quantity)
    const opening = least.plus(quotient(plan.held.minus(base.quantity), slope, UNIT_DECIMALS))
    return { opening: opening.gt(0) ? buy(opening, date, price) : undefined, closing: undefined }
  }
  const last = entries.reduce((latest, entry) => entry.date > latest ? entry.date : latest, date)
  const closing: Trade = {
    type: 'SELL',
    date: plan.asOf > last ? plan.asOf : last,
    quantity: base.quantity.minus(plan.held).toNumber(),
    price: averagePrice(base).toNumber(),
    fee: 0
  }
  return { opening: least.gt(0) ? buy(least, date, price) : undefined, closing }
}

function sameTrade (a: Trade | undefined, b: Trade | undefined): boolean {
  return a?.type === b?.type && a?.date === b?.date && a?.quantity === b?.quantity && a?.price === b?.price
}

const INSTITUTION_FIELDS = ['priceSource', 'asOf', 'issuer', 'dueDate', 'rate', 'rateType', 'isin'] as const

/** Whether writing `columns` and what the institution says would change the asset `before`. */
function changes (before: Asset, columns: PositionColumns, plan: InvestmentPlan): boolean {
  return before.quantity !== columns.quantity || before.price !== columns.price ||
    INSTITUTION_FIELDS.some(field => before[field] !== plan.institution[field])
}

/**
 * Writes the investment `plan` with the institution's `trades` (in their order) into its asset of the target
 * portfolio, and what it did into the import. Unchanged, the asset is not written (nor its portfolio touched).
 */
export async function writeInvestment (
  work: UnitOfWork, target: ImportTarget, plan: InvestmentPlan, trades: readonly ImportedTrade[],
  skipped: readonly SkippedInvestment[], eventsOf: EventsOf
): Promise<void> {
  const events = eventsOf(plan.symbol, dayOf(work.now))
  const locked = await work.assets.lockByInvestment(target.portfolioId, plan.investmentId)
  let assetId: string
  let recorded: RecordedTrade[] = []
  if (locked === undefined) {
    // The portfolio's row first, as an asset's create takes it: gone since the import began, nothing is written.
    if (await work.portfolios.touch(target.portfolioId) !== target.owner) throw new NotFoundError('Portfolio')
    const { investmentId, name, symbol, type, institution } = plan
    const created = await work.assets.insert({
      portfolioId: target.portfolioId,
      name,
      symbol,
      type,
      investmentId,
      ...institution,
      ...positionAt(0, 0, eventColumns(events, false))
    })
    assetId = created.id
  } else {
    assetId = locked.value.id
    recorded = await reconciledTrades(work, locked)
  }
  const known = new Set(recorded.map(trade => trade.investmentTransactionId))
  const added = trades.filter(trade => !known.has(trade.investmentTransactionId))
  let seq = nextSeq(recorded)
  await work.trades.insertAll(assetId, added.map(({ investmentTransactionId, type, date, quantity, price, fee }) => ({
    trade: { type, date, quantity, price, fee }, seq: seq++, imported: { investmentTransactionId, estimated: false }
  })))
  const others: Trade[] = [...recorded.filter(trade => !trade.estimated), ...added]
  const wanted = estimatesFor(others, plan, trades[0]?.price, events)
  let transactionsRecorded = added.length
  let removed = 0
  for (const [type, estimate] of [['BUY', wanted.opening], ['SELL', wanted.closing]] as const) {
    const existing = recorded.find(trade => trade.estimated && trade.type === type)
    if (sameTrade(existing, estimate)) continue
    if (existing !== undefined) {
      await work.trades.delete(existing.id)
      removed++
    }
    if (estimate === undefined) continue
    // The opening counts first of its day, before anything recorded; the closing last.
    const place = type === 'BUY' ? recorded.reduce((lowest, trade) => Math.min(lowest, trade.seq), 0) - 1 : seq++
    await work.trades.insert(assetId, estimate, place, { investmentTransactionId: null, estimated: true })
    transactionsRecorded++
  }
  const all = [wanted.opening, ...others, wanted.closing].filter(entry => entry !== undefined)
  // The opening makes every sale possible with the events; a grouping its trades disagree with is left unapplied.
  const { position, events: applied } = positionWithEvents(all, all, events)
  const recordedNothing = transactionsRecorded + removed === 0
  // A price of the investor's own (a PATCH) stands until a transaction is recorded, as through the routes.
  const columns = plan.institutionPrice !== undefined
    ? positionAt(position.quantity.toNumber(), plan.institutionPrice, applied)
    : locked !== undefined && recordedNothing
      ? positionAt(position.quantity.toNumber(), locked.value.price, applied)
      : positionColumns(position, applied)
  const changed = locked === undefined || !recordedNothing || changes(locked.value, columns, plan)
  if (changed) {
    await work.assets.setPosition(assetId, columns, plan.institution)
    if (locked !== undefined) await work.portfolios.touch(target.portfolioId)
  }
  await work.imports.wrote(target.importId, {
    investmentId: plan.investmentId,
    assetsCreated: locked === undefined ? 1 : 0,
    assetsUpdated: locked !== undefined && changed ? 1 : 0,
    transactionsRecorded,
    skipped
  })
}
