import { ForbiddenOtherItemError, NotFoundError, NotFoundFeminineError } from '../errors.js'
import { pageOf } from '../schemas/common.js'
import type { InvestmentImport } from '../schemas/import.js'
import type { Portfolio } from '../schemas/portfolio.js'
import { NO_TELEMETRY, type Telemetry } from '../observability/telemetry.js'
import type { AggregatorInvestments } from '../upstream/investments.js'
import { principalKey, type Access } from './access.js'
import { found, type PageRequest } from './common.js'
import { importOnce, publicReason, type ImportRunDeps } from './import-run.js'
import type { JobKind, JobOutcome, JobRunner } from './jobs.js'
import { ifReached } from './ownership.js'
import type { Job } from './background-ports.js'
import type { DataStore, Log, UnitOfWork } from './ports.js'

/** The queue's kind of an item's investment import, keyed by the item: never two of one item at once. */
export const IMPORT = 'import'

export interface ImportOptions {
  /** Failed attempts after which an import ends failed (IMPORT_ATTEMPTS). */
  attempts: number
  /** The first retry's delay (ms), doubling (IMPORT_RETRY_MS). */
  retryMs: number
  /** How long after a verified `item/updated` its import begins (ms): the events of that while make one. */
  delayMs: number
}

export const IMPORT_DEFAULTS: ImportOptions = { attempts: 5, retryMs: 30_000, delayMs: 60_000 }

export interface ImportDeps extends ImportRunDeps {
  store: Pick<DataStore, 'portfolios' | 'imports' | 'write'>
  investments: AggregatorInvestments
  runner: () => JobRunner
  telemetry?: Telemetry
}

const missingPortfolio = (): Error => new NotFoundError('Portfolio')
const missingImport = (): Error => new NotFoundFeminineError('Importação')
const REPLACED = 'Substituída por uma importação do item para outra carteira'

const isoAt = (ms: number): string => new Date(ms).toISOString()

/**
 * Investments imported from the investor's institution through the aggregator (docs/api.md#imports), within the
 * caller's portfolio scope: an item's import asked for a portfolio of the item's owner, run in the background from
 * the queue (src/domain/jobs.ts: one job per item, so never two imports of one item at once), and asked again
 * after each verified `item/updated` of an item an import linked to a portfolio. The rules of asking: one import
 * of an item queued at most — asked again, it is the one answered; one running at most, and one queued after it.
 */
export class ImportService {
  /** How the queue runs an import. */
  readonly kind: JobKind
  private readonly telemetry: Telemetry

  constructor (private readonly deps: ImportDeps, private readonly options = IMPORT_DEFAULTS) {
    this.telemetry = deps.telemetry ?? NO_TELEMETRY
    this.kind = {
      retryMs: options.retryMs,
      attempts: options.attempts,
      run: async (job, signal, log) => await this.run(job, signal, log),
      failed: async (job, reason, next, log) => { await this.failed(job, reason, next, log) }
    }
  }

  /** Asks for an import of `itemId` into the portfolio: an item known (else 404), the portfolio owner's (else 403). */
  async request (access: Access, portfolioId: string, itemId: string, log: Log): Promise<InvestmentImport> {
    const portfolio = await this.portfolio(access, portfolioId)
    const owner = await this.deps.investments.ownerOf(itemId, {
      log, principal: principalKey({ type: 'user', id: portfolio.userId })
    })
    if (owner === undefined) throw new NotFoundError('Item')
    if (owner !== portfolio.userId) throw new ForbiddenOtherItemError()
    const { record } = await this.deps.store.write(async work => {
      // The portfolio's row first, as every write that asks for an import takes it: deleted meanwhile, 404.
      if (await work.portfolios.lockForWrite(portfolio.id) === undefined) throw missingPortfolio()
      return await this.ask(work, portfolio.id, itemId, work.now, false)
    })
    this.deps.runner().wake()
    log.info({ importId: record.id, portfolioId, itemId }, 'investment import asked for')
    return record
  }

  /** A page of the portfolio's imports, the latest first. */
  async list (access: Access, portfolioId: string, page: PageRequest): Promise<InvestmentImport[]> {
    const portfolio = await this.portfolio(access, portfolioId)
    return await this.deps.store.imports.ofPortfolio(portfolio.id, pageOf(page))
  }

  async get (access: Access, portfolioId: string, importId: string): Promise<InvestmentImport> {
    const portfolio = await this.portfolio(access, portfolioId)
    return await found(importId, missingImport, async id => {
      const record = await this.deps.store.imports.get(id)
      return record?.portfolioId === portfolio.id ? record : undefined
    })
  }

  /**
   * After a verified `item/updated`: the item is imported again into the portfolio its latest import went into,
   * `delayMs` later (the events about it meanwhile make that one import), unless an import of it is queued already.
   */
  async afterItemUpdated (itemId: string, log: Log): Promise<void> {
    const portfolioId = await this.deps.store.imports.linkedPortfolio(itemId)
    if (portfolioId === undefined) return
    const asked = await this.deps.store.write(async work => {
      if (await work.portfolios.lockForWrite(portfolioId) === undefined) return undefined
      return await this.ask(work, portfolioId, itemId, isoAt(Date.parse(work.now) + this.options.delayMs), true)
    })
    if (asked?.queued !== true) return
    log.info({ importId: asked.record.id, portfolioId, itemId, delayMs: this.options.delayMs },
      'investment import asked for after item/updated')
    if (this.options.delayMs === 0) this.deps.runner().wake()
  }

