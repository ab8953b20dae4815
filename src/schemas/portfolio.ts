import { Type, type Static } from '@sinclair/typebox'
import { AtLeastOneOf, NonBlankString, PageQuerySchema, Timestamp, TimestampOf } from './common.js'

/** A portfolio (docs/api.md#resources); `totalValue` is the sum of its assets' `totalValue` (docs/api.md#money). */
export const PortfolioSchema = Type.Object({
  id: Type.String({ description: 'The portfolio\'s id (a UUID)' }),
  name: Type.String({ description: 'Its name, 1 to 200 characters' }),
  description: Type.Union([Type.String(), Type.Null()], { description: 'What it is for, at most 2000 characters' }),
  userId: Type.String({ description: 'The user who owns it' }),
  totalValue: Type.Number({ description: 'The sum of its assets\' totalValue, in BRL with 2 decimals' }),
  createdAt: Timestamp,
  updatedAt: TimestampOf('Its last change, its assets\' included')
}, { title: 'Portfolio', description: 'An investment portfolio of one user' })
export type Portfolio = Static<typeof PortfolioSchema>

/** `POST /portfolios` answers the portfolio without `updatedAt` (docs/api.md#resources). */
export const CreatedPortfolioSchema = Type.Omit(PortfolioSchema, ['updatedAt'], { title: 'CreatedPortfolio' })

/** An asset as `GET /portfolios/:id` lists it inside its portfolio. */
export const PortfolioAssetSummarySchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  symbol: Type.String(),
  quantity: Type.Number(),
  price: Type.Number()
}, { title: 'PortfolioAssetSummary' })

export const PortfolioDetailSchema = Type.Composite([
  Type.Pick(PortfolioSchema, ['id', 'name', 'description', 'userId', 'totalValue']),
  Type.Object({ assets: Type.Array(PortfolioAssetSummarySchema) })
], { title: 'PortfolioDetail' })
export type PortfolioDetail = Static<typeof PortfolioDetailSchema>

export const PortfolioValueSchema = Type.Object({
  portfolioId: Type.String(),
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
