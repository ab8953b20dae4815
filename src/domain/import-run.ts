import { errorCodeOf, isCodedError, Messages, NotFoundError } from '../errors.js'
import { dayKey } from '../schemas/calendar.js'
import type { SkippedInvestment } from '../schemas/import.js'
import type { AggregatorInvestments, Reader } from '../upstream/investments.js'
import { principalKey } from './access.js'
import { NOT_YOUR_ITEM } from './item-ownership.js'
import { planOf, tradesOf } from './investments.js'
import type { EventBooks } from './event-books.js'
import { writeInvestment, type ImportTarget } from './investment-writes.js'
import type { JobOutcome } from './jobs.js'
import type { PendingImport } from './background-ports.js'
import type { DataStore, Log } from './ports.js'

/*
 * One attempt of an import (docs/api.md#imports): the item checked again (still there, still the portfolio owner's),
 * its investments read, and each one not written yet by this import read with its transactions and written in one
 * write of the store. An attempt that fails part-way keeps what it wrote; the next goes on after it.
 */

export interface ImportRunDeps {
  store: Pick<DataStore, 'portfolios' | 'imports' | 'write'>
  investments: AggregatorInvestments
  /** The corporate events an investment's position is replayed with, as every write of a position is. */
  events: Pick<EventBooks, 'during'>
}

/** Why an import failed, as its answer says it: the error code of docs/api.md#error-codes and the message. */
export function publicReason (error: unknown): string {
  const { statusCode, message } = (error ?? {}) as { statusCode?: unknown, message?: unknown }
  const status = typeof statusCode === 'number' ? statusCode : 500
  const coded = error !== null && typeof error === 'object' && isCodedError(error) && typeof message === 'string'
  return coded ? `${errorCodeOf(error, status)}: ${message}` : `INTERNAL_ERROR: ${Messages.internal}`
}

const ITEM_GONE = 'NOT_FOUND: O item não existe mais no agregador'
const NOT_THE_OWNERS = `FORBIDDEN_PRINCIPAL: ${NOT_YOUR_ITEM}`
const INVESTMENT_GONE = 'O agregador não lista mais as transações deste investimento'

/** A failure of one investment's write that concerns it alone (a value past the service's bounds): it is skipped. */
function investmentRefused (error: unknown): boolean {
  const { statusCode } = (error ?? {}) as { statusCode?: unknown }
  const coded = error !== null && typeof error === 'object' && isCodedError(error)
  return coded && typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500 &&
    !(error instanceof NotFoundError)
}

/** A whole investment left out, and why. */
function skippedWhole (investmentId: string, reason: string): SkippedInvestment {
  return { investmentId, transactionId: null, reason }
}

/** Records an investment (or one of its transactions) left out, in a write of its own. */
async function recordSkipped (deps: ImportRunDeps, importId: string, skipped: SkippedInvestment): Promise<void> {
  await deps.store.write(async work => {
    const { investmentId } = skipped
    await work.imports.wrote(importId, {
      investmentId, assetsCreated: 0, assetsUpdated: 0, transactionsRecorded: 0, skipped: [skipped]
    })
  })
}

/**
 * One attempt of the import `pending`: `done` once every investment is written or skipped; `abandoned` when the
 * item is gone or not the portfolio owner's; `failed` at the first failed read or write (thrown), which the
 * caller retries. Stops before the next investment once `signal` aborts.
 */
export async function importOnce (
  deps: ImportRunDeps, { record, written }: PendingImport, signal: AbortSignal, log: Log
): Promise<JobOutcome> {
  const portfolio = await deps.store.portfolios.portfolioOnly(record.portfolioId)
  // Deleted since, with its imports: nothing is left to do.
  if (portfolio === undefined) return { result: 'done' }
  // The item's reads spend from the budget, and from the portfolio owner's share of it.
  const reader: Reader = { log, principal: principalKey({ type: 'user', id: portfolio.userId }) }
  const owner = await deps.investments.ownerOf(record.itemId, reader)
  if (owner === undefined) return { result: 'abandoned', reason: ITEM_GONE }
  if (owner !== portfolio.userId) return { result: 'abandoned', reason: NOT_THE_OWNERS }
  const investments = await deps.investments.investments(record.itemId, reader)
  if (investments === undefined) return { result: 'abandoned', reason: ITEM_GONE }
  await deps.store.imports.counted(record.id, investments.length)
  const done = new Set(written)
  const target: ImportTarget = { importId: record.id, portfolioId: portfolio.id, owner: portfolio.userId }
  for (const raw of investments) {
    if (signal.aborted) return { result: 'failed', reason: 'interrompida' }
    const today = dayKey(new Date())
    const plan = planOf(raw, today)
    if (done.has(plan.investmentId)) continue
    done.add(plan.investmentId)
    if ('reason' in plan) {
      await recordSkipped(deps, record.id, plan)
      continue
    }
    const transactions = await deps.investments.transactions(plan.investmentId, reader)
    if (transactions === undefined) {
      // The item deleted meanwhile: the import ends, keeping what it wrote; else this investment alone is gone.
      const gone = await deps.investments.ownerOf(record.itemId, reader) === undefined
      if (gone) return { result: 'abandoned', reason: ITEM_GONE }
      await recordSkipped(deps, record.id, skippedWhole(plan.investmentId, INVESTMENT_GONE))
      continue
    }
    const { trades, skipped } = tradesOf(plan.investmentId, transactions, today)
    try {
      await deps.events.during(async eventsOf => await deps.store.write(async work => {
        await writeInvestment(work, target, plan, trades, skipped, eventsOf)
      }))
    } catch (error) {
      // The portfolio deleted meanwhile: its imports went with it.
      if (error instanceof NotFoundError) return { result: 'done' }
      if (!investmentRefused(error)) throw error
      const reason = publicReason(error)
      log.warn({ investmentId: plan.investmentId, reason }, 'investment skipped: its values are past the bounds')
      await recordSkipped(deps, record.id, skippedWhole(plan.investmentId, reason))
    }
  }
  return { result: 'done' }
}
