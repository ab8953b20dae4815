import { Type } from '@sinclair/typebox'
import { PageQuerySchema } from '../../schemas/common.js'

export const ListPortfoliosQuerySchema = Type.Composite([
  PageQuerySchema,
  Type.Object({ userId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })) })
])
