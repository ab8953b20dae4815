import t from 'tap'
import { Replay, replay } from '../../src/domain/replay.js'
import type { Position, Trade } from '../../src/schemas/average-cost.js'

const buy = (date: string, quantity: number, price: number): Trade => ({ type: 'BUY', date, quantity, price, fee: 0 })
const sell = (date: string, quantity: number, price: number): Trade => ({ type: 'SELL', date, quantity, price, fee: 1 })

/** A position's figures as numbers. */
function figures (position: Position): { quantity: number, cost: number, realized: number, fees: number } {
  return {
    quantity: position.quantity.toNumber(),
    cost: position.cost.toNumber(),
    realized: position.realized.toNumber(),
    fees: position.fees.toNumber()
  }
}

t.test('entries count by date, then in the order given (as recorded), whatever order their dates came in', async t => {
  // Recorded: a buy, then a sale back-dated before it, then a buy of the sale's day.
  const recorded = [buy('2024-03-01', 10, 10), sell('2024-02-01', 4, 12), buy('2024-02-01', 5, 8)]
  t.same(replay(recorded).shortAt, '2024-02-01', 'the sale counts before the buy recorded after it on its day')
  const reordered = [buy('2024-03-01', 10, 10), buy('2024-02-01', 5, 8), sell('2024-02-01', 4, 12)]
  const { after, shortAt } = replay(reordered)
  t.equal(shortAt, undefined)
  // 5 at 8, 4 sold at 12 (realized 16), 1 left at 8, then 10 at 10: 11 held for 108.
  t.same(figures(after), { quantity: 11, cost: 108, realized: 16, fees: 1 })
})

t.test('a sale of more than is held stops the replay at it: the position before it, its date', async t => {
  const replayed = replay([buy('2024-01-10', 2, 5), sell('2024-01-20', 3, 6), buy('2024-01-30', 10, 1)])
  t.equal(replayed.shortAt, '2024-01-20')
  t.same(figures(replayed.after), { quantity: 2, cost: 10, realized: 0, fees: 0 }, 'nothing after it applied either')
  t.equal(replay([buy('2024-01-10', 2, 5), sell('2024-01-20', 2, 6)]).shortAt, undefined, 'selling all is no short')
  t.same(figures(replay([]).after), { quantity: 0, cost: 0, realized: 0, fees: 0 })
})

t.test('a replay goes on from where it stopped: through a month, or through a day, included', async t => {
  const position = new Replay([buy('2024-01-31', 1, 10), buy('2024-02-01', 1, 20), buy('2024-02-29', 2, 30)])
  t.equal(position.through('2023-12').quantity.toNumber(), 0)
  t.equal(position.through('2024-01').quantity.toNumber(), 1, 'the month\'s last day included')
  t.equal(position.through('2024-02-28').quantity.toNumber(), 2, 'a day')
  t.equal(position.through('2024-02-29').quantity.toNumber(), 4, 'the day included')
  t.equal(position.through().cost.toNumber(), 90, 'to the end')
  t.equal(position.shortAt, undefined)
})
