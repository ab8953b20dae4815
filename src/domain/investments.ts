import { TypeCompiler } from '@sinclair/typebox/compiler'
import { FIRST_TRADE_DATE, type AssetType } from '../schemas/asset.js'
import type { Trade } from '../schemas/average-cost.js'
import { leadingDay } from '../schemas/calendar.js'
import {
  AggregatorInvestmentSchema, AggregatorInvestmentTransactionSchema, type AggregatorInvestment,
  type AggregatorInvestmentTransaction
} from '../schemas/investment.js'
import type { SkippedInvestment } from '../schemas/import.js'
import { decimal, money, quotient, UNIT_DECIMALS, unitAmount, type Decimal } from '../schemas/money.js'
import { bounded } from './holdings.js'
import type { InstitutionFields } from './ports.js'

/*
 * What an import makes of the aggregator's investments and their transactions (docs/aggregator.md, "Investments";
 * docs/api.md#imports): each investment one asset — its type, symbol and price's origin — and each of its buys and
 * sales one dated transaction; what cannot be held or is no buy or sale is skipped, with its reason. Pure: the reads
 * are src/upstream/investments.ts's, the writes src/domain/investment-writes.ts's.
 */

const isInvestment = TypeCompiler.Compile(AggregatorInvestmentSchema)
const isTransaction = TypeCompiler.Compile(AggregatorInvestmentTransactionSchema)

/** Quantities and prices are bounded as the routes bound them (src/schemas/asset.ts). */
const MAX_AMOUNT = 1e12

/** A B3 ticker: four letters and one or two digits (PETR4, BOVA11, HGLG11, AAPL34), `F` for the fractional market. */
const B3_TICKER = /^([A-Z]{4}[0-9]{1,2})F?$/

/** Listed investments, priced by the quote provider when their `code` is a B3 ticker (REAL_ESTATE_FUND: older). */
const LISTED_TYPES = new Set(['EQUITY', 'ETF', 'REAL_ESTATE_FUND'])
/** Listed funds: an equity of these subtypes is a FUND, every other a STOCK (stocks, BDRs, options). */
const FUND_SUBTYPES = new Set(['REAL_ESTATE_FUND', 'ETF'])

/** An investment as an asset: what it is, what it holds at the institution, and how its opening is dated and priced. */
export interface InvestmentPlan {
  investmentId: string
  name: string
  symbol: string
  type: AssetType
  /** What the institution says of it; `priceSource` is `institution` for an investment without a ticker. */
  institution: InstitutionFields
  /** The price of an institution-priced investment: what it holds is worth (`balance`), per unit. */
  institutionPrice: number | undefined
  /** What the institution holds after the import: `quantity` (1 when it gives none), 0 once withdrawn. */
  held: Decimal
  /** `purchaseDate`, else `issueDate`: the opening's date when it is before every transaction. */
  purchasedOn: string | undefined
  /** `amountOriginal ÷ quantity`: the opening's price when given. */
  openingPrice: number | undefined
  /** The day of the institution's figures, else the import's: a closing sale's date at the latest. */
  asOf: string
}

/** An institution's buy or sale: its trade, its id, and when it was made (for the order of one day's). */
export interface ImportedTrade extends Trade {
  investmentTransactionId: string
  at: string
}

/** `YYYY-MM-DD` of an ISO 8601 text, when it is a day from 1990-01-01 to `today`. */
function dayIn (text: string | null | undefined, today: string): string | undefined {
  const day = anyDay(text)
  return day !== null && day >= FIRST_TRADE_DATE && day <= today ? day : undefined
}

/** A day as given, whatever its range (a bond's due date is in the future). */
function anyDay (text: string | null | undefined): string | null {
  return (text === null || text === undefined ? undefined : leadingDay(text)) ?? null
}

/** A unit amount as the service keeps it (8 decimals, half away from zero); undefined when absent or unbounded. */
function unit (value: number | null | undefined): Decimal | undefined {
  if (value === null || value === undefined || Math.abs(value) > MAX_AMOUNT) return undefined
  return decimal(unitAmount(Math.abs(value)))
}

/** A text of at most `length` characters, trimmed; null when blank. */
function text (value: string | null | undefined, length: number): string | null {
  const trimmed = value?.trim() ?? ''
  return trimmed.length === 0 ? null : trimmed.slice(0, length)
}

function skip (investmentId: string, reason: string, transactionId: string | null = null): SkippedInvestment {
  return { investmentId, transactionId, reason }
}

/** The investment's type as one of the five asset types (docs/aggregator.md, "Investments"). */
function assetTypeOf ({ type, subtype }: AggregatorInvestment): AssetType {
  if (type === 'FIXED_INCOME') return 'BOND'
  if (type === 'EQUITY') return FUND_SUBTYPES.has(subtype ?? '') ? 'FUND' : 'STOCK'
  // ETF, REAL_ESTATE_FUND, MUTUAL_FUND, SECURITY, COE, OTHER, and any type the aggregator adds.
  return 'FUND'
}

/** The B3 ticker a listed investment's `code` is (its fractional `F` dropped: the same share), else undefined. */
function tickerOf ({ type, code }: AggregatorInvestment): string | undefined {
  if (!LISTED_TYPES.has(type)) return undefined
  return B3_TICKER.exec(code?.trim().toUpperCase() ?? '')?.[1]
}

/**
 * The asset an investment is, or why it is skipped: one the aggregator does not describe, one in another currency
 * than the real (amounts are in reais), one without a quantity or a price that can be held.
 */
