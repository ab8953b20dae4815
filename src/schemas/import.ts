import { Type, type Static } from '@sinclair/typebox'
import { IdSchema, ItemIdSchema, RecordId, StoredText, StringEnum, Timestamp, TimestampOf } from './common.js'

/** How an import stands (docs/api.md#imports): waiting (or waiting to be tried again), under way, ended. */
export const IMPORT_STATUSES = ['queued', 'running', 'done', 'failed'] as const
export type ImportStatus = typeof IMPORT_STATUSES[number]

/** The longest reason an import gives for an investment or a transaction it left out. */
export const SKIP_REASON_LENGTH = 300

/** An investment, or one of its transactions, that an import left out, and why. */
export const SkippedInvestmentSchema = Type.Object({
  investmentId: RecordId('The aggregator\'s investment'),
  transactionId: Type.Union([RecordId(), Type.Null()], {
    description: 'The aggregator\'s investment transaction left out; null when the whole investment was'
  }),
  reason: StoredText(SKIP_REASON_LENGTH, 'Why, for people')
}, { title: 'SkippedInvestment' })
export type SkippedInvestment = Static<typeof SkippedInvestmentSchema>

const Count = (description: string) => Type.Integer({ minimum: 0, maximum: 2 ** 31 - 1, description })

/** Entries of `skipped` an answer lists at most; `counts.skipped` counts them all. */
export const MAX_SKIPPED_LISTED = 1000

/** What an import did so far: each count grows as each investment is written. */
export const ImportCountsSchema = Type.Object({
  investments: Count('The item\'s investments the aggregator listed'),
  assetsCreated: Count('Assets created, one per investment not imported into the portfolio before'),
  assetsUpdated: Count('Assets of investments imported before that this import changed'),
  transactionsRecorded: Count('Transactions recorded: the institution\'s buys and sales not recorded before, and ' +
    'estimated ones'),
  skipped: Count('Entries of skipped')
}, { title: 'ImportCounts' })
export type ImportCounts = Static<typeof ImportCountsSchema>

/** An import of an aggregator item's investments into a portfolio (docs/api.md#imports). */
export const InvestmentImportSchema = Type.Object({
  id: RecordId('The import\'s id (a UUID)'),
  portfolioId: RecordId('The portfolio imported into'),
  itemId: RecordId('The aggregator item whose investments are imported'),
  status: StringEnum(IMPORT_STATUSES),
  createdAt: TimestampOf('When it was asked for'),
  startedAt: Type.Union([Timestamp, Type.Null()], { description: 'When it first began; null while queued' }),
  finishedAt: Type.Union([Timestamp, Type.Null()], { description: 'When it ended (done or failed); null before' }),
  counts: ImportCountsSchema,
  skipped: Type.Array(SkippedInvestmentSchema, {
    maxItems: MAX_SKIPPED_LISTED,
    description: 'What it left out and why: investments it cannot hold, transactions that are no buy or sale ' +
      `(the first ${MAX_SKIPPED_LISTED}; counts.skipped counts them all)`
  }),
  error: Type.Union([StoredText(SKIP_REASON_LENGTH), Type.Null()], {
    description: 'Why it failed (failed), or why its last attempt did (queued again, retried later); null otherwise'
  })
}, { title: 'InvestmentImport', description: 'An import of an aggregator item\'s investments into a portfolio' })
export type InvestmentImport = Static<typeof InvestmentImportSchema>

/** `POST /portfolios/:id/imports`: the aggregator item to import. */
export const ImportInputSchema = Type.Object({
  itemId: ItemIdSchema
}, { title: 'ImportInput', examples: [{ itemId: '3a1c2f64-6ef2-4c0f-9d8b-2a54c8a8f0d1' }] })
export type ImportInput = Static<typeof ImportInputSchema>

/** `GET /portfolios/:id/imports/:importId`. */
export const ImportParamsSchema = Type.Object({ id: IdSchema, importId: IdSchema })
