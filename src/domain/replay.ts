import { afterTrade, NO_POSITION, type Position, type Trade } from '../schemas/average-cost.js'
import { decimal } from '../schemas/money.js'

/**
 * What a position is replayed from (docs/api.md#average-cost): dated entries, each of a kind its `type` tells. A
 * trade (BUY, SELL) is the one kind today; a corporate event (a split, bonus shares, a dividend) is a kind of its own,
 * a member of this union and a case of {@link Replay}'s `apply`, replayed among the trades in the same order. Every
 * position the service computes is replayed here: a write's (src/domain/holdings.ts), the dashboard's at the end of
 * each month, the performance's at each day.
 */
export type Entry = Trade

/** By date; entries of one date keep the order they were given in, which is the order recorded. */
function byDate (a: Entry, b: Entry): number {
  return a.date < b.date ? -1 : a.date > b.date ? 1 : 0
}

/**
 * A position replayed entry by entry in the order they count: by date, then as recorded (`Array#sort` is stable, so
 * entries of one date given in the order recorded — an asset's transactions by `seq`, a new one last — keep it).
 * A sale of more than is held at its date stops the replay: {@link shortAt} is that date, and the position stays
 * what it was before it.
 */
export class Replay {
  private readonly entries: readonly Entry[]
  private next = 0
  private position: Position = NO_POSITION
  private short: string | undefined

  /** `entries` in any order of dates, those of one date in the order recorded. */
  constructor (entries: readonly Entry[]) {
    this.entries = [...entries].sort(byDate)
  }

  /**
   * The position after every entry dated up to `until`, a day (`YYYY-MM-DD`) or a month (`YYYY-MM`), included;
   * after all of them when `until` is absent. Each call goes on from the last: `until` never moves back. A
   * performance calls it for each day of each holding (7 000 days since 2006): compared as text, without a copy.
   */
  through (until?: string): Position {
    // Every day of a month sorts at or before its `-31`, and every day of the next one after it.
    const last = until === undefined || until.length > 7 ? until : `${until}-31`
    for (; this.short === undefined && this.next < this.entries.length; this.next++) {
      const entry = this.entries[this.next] as Entry
      if (last !== undefined && entry.date > last) break
      this.apply(entry)
    }
    return this.position
  }

  /** The date of the first sale of more than was held then, once the replay has reached it. */
  get shortAt (): string | undefined {
    return this.short
  }

  private apply (entry: Entry): void {
    if (entry.type === 'SELL' && decimal(entry.quantity).gt(this.position.quantity)) {
      this.short = entry.date
      return
    }
    this.position = afterTrade(this.position, entry)
  }
}

/** A replay to the end: the position after every entry, or the date of the first sale of more than was held. */
interface Replayed {
  /** After every entry; when one sold more than was held, before that one. */
  after: Position
  shortAt: string | undefined
}

/** Every entry of `entries` replayed (those of one date given in the order recorded). */
export function replay (entries: readonly Entry[]): Replayed {
  const replayed = new Replay(entries)
  return { after: replayed.through(), shortAt: replayed.shortAt }
}