export function planOf (raw: unknown, today: string): InvestmentPlan | SkippedInvestment {
  const id = typeof raw === 'object' && raw !== null && typeof (raw as { id?: unknown }).id === 'string'
    ? (raw as { id: string }).id.slice(0, 64)
    : 'desconhecido'
  if (!isInvestment.Check(raw)) return skip(id, 'O agregador não descreveu este investimento (id, tipo, nome)')
  const name = text(raw.name, 200)
  if (name === null) return skip(id, 'O investimento não tem nome')
  const currency = raw.currencyCode ?? 'BRL'
  if (currency !== 'BRL') return skip(id, `Em ${currency.slice(0, 10)}: só investimentos em reais são importados`)
  const ticker = tickerOf(raw)
  // Pluggy gives a quantity of 1 to what has no quotas (a bond): its value is then what the unit is worth.
  const quantity = raw.quantity === null || raw.quantity === undefined ? decimal(1) : unit(raw.quantity)
  if (quantity === undefined) return skip(id, 'A quantidade informada pela instituição está fora dos limites')
  const held = raw.status === 'TOTAL_WITHDRAWAL' ? decimal(0) : quantity
  const worth = raw.balance ?? raw.amount
  const price = ticker !== undefined
    ? undefined
    : quantity.gt(0) && worth !== null && worth !== undefined && Math.abs(worth) <= MAX_AMOUNT
      ? quotient(decimal(worth).abs(), quantity, UNIT_DECIMALS)
      : unit(raw.value) ?? (quantity.eq(0) ? decimal(0) : undefined)
  if (ticker === undefined && (price === undefined || price.gt(MAX_AMOUNT))) {
    return skip(id, 'A instituição não informou quanto vale o investimento (saldo ou valor)')
  }
  const asOf = dayIn(raw.date, today) ?? today
  const original = raw.amountOriginal
  const openingPrice = original === null || original === undefined || original <= 0 || quantity.eq(0)
    ? undefined
    : quotient(decimal(original), quantity, UNIT_DECIMALS)
  return {
    investmentId: id,
    name,
    symbol: ticker ?? (text(raw.isin, 200) ?? text(raw.code, 200) ?? name).toUpperCase(),
    type: assetTypeOf(raw),
    institution: {
      priceSource: ticker === undefined ? 'institution' : null,
      asOf: ticker === undefined ? asOf : null,
      issuer: text(raw.issuer, 200),
      dueDate: anyDay(raw.dueDate),
      rate: raw.rate ?? null,
      rateType: text(raw.rateType, 50),
      isin: text(raw.isin, 12)
    },
    institutionPrice: price?.toNumber(),
    held,
    purchasedOn: dayIn(raw.purchaseDate, today) ?? dayIn(raw.issueDate, today),
    openingPrice: openingPrice === undefined || openingPrice.gt(MAX_AMOUNT) ? undefined : openingPrice.toNumber(),
    asOf
  }
}

/** Why a transaction of the aggregator is no trade of the asset's, or its trade. */
function tradeOf (
  investmentId: string, raw: AggregatorInvestmentTransaction, today: string
): ImportedTrade | SkippedInvestment {
  const { id, type } = raw
  if (type === 'TAX') return skip(investmentId, 'Imposto (TAX): não muda a quantidade nem o custo', id)
  if (type === 'TRANSFER') {
    return skip(investmentId, 'Transferência (TRANSFER): não é compra nem venda; a quantidade da instituição vale', id)
  }
  const kind = type === 'BUY' || type === 'SELL' ? type : undefined
  if (kind === undefined) return skip(investmentId, 'Transação sem tipo de compra ou venda', id)
  const at = raw.tradeDate ?? raw.date
  const date = dayIn(at, today)
  if (date === undefined) return skip(investmentId, `Data fora do intervalo aceito (${FIRST_TRADE_DATE} a hoje)`, id)
  const quantity = unit(raw.quantity)
  if (quantity === undefined || quantity.eq(0)) return skip(investmentId, 'Transação sem quantidade', id)
  const amount = raw.amount === null || raw.amount === undefined ? undefined : decimal(raw.amount).abs()
  const price = unit(raw.value) ?? (amount === undefined ? undefined : quotient(amount, quantity, UNIT_DECIMALS))
  if (price === undefined || price.gt(MAX_AMOUNT)) return skip(investmentId, 'Transação sem preço', id)
  let fee = decimal(0)
  for (const expense of Object.values(raw.expenses ?? {})) if (expense !== null) fee = fee.plus(decimal(expense).abs())
  const trade: Trade = { type: kind, date, quantity: quantity.toNumber(), price: price.toNumber(), fee: money(fee) }
  try {
    bounded(trade)
  } catch {
    return skip(investmentId, 'Transação de valor acima do limite de um ativo (10 trilhões de reais)', id)
  }
  return { ...trade, investmentTransactionId: id, at }
}

/** Of one day, the earlier made first, then a buy before a sale (so that no sale of the day goes short). */
function inOrder (a: ImportedTrade, b: ImportedTrade): number {
  if (a.date !== b.date) return a.date < b.date ? -1 : 1
  if (a.at !== b.at) return a.at < b.at ? -1 : 1
  return a.type === b.type ? 0 : a.type === 'BUY' ? -1 : 1
}

/** The investment's buys and sales in the order they are recorded, and what was skipped, each with its reason. */
export function tradesOf (
  investmentId: string, raws: readonly unknown[], today: string
): { trades: ImportedTrade[], skipped: SkippedInvestment[] } {
  const trades: ImportedTrade[] = []
  const skipped: SkippedInvestment[] = []
  for (const raw of raws) {
    if (!isTransaction.Check(raw)) {
      skipped.push(skip(investmentId, 'O agregador não descreveu esta transação (id, data)'))
      continue
    }
    const trade = tradeOf(investmentId, raw, today)
    if ('reason' in trade) skipped.push(trade)
    else trades.push(trade)
  }
  return { trades: trades.sort(inOrder), skipped }
}