  private async portfolio (access: Access, portfolioId: string): Promise<Portfolio> {
    const scope = await access.portfolioScope()
    return await found(portfolioId, missingPortfolio, async id =>
      ifReached(scope, await this.deps.store.portfolios.portfolioOnly(id), read => read.userId))
  }

  /**
   * The rules of asking, decided on the item's job read under its lock (so two instances asking at once make one
   * import): an import of the item queued for the portfolio is the one answered (made due by `dueAt` when the
   * investor asked; left as it is after an `item/updated`: it will read the latest); else a new one is queued,
   * after the one running if any. Answers the import, and whether a new one was queued.
   */
  private async ask (
    work: UnitOfWork, portfolioId: string, itemId: string, dueAt: string, afterUpdate: boolean
  ): Promise<{ record: InvestmentImport, queued: boolean }> {
    const { job, inserted } = await work.jobs.lockOrInsert({
      kind: IMPORT,
      key: itemId,
      payload: {},
      attempts: 0,
      nextAttemptAt: dueAt,
      expiresAt: null,
      lastError: null,
      requestedAt: work.now
    })
    const sooner = job.state === 'queued' && job.nextAttemptAt < dueAt ? job.nextAttemptAt : dueAt
    const queued = inserted ? undefined : await work.imports.queuedOf(itemId)
    if (queued?.portfolioId === portfolioId) {
      if (!afterUpdate) await work.jobs.request(IMPORT, itemId, { requestedAt: work.now, nextAttemptAt: sooner })
      return { record: queued, queued: false }
    }
    // An item's updates go to one portfolio: the one its latest import went into.
    if (queued !== undefined) await work.imports.fail(queued.id, REPLACED)
    const record = await work.imports.insert(portfolioId, itemId)
    if (!inserted) await work.jobs.request(IMPORT, itemId, { requestedAt: work.now, nextAttemptAt: sooner })
    return { record, queued: true }
  }

  /** One attempt of the item's first import not ended. */
  private async run (job: Job, signal: AbortSignal, log: Log): Promise<JobOutcome> {
    const { imports } = this.deps.store
    const pending = await imports.pendingOf(job.key)
    if (pending === undefined) return { result: 'done' }
    const { record } = pending
    const runLog = log.child({ importId: record.id, portfolioId: record.portfolioId, itemId: record.itemId })
    await imports.start(record.id, new Date().toISOString())
    let outcome: JobOutcome
    try {
      outcome = await importOnce(this.deps, pending, signal, runLog)
    } catch (error) {
      runLog.warn({ err: error }, 'investment import attempt failed')
      const { retryAfterSeconds } = (error ?? {}) as { retryAfterSeconds?: unknown }
      // A 429 (the aggregator's, or its budget spent) says when to come back: no failure of the import's.
      outcome = typeof retryAfterSeconds === 'number'
        ? { result: 'failed', reason: publicReason(error), retryAfterMs: retryAfterSeconds * 1000, counted: false }
        : { result: 'failed', reason: publicReason(error) }
    }
    if (outcome.result === 'done') {
      this.ended(await imports.finish(record.id, 'done', new Date().toISOString(), null), runLog)
      return outcome
    }
    // Asked for again while it ran, the job is not retried (src/store/jobs.ts): this import ends failed, and the
    // newer one, which reads it all again, runs next.
    return outcome
  }

  /** An attempt that did not end the import: queued again with its error, or ended failed. */
  private async failed (job: Job, reason: string, next: string | undefined, log: Log): Promise<void> {
    const { imports } = this.deps.store
    const pending = await imports.pendingOf(job.key)
    if (pending?.record.status !== 'running') return
    const { record } = pending
    const runLog = log.child({ importId: record.id, portfolioId: record.portfolioId, itemId: record.itemId })
    if (next !== undefined) {
      await imports.retrying(record.id, reason)
      runLog.warn({ reason, attempts: job.attempts + 1, nextAttemptAt: next }, 'investment import: retried later')
      return
    }
    this.ended(await imports.finish(record.id, 'failed', new Date().toISOString(), reason), runLog)
  }

  /** One log line per import, with its counts, and its metrics. */
  private ended (record: InvestmentImport | undefined, log: Log): void {
    if (record === undefined) return
    const { status, counts, error, startedAt, finishedAt } = record
    const seconds = (Date.parse(finishedAt ?? '') - Date.parse(startedAt ?? '')) / 1000
    this.telemetry.investmentImport(status === 'done' ? 'done' : 'failed', seconds, counts.investments)
    const line = { status, counts, error, durationMs: Math.round(seconds * 1000) }
    if (status === 'done') log.info(line, 'investment import done')
    else log.warn(line, 'investment import failed')
  }
}
