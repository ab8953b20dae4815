import { Type, type Static } from '@sinclair/typebox'
import {
  AtLeastOneOf, NonBlankString, PageQuerySchema, RecordId, StoredText, Timestamp, TimestampOf
} from './common.js'

/** A portfolio (docs/api.md#resources); `totalValue` is the sum of its assets' `totalValue` (docs/api.md#money). */
export const PortfolioSchema = Type.Object({
  id: RecordId('The portfolio\'s id (a UUID)'),
  name: StoredText(200, 'Its name, 1 to 200 characters'),
  description: Type.Union([StoredText(2000), Type.Null()], { description: 'What it is for, at most 2000 characters' }),
  userId: StoredText(200, 'The user who owns it'),
  totalValue: Type.Number({ description: 'The sum of its assets\' totalValue, in BRL with 2 decimals' }),
  createdAt: Timestamp,
  updatedAt: TimestampOf('Its last change, its assets\' included')
}, { title: 'Portfolio', description: 'An investment portfolio of one user' })
export type Portfolio = Static<typeof PortfolioSchema>

/** `POST /portfolios` answers the portfolio without `updatedAt` (docs/api.md#resources). */
export const CreatedPortfolioSchema = Type.Omit(PortfolioSchema, ['updatedAt'], { title: 'CreatedPortfolio' })

/** An asset as `GET /portfolios/:id` lists it inside its portfolio. */
export const PortfolioAssetSummarySchema = Type.Object({
  id: RecordId(),
  name: StoredText(200),
  symbol: StoredText(200),
  quantity: Type.Number(),
  price: Type.Number()
}, { title: 'PortfolioAssetSummary' })

/** `GET /portfolios/:id`: the portfolio without its timestamps, with its assets. */
export const PortfolioDetailSchema = Type.Composite([
  Type.Omit(PortfolioSchema, ['createdAt', 'updatedAt']),
  Type.Object({ assets: Type.Array(PortfolioAssetSummarySchema) })
], { title: 'PortfolioDetail' })
export type PortfolioDetail = Static<typeof PortfolioDetailSchema>

export const PortfolioValueSchema = Type.Object({
  portfolioId: RecordId(),
  totalValue: Type.Number(),
  currency: Type.Literal('BRL'),
  lastUpdate: Timestamp
}, { title: 'PortfolioValue' })
export type PortfolioValue = Static<typeof PortfolioValueSchema>

/**
 * A portfolio's value: its total in BRL, as of its last change (asset writes touch their
 * portfolio's `updatedAt`, so its assets' included) — REST's `/value` and GraphQL's `value`.
 */
export function portfolioValue (
  { id, totalValue, updatedAt }: Pick<Portfolio, 'id' | 'totalValue' | 'updatedAt'>
): PortfolioValue {
  return { portfolioId: id, totalValue, currency: 'BRL', lastUpdate: updatedAt }
}

const Description = Type.String({ maxLength: 2000 })

export const CreatePortfolioInputSchema = Type.Object({
  name: NonBlankString(200),
  description: Type.Optional(Type.Union([Description, Type.Null()])),
  userId: NonBlankString(200)
}, {
  title: 'CreatePortfolioInput',
  examples: [{ name: 'Aposentadoria', description: 'Carteira de longo prazo', userId: '42' }]
})
export type CreatePortfolioInput = Static<typeof CreatePortfolioInputSchema>

export const UpdatePortfolioInputSchema = AtLeastOneOf(Type.Object({
  name: Type.Optional(NonBlankString(200)),
  description: Type.Optional(Type.Union([Description, Type.Null()]))
}, { title: 'UpdatePortfolioInput', examples: [{ name: 'Aposentadoria 2040' }] }))
export type UpdatePortfolioInput = Static<typeof UpdatePortfolioInputSchema>

/** `GET /portfolios` and GraphQL's `portfolios`: a page, optionally of one user. */
export const ListPortfoliosQuerySchema = Type.Composite([
  PageQuerySchema,
  Type.Object({ userId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })) })
])
