import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { MAX_ID_LENGTH } from './common.js'

/*
 * The aggregator's investments and their transactions, as far as an import reads them (docs/aggregator.md,
 * "Investments": Pluggy's SDK, pluggy-node `src/types/investment.ts`). Every field but the ids, the type and the
 * name may be absent or null, as the SDK's types allow; what else Pluggy sends is left aside. Dates are ISO 8601 text.
 */

/** A field the aggregator may leave out or send as null. */
function Maybe<T extends TSchema> (schema: T) {
  return Type.Optional(Type.Union([schema, Type.Null()]))
}

const AggregatorId = Type.String({ minLength: 1, maxLength: MAX_ID_LENGTH })

/** An investment of an item (`GET /investments?itemId=`): one asset of the portfolio it is imported into. */
export const AggregatorInvestmentSchema = Type.Object({
  id: AggregatorId,
  /** `EQUITY`, `ETF`, `FIXED_INCOME`, `MUTUAL_FUND`, `SECURITY`, `COE`, `OTHER` (and what Pluggy may add). */
  type: Type.String(),
  subtype: Maybe(Type.String()),
  name: Type.String(),
  /** The B3 ticker of an equity or an ETF; a fund's CNPJ… */
  code: Maybe(Type.String()),
  isin: Maybe(Type.String()),
  currencyCode: Maybe(Type.String()),
  /** The day of the institution's figures. */
  date: Maybe(Type.String()),
  /** A quota's value. */
  value: Maybe(Type.Number()),
  quantity: Maybe(Type.Number()),
  /** What it is worth now, net: Pluggy's "real current value". */
  balance: Maybe(Type.Number()),
  /** What it is worth now before taxes. */
  amount: Maybe(Type.Number()),
  /** What was put in it. */
  amountOriginal: Maybe(Type.Number()),
  dueDate: Maybe(Type.String()),
  issuer: Maybe(Type.String()),
  issueDate: Maybe(Type.String()),
  purchaseDate: Maybe(Type.String()),
  rate: Maybe(Type.Number()),
  rateType: Maybe(Type.String()),
  /** `ACTIVE`, `PENDING`, `TOTAL_WITHDRAWAL`. */
  status: Maybe(Type.String())
})
export type AggregatorInvestment = Static<typeof AggregatorInvestmentSchema>

/** A transaction of an investment (`GET /investments/{id}/transactions`). */
export const AggregatorInvestmentTransactionSchema = Type.Object({
  id: AggregatorId,
  /** `BUY`, `SELL`, `TAX`, `TRANSFER`, or null. */
  type: Maybe(Type.String()),
  quantity: Maybe(Type.Number()),
  /** A quota's value: the unit price. */
  value: Maybe(Type.Number()),
  /** What was spent or withdrawn. */
  amount: Maybe(Type.Number()),
  date: Type.String(),
  tradeDate: Maybe(Type.String()),
  /** Taxes and fees, each null or an amount (`brokerageFee`, `incomeTax`, `custodyFee`…). */
  expenses: Maybe(Type.Record(Type.String(), Type.Union([Type.Number(), Type.Null()])))
})
export type AggregatorInvestmentTransaction = Static<typeof AggregatorInvestmentTransactionSchema>
