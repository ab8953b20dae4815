import { Type, type Static } from '@sinclair/typebox'

/**
 * A committed change of a portfolio: its own row (renamed, described, deleted) or one of its
 * assets (created, changed, deleted). `{ kind: 'all' }` says that any portfolio may have changed
 * — the development reset replaced them all, or a link to the other instances was down and
 * their changes may have been missed — so whoever keeps something of a portfolio reads it again.
 * A portfolio's creation is not one: nothing can hold a portfolio before it exists.
 */
export const PortfolioChangeSchema = Type.Union([
  Type.Object({ kind: Type.Literal('portfolio'), portfolioId: Type.String(), deleted: Type.Boolean() }),
  Type.Object({ kind: Type.Literal('all') })
])
export type PortfolioChange = Static<typeof PortfolioChangeSchema>

/** A statement and its parameters: what tells other instances of changes inside a write's transaction. */
interface Announcement {
  sql: string
  parameters: unknown[]
}

/** The change feed's {@link Announcement} of a write's changes (PostgreSQL's `pg_notify`). */
export type Announcer = (changes: readonly PortfolioChange[]) => Announcement

/** Stops a listener: what every `on…` of the change feed answers. */
export type Unsubscribe = () => void

/**
 * Listeners of one kind of event, called in order, each isolated from the others' failures:
 * the writer that emits has committed already and must not fail for a listener.
 */
export class Listeners<T> {
  private readonly listeners = new Set<(value: T) => void>()

  constructor (private readonly onError: (error: unknown) => void = () => {}) {}

  add (listener: (value: T) => void): Unsubscribe {
    // A wrapper per call, so the same function added twice is two listeners, each removed by its own call.
    const entry = (value: T): void => { listener(value) }
    this.listeners.add(entry)
    return () => { this.listeners.delete(entry) }
  }

  emit (value: T): void {
    for (const listener of this.listeners) {
      try {
        listener(value)
      } catch (error) {
        this.onError(error)
      }
    }
  }

  get size (): number {
    return this.listeners.size
  }
}
