import { decimal, quotient, UNIT_DECIMALS, type Decimal } from './money.js'
import type { TransactionType } from './transaction.js'

/** What a position is made of: a dated buy or sale (a stored transaction, or one about to be). */
export interface Trade {
  type: TransactionType
  /** `YYYY-MM-DD`. */
  date: string
  quantity: number
  price: number
  fee: number
}

/**
 * What is held after some trades, at average cost (docs/api.md#average-cost), in exact decimals:
 * nothing here is rounded but the average price itself.
 */
export interface Position {
  quantity: Decimal
  /** What the quantity held cost: buys add quantity × price; a sale leaves quantity × average price. */
  cost: Decimal
  /** The sales' results: quantity × (price − average price) each, fees apart. */
  realized: Decimal
  /** Every trade's fee. */
  fees: Decimal
}

export const NO_POSITION: Position = { quantity: decimal(0), cost: decimal(0), realized: decimal(0), fees: decimal(0) }

/** The average price of what is held: cost / quantity to 8 decimals, half away from zero; 0 when nothing is held. */
export function averagePrice (position: Position): Decimal {
  return position.quantity.eq(0) ? decimal(0) : quotient(position.cost, position.quantity, UNIT_DECIMALS)
}

/**
 * The position after `trade`. A buy adds its quantity and its quantity × price to the cost. A sale
 * takes its quantity at the average price: its result is quantity × (price − average price), and
 * what is left costs its quantity × the average price, so a sale never changes the average price.
 * A sale of no more than is held: the domain's replay (src/domain/replay.ts) stops before any other.
 */
export function afterTrade (position: Position, trade: Trade): Position {
  const fees = position.fees.plus(trade.fee)
  if (trade.type === 'BUY') {
    return {
      quantity: position.quantity.plus(trade.quantity),
      cost: position.cost.plus(decimal(trade.quantity).times(trade.price)),
      realized: position.realized,
      fees
    }
  }
  const quantity = position.quantity.minus(trade.quantity)
  const average = averagePrice(position)
  return {
    quantity,
    cost: quantity.times(average),
    realized: position.realized.plus(decimal(trade.quantity).times(decimal(trade.price).minus(average))),
    fees
  }
}
