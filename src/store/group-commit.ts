import type { Statement, StoreHandle } from './handle.js'

interface Pending {
  statement: Statement<unknown>
  parameters: readonly unknown[]
  resolve: () => void
  reject: (error: unknown) => void
}

/**
 * Group commit for single-statement writes on SQLite: the writes asked for in one event-loop turn
 * are committed in one transaction at the end of the turn, and each caller's promise settles only
 * once that transaction has committed — an acknowledged write is as durable as one committed
 * alone. SQLite's one connection otherwise commits each write by itself, appending every page it
 * touched to the WAL again: 50 concurrent creates made about 7 300 commits a second; grouped,
 * 16 100 (`wrk`, the service pinned to one core, production configuration).
 *
 * If one statement of a group fails, the transaction is rolled back and every write of the group
 * runs again alone, so only the one that fails is refused. PostgreSQL commits concurrent
 * transactions from its pool by itself: there each write runs alone at once.
 */
export class GroupCommit {
  private pending: Pending[] | undefined

  constructor (private readonly handle: StoreHandle) {}

  async run (statement: Statement<unknown>, parameters: readonly unknown[]): Promise<void> {
    if (this.handle.engine !== 'sqlite') {
      await statement(parameters)
      this.handle.wrote()
      return
    }
    await new Promise<void>((resolve, reject) => {
      if (this.pending === undefined) {
        const group: Pending[] = []
        this.pending = group
        setImmediate(() => {
          this.pending = undefined
          /* c8 ignore next 2 -- commit settles every write itself; were it to throw, none may be left waiting */
          const refuseAll = (error: unknown): void => { for (const write of group) write.reject(error) }
          this.commit(group).catch(refuseAll)
        })
      }
      this.pending.push({ statement, parameters, resolve, reject })
    })
  }

  private async commit (group: Pending[]): Promise<void> {
    try {
      await this.handle.write(async trx => {
        for (const write of group) await write.statement(write.parameters, trx)
      })
    } catch {
      // Nothing of the group was written: each write alone, so that only a failing one fails.
      for (const write of group) await this.alone(write)
      return
    }
    for (const write of group) write.resolve()
  }

  private async alone (write: Pending): Promise<void> {
    try {
      await write.statement(write.parameters)
      this.handle.wrote()
      write.resolve()
    } catch (error) {
      write.reject(error)
    }
  }
}
