import { Type, type Static } from '@sinclair/typebox'
import { NonBlankString, PageQuerySchema, Timestamp } from '../../schemas.js'

/** Portfolio of spec §2.1; `totalValue` is the sum of its assets' `quantity × price`. */
export const PortfolioSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  userId: Type.String(),
  totalValue: Type.Number(),
  createdAt: Timestamp,
  updatedAt: Timestamp
})
export type Portfolio = Static<typeof PortfolioSchema>

export const CreatedPortfolioSchema = Type.Omit(PortfolioSchema, ['updatedAt'])

export const PortfolioAssetSummarySchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  symbol: Type.String(),
  quantity: Type.Number(),
  price: Type.Number()
})

export const PortfolioDetailSchema = Type.Composite([
  Type.Pick(PortfolioSchema, ['id', 'name', 'description', 'userId', 'totalValue']),
  Type.Object({ assets: Type.Array(PortfolioAssetSummarySchema) })
])
export type PortfolioDetail = Static<typeof PortfolioDetailSchema>

export const PortfolioValueSchema = Type.Object({
  portfolioId: Type.String(),
  totalValue: Type.Number(),
  currency: Type.Literal('BRL'),
  lastUpdate: Timestamp
})
export type PortfolioValue = Static<typeof PortfolioValueSchema>

const Description = Type.String({ maxLength: 2000 })

export const CreatePortfolioBodySchema = Type.Object({
  name: NonBlankString(200),
  description: Type.Optional(Type.Union([Description, Type.Null()])),
  userId: NonBlankString(200)
})
export type CreatePortfolioBody = Static<typeof CreatePortfolioBodySchema>

export const UpdatePortfolioBodySchema = Type.Object({
  name: Type.Optional(NonBlankString(200)),
  description: Type.Optional(Type.Union([Description, Type.Null()]))
})
export type UpdatePortfolioBody = Static<typeof UpdatePortfolioBodySchema>

export const ListPortfoliosQuerySchema = Type.Composite([
  PageQuerySchema,
  Type.Object({ userId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })) })
])
